/* metrics_observer.c — the metrics of generations, taken from the records service's lifecycle
 * events (records/records.h) rather than from the code that generates: a process-wide
 * observer counts every generation this process ends (kind, provider, outcome and its
 * duration) and keeps the openai provider's last outcome for /readyz. */
#include "records/metrics_observer.h"

#include "obs/metrics.h"

#include <string.h>

static void on_event(void *arg, const rev_t *ev)
{
    if ((ev->type != REV_COMPLETED && ev->type != REV_FAILED) || !ev->provider)
        return; /* a generation ends with a provider's name; replays carry none */
    bool ok = ev->type == REV_COMPLETED;
    if (strcmp(ev->provider, "openai") == 0)
        metrics_provider_outcome(ok); /* first: whoever sees the count sees this too */
    metrics_generation(ev->kind == KIND_IMG ? MK_IMAGE : MK_DOCUMENT, ev->provider,
                       ok ? MO_COMPLETED : MO_FAILED, ev->duration_s);
    if (ok && ev->rec) /* what it used (§19) */
        metrics_usage(ev->provider, ev->kind == KIND_DOC ? ev->rec->words : 0,
                      ev->kind == KIND_IMG ? 1 : 0, ev->rec->prompt_tokens,
                      ev->rec->completion_tokens);
}

void obs_observe_records(records_t *s)
{
    records_observe(s, on_event, NULL);
}
