/* sweeper.h — the media directory swept while serving, on both backends.
 *
 * A kill -9 (or a lost database) between a picture's write and its record's commit
 * leaves a temporary file (".<key>.tmp-*") or a picture no record refers to. The start
 * sweep (main.c) only ran at start; with several processes on one PostgreSQL database
 * and one media directory none of them may restart for long. The sweeper is a thread
 * that, every interval seconds, removes the temporary files and
 * the unreferenced pictures older than age seconds (--media-sweep-age): a picture is
 * committed within the few seconds its record's write takes, so a file older than the
 * age (minutes) whose key no committed record holds, as read after the age was
 * counted from, cannot belong to a write still in progress on any process. */
#ifndef INK_MEDIA_SWEEPER_H
#define INK_MEDIA_SWEEPER_H

#include "media/media.h"
#include "store/store.h"

typedef struct media_sweeper media_sweeper_t;

/* Sweeps every interval_s seconds (0: never; the start sweep is main.c's, before the
 * server serves: media_sweep_once). */
media_sweeper_t *media_sweeper_start(media_t *m, store_t *store, double age_s, double interval_s);
void media_sweeper_stop(media_sweeper_t *s);
/* One sweep in the calling thread (with its store connection). Returns files removed. */
int media_sweep_once(media_t *m, store_t *store, double age_s);

#endif
