/* users.c — what both backends share about users, keys and usage (API.md §19): key
 * scope names, the clock of quotas and key expiry (with its test-only override), the
 * period of a time, and the one place usage is counted (store_usage_add), which the
 * backends' ops (sqlite_users.c, pg_users.c) store with one atomic upsert. */
#include "store/store_int.h"

#include "core/log.h"
#include "core/testhooks.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const scope_names[] = {"write", "read", "admin"};

const char *key_scope_name(key_scope_t s)
{
    return (unsigned)s < ARRAY_LEN(scope_names) ? scope_names[s] : "write";
}

bool key_scope_parse(const char *name, key_scope_t *out)
{
    for (size_t i = 0; name && i < ARRAY_LEN(scope_names); i++)
        if (strcmp(name, scope_names[i]) == 0) {
            *out = (key_scope_t)i;
            return true;
        }
    return false;
}

/* ---- the clock ---- */

static pthread_once_t clock_once = PTHREAD_ONCE_INIT;
static int64_t fixed_now; /* 0 = the real clock */

static int64_t parse_test_now(const char *s)
{
    int y, mo, d, h = 0, mi = 0, sec = 0;
    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &sec) < 3)
        return 0;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h,
                    .tm_min = mi, .tm_sec = sec};
    return (int64_t)timegm(&tm) * 1000000;
}

/* INKWELL_TEST_CLOCK_FILE (tests only, core/testhooks.h): a file holding seconds added
 * to the clock, read at every call, so a test moves time on while a server runs
 * (session expiry). */
static const char *skew_file;

static int64_t skew_us(void)
{
    FILE *f = skew_file ? fopen(skew_file, "r") : NULL;
    if (!f)
        return 0;
    double sec = 0;
    if (fscanf(f, "%lf", &sec) != 1)
        sec = 0;
    fclose(f);
    return (int64_t)(sec * 1e6);
}

/* The test clock (core/testhooks.h); in a release build test_hook_env is NULL. */
static void clock_init(void)
{
    const char *sf = test_hook_env("INKWELL_TEST_CLOCK_FILE");
    if (sf && *sf)
        skew_file = sf;
    const char *t = test_hook_env("INKWELL_TEST_NOW");
    if (t && *t) {
        fixed_now = parse_test_now(t);
        if (!fixed_now)
            log_warn("INKWELL_TEST_NOW is not a time (YYYY-MM-DDTHH:MM:SSZ); ignored");
    }
}

int64_t store_clock_us(void)
{
    if (!TEST_HOOKS)
        return now_us();
    pthread_once(&clock_once, clock_init);
    return (fixed_now ? fixed_now : now_us()) + (skew_file ? skew_us() : 0);
}

void store_period(int64_t us, char out[8])
{
    time_t t = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    unsigned y = (unsigned)(tm.tm_year + 1900) % 10000, m = (unsigned)(tm.tm_mon + 1) % 13;
    out[0] = (char)('0' + y / 1000);
    out[1] = (char)('0' + y / 100 % 10);
    out[2] = (char)('0' + y / 10 % 10);
    out[3] = (char)('0' + y % 10);
    out[4] = '-';
    out[5] = (char)('0' + m / 10);
    out[6] = (char)('0' + m % 10);
    out[7] = '\0';
}

/* ---- counting ---- */

int store_usage_add(store_conn_t *c, int64_t user_id, int64_t words, int64_t images,
                    int64_t prompt_tokens, int64_t completion_tokens)
{
    char period[8];
    store_period(store_clock_us(), period);
    usage_counts_t add = {words > 0 ? words : 0, images > 0 ? images : 0,
                          prompt_tokens > 0 ? prompt_tokens : 0,
                          completion_tokens > 0 ? completion_tokens : 0};
    int rc = c->ops->usage_add(c, user_id, period, &add);
    if (rc != STORE_OK)
        log_warn("usage: user %lld: not counted: %s", (long long)user_id, store_rc_name(rc));
    return rc;
}

int store_usage_add_job(store_conn_t *c, const job_t *job, int64_t words,
                        const char *media_key)
{
    bool img = job->rec.kind == KIND_IMG;
    return store_usage_add(c, job->rec.user_id, img ? 0 : words, img && media_key ? 1 : 0,
                           job->rec.prompt_tokens, job->rec.completion_tokens);
}

int store_usage_add_docs(store_conn_t *c, record_t *const *recs, size_t n)
{
    char period[8];
    store_period(store_clock_us(), period);
    /* a batch is at most a few dozen documents: sum per user by a linear scan */
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = recs[j]->user_id == recs[i]->user_id;
        if (seen)
            continue;
        usage_counts_t add = {0};
        for (size_t j = i; j < n; j++) {
            const record_t *r = recs[j];
            if (r->user_id != recs[i]->user_id)
                continue;
            add.words += r->words > 0 ? r->words : 0;
            add.prompt_tokens += r->prompt_tokens > 0 ? r->prompt_tokens : 0;
            add.completion_tokens += r->completion_tokens > 0 ? r->completion_tokens : 0;
        }
        int rc = c->ops->usage_add(c, recs[i]->user_id, period, &add);
        if (rc != STORE_OK)
            return rc;
    }
    return STORE_OK;
}
