/* writer.h — group commit of finished documents.
 *
 * When the generator runs inside the creating request (provider_t.text_inline), the
 * request hands its finished document to the writer and suspends. One writer thread
 * stores everything queued so far in one transaction (store.docs_create_completed)
 * and then wakes each request with the outcome. Alone, a create gets a commit of its
 * own; under load, the creates that arrive while a commit runs share the next one,
 * which is most of the cost of a create (a commit writes the same index, counter and
 * sequence pages whether it holds one document or fifty). */
#ifndef INK_STORE_WRITER_H
#define INK_STORE_WRITER_H

#include "store/store.h"

typedef struct writer writer_t;
typedef void (*writer_wake_fn)(void *arg);

/* One queued document. It stays in the caller's memory until wake is called. */
typedef struct writer_item {
    record_t *rec; /* in: the document, result and words set; out: id, state, times */
    idem_keep_t *keep; /* in: its Idempotency-Key answer, kept in the same transaction */
    int rc;        /* out: STORE_OK, or why nothing was stored */
    writer_wake_fn wake;
    void *arg;
    struct writer_item *next; /* the writer's */
} writer_item_t;

/* max_batch: most documents in one transaction. NULL if the thread cannot start. */
writer_t *writer_start(store_t *store, int max_batch);
/* Queues the item; wake(arg) is called exactly once, from the writer thread, after
 * its transaction ended. */
void writer_submit(writer_t *w, writer_item_t *it);
/* Stores what is queued, then stops the thread and frees the writer. Call it once
 * nothing can submit any more (the HTTP server has stopped). */
void writer_stop(writer_t *w);

#endif
