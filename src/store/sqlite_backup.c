/* sqlite_backup.c — `inkwell backup` for SQLite (store_sqlite_backup in store.h):
 * SQLite's online backup API copies the database page by page from a read snapshot,
 * so it is consistent while a server writes (WAL mode: readers and the writer do not
 * block each other; a step that meets a lock waits and goes on). The copy goes to a
 * temporary file beside the destination, is synced, and renamed into place, so the
 * destination is a whole backup or nothing. */
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define BACKUP_PAGES_PER_STEP 256 /* pages copied between two releases of the read lock */

static int fsync_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static int copy_db(sqlite3 *src, const char *tmp, char *err, size_t errlen)
{
    sqlite3 *dst = NULL;
    int rc = sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, sqlite3_errstr(rc));
        sqlite3_close(dst);
        return -1;
    }
    sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
    if (!b) {
        snprintf(err, errlen, "cannot start the backup: %s", sqlite3_errmsg(dst));
        sqlite3_close(dst);
        return -1;
    }
    do {
        rc = sqlite3_backup_step(b, BACKUP_PAGES_PER_STEP);
        if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
            sqlite3_sleep(20);
    } while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
    sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "backup failed: %s", sqlite3_errstr(rc));
        sqlite3_close(dst);
        return -1;
    }
    /* a self-contained file: no WAL beside it */
    sqlite3_exec(dst, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
    rc = sqlite3_close(dst);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot close the backup: %s", sqlite3_errstr(rc));
        return -1;
    }
    return 0;
}

/* Calls each_key for every picture the backup refers to. */
static int list_media(const char *path, void (*each_key)(void *, const char *), void *arg,
                      char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    /* the pictures of every revision too (§16); a database from before migration 10
     * has only the images' own */
    if (rc == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT media_key FROM images WHERE media_key IS NOT NULL UNION "
                               "SELECT media_key FROM image_revisions WHERE media_key IS NOT NULL",
                           -1, &st, NULL) != SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "SELECT media_key FROM images WHERE media_key IS NOT NULL",
                                -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        rc = (each_key(arg, (const char *)sqlite3_column_text(st, 0)), SQLITE_OK);
    int out = rc == SQLITE_DONE ? 0 : -1;
    if (out)
        snprintf(err, errlen, "cannot read the backup's pictures: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

int store_sqlite_backup(const char *db_path, const char *dest,
                        void (*each_key)(void *, const char *), void *arg, char *err,
                        size_t errlen)
{
    sqlite3 *src = NULL;
    int rc = sqlite3_open_v2(db_path, &src, SQLITE_OPEN_READWRITE, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot open the database %s: %s", db_path, sqlite3_errstr(rc));
        sqlite3_close(src);
        return -1;
    }
    sqlite3_busy_timeout(src, 5000);
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", dest, (long)getpid()) >= sizeof(tmp)) {
        snprintf(err, errlen, "backup path too long");
        sqlite3_close(src);
        return -1;
    }
    unlink(tmp);
    int r = copy_db(src, tmp, err, errlen);
    sqlite3_close(src);
    if (r == 0 && fsync_path(tmp) != 0) {
        snprintf(err, errlen, "cannot sync %s: %s", tmp, strerror(errno));
        r = -1;
    }
    if (r == 0 && rename(tmp, dest) != 0) {
        snprintf(err, errlen, "cannot rename the backup to %s: %s", dest, strerror(errno));
        r = -1;
    }
    if (r != 0) {
        unlink(tmp);
        return -1;
    }
    return each_key ? list_media(dest, each_key, arg, err, errlen) : 0;
}
