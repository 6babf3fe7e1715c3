/* observe.h — connects the metrics (obs/metrics.h) to the records service's events. */
#ifndef INK_OBS_OBSERVE_H
#define INK_OBS_OBSERVE_H

#include "records/records.h"

/* Registers the metrics observer; call once at start-up, after records_start. */
void obs_observe_records(records_t *s);

#endif
