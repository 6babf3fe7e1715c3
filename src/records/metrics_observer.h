/* metrics_observer.h — connects the metrics (obs/metrics.h) to the records service's events. */
#ifndef INK_RECORDS_METRICS_OBSERVER_H
#define INK_RECORDS_METRICS_OBSERVER_H

#include "records/records.h"

/* Registers the metrics observer; call once at start-up, after records_start. (Here,
 * not in obs/: the metrics know nothing of records; the records service feeds them.) */
void obs_observe_records(records_t *s);

#endif
