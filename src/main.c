/* main.c — inkwell: `serve` starts the server as a straight line of steps
 * (config → log → store → media → provider → records → jobs → http), waits for SIGTERM or
 * SIGINT, and stops in the reverse order; `key` manages API keys. */
#include "api/api.h"
#include "api/export_pool.h"
#include "auth/oidc.h"
#include "auth/password.h"
#include "cli/cli.h"
#include "core/config.h"
#include "core/log.h"
#include "export/export.h"
#include "records/jobs.h"
#include "media/sweeper.h"
#include "records/metrics_observer.h"
#include "records/records.h"
#include "gen/provider.h"
#include "obs/metrics.h"
#include "api/rcache.h"
#include "http/proxies.h"
#include "store/datalock.h"
#include "store/writer.h"
#include "core/version.h"
#include "webhooks/webhooks.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define WRITER_MAX_BATCH 64 /* documents in one group commit */

static void usage(void)
{
    fputs("usage: inkwell serve [options]      run the server (inkwell serve --help)\n"
          "       inkwell key create --user NAME [--scope S] [--expires TIME] | key list |\n"
          "       inkwell key revoke ID\n"
          "       inkwell user create|list|show|set-quota|delete ... (inkwell user)\n"
          "       inkwell usage [--period YYYY-MM]\n"
          "       inkwell backup --to FILE      consistent copy of the SQLite data\n"
          "       inkwell media copy --from STORE --to STORE   pictures between a directory\n"
          "                                     and s3://BUCKET/PREFIX (inkwell media)\n"
          "       inkwell migrate --from SOURCE --to TARGET   a whole deployment between a\n"
          "                                     SQLite data directory and PostgreSQL\n",
          stderr);
}

/* Waits up to seconds for another SIGTERM/SIGINT; true when one came. */
static bool next_signal(const sigset_t *sigs, double seconds)
{
    if (seconds <= 0)
        return false;
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    return sigtimedwait(sigs, NULL, &ts) > 0;
}

/* SIGTERM (API.md §20): /readyz answers 503 at once while requests are still taken for
 * --drain-delay seconds (a balancer's health check moves traffic away); then the
 * listener closes, the workers claim no more jobs (other processes take the queue),
 * every stream ends with a `retry:` field (the client resumes elsewhere with
 * Last-Event-ID) and waiting creates answer 202; requests in progress and running
 * jobs get up to --shutdown-grace seconds to finish. A second signal cuts a wait
 * short. */
static void drain(const cfg_t *cfg, const sigset_t *sigs, http_server_t *http, jobs_t *jobs,
                  records_t *records)
{
    http_drain(http);
    bool again = next_signal(sigs, cfg->drain_delay);
    http_quiesce(http);
    jobs_drain(jobs);
    records_release(records); /* waiting creates answer 202, streams end */
    double until = mono_s() + cfg->shutdown_grace;
    /* every answer now closes its connection: the drain ends when no connection is
     * busy (a proxy's request may still be on its way on one accepted before the close) */
    while (!again && (http_connections_busy(http) > 0 || jobs_running(jobs) > 0) && mono_s() < until)
        again = next_signal(sigs, 0.02);
    if (http_connections_busy(http) > 0 || jobs_running(jobs) > 0)
        log_warn("stopping with %d connection(s) (%d request(s) in progress) and %d job(s) "
                 "unfinished (jobs are released for another process or the next start)",
                 http_connections_busy(http), http_inflight(http), jobs_running(jobs));
}

static int serve(int argc, char **argv)
{
    cfg_t cfg;
    char err[512];
    bool help;
    int rc = 1;
    store_t *store = NULL;
    media_t *media = NULL;
    provider_t *prov = NULL;
    jobs_t *jobs = NULL;
    writer_t *writer = NULL;
    media_sweeper_t *sweeper = NULL;
    http_server_t *http = NULL;
    app_t app = {0};
    char *dburl = NULL;
    int lockfd = -1;
    int listen_fd = -1; /* http_bind's, until http_start takes it */
    proxies_t *proxies = NULL;

    if (cfg_load(&cfg, argc, argv, &help, err, sizeof(err)) != 0) {
        fprintf(stderr, "inkwell: %s\n", err);
        cfg_free(&cfg);
        return 2;
    }
    if (help) {
        cfg_print_help("inkwell");
        cfg_free(&cfg);
        return 0;
    }
    log_level = log_level_parse(cfg.log_level);
    /* single sign-on (API.md §21): the client of --oidc-issuer, when one is set; a wrong
     * setting stops here, before anything is bound or touched */
    app.oidc = oidc_new(&cfg, err, sizeof(err));
    if (!app.oidc && err[0]) {
        fprintf(stderr, "inkwell: %s\n", err);
        cfg_free(&cfg);
        return 2;
    }
    /* the address is bound next: a port in use stops the start before the database is
     * touched, and port 0's choice is known to the links the server makes */
    uint16_t port = 0;
    if ((listen_fd = http_bind(cfg.listen, &port, err, sizeof(err))) < 0) {
        fprintf(stderr, "inkwell: %s\n", err);
        oidc_free(app.oidc);
        cfg_free(&cfg);
        return 2;
    }
    if (app.oidc) {
        char *pub = cfg_public_url(&cfg, port);
        oidc_set_public_url(app.oidc, pub);
        free(pub);
    }

    /* Signals are taken by sigwait below; every thread started from here on has
     * them blocked. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    mkdir(cfg.data_dir, 0755);
    dburl = cfg_database_url(&cfg);
    if (!(store = store_open(dburl, err, sizeof(err)))) {
        log_error("storage: %s", err);
        goto out;
    }
    if (cfg.database_pooled[0]) { /* statements through a transaction pooler */
        if (!store_has(store, STORE_CAP_SHARED) ||
            (strncmp(cfg.database_pooled, "postgres://", 11) != 0 &&
             strncmp(cfg.database_pooled, "postgresql://", 13) != 0)) {
            log_error("--database-pooled needs a postgres:// URL beside a PostgreSQL --database");
            goto out;
        }
        store_set_pooled_url(store, cfg.database_pooled);
    }
    /* One server per SQLite data directory (store/datalock.h); PostgreSQL servers
     * share their database by design. */
    if (store_has(store, STORE_CAP_OWN_LEASES) &&
        (lockfd = datalock_take(cfg.data_dir, err, sizeof(err))) < 0) {
        log_error("%s", err);
        goto out;
    }
    store_conn_t *c = store_conn(store, err, sizeof(err));
    if (!c) {
        log_error("storage: cannot connect: %s", err);
        goto out;
    }
    if (store_migrate(c) != STORE_OK) {
        log_error("storage: schema migration failed");
        goto out;
    }
    if (lockfd >= 0) {
        /* No other process can hold a lease now: a dead predecessor's jobs resume at once. */
        int64_t released = 0;
        if (store_job_release_all(c, &released) != STORE_OK) {
            log_error("storage: cannot release the leases of a previous server");
            goto out;
        }
        if (released > 0)
            log_info("jobs: %lld interrupted job(s) of a previous server released",
                     (long long)released);
    }
    if (!(media = media_open_cfg(&cfg, err, sizeof(err)))) {
        log_error("%s", err);
        goto out;
    }
    if (cfg_switch_value(cfg.media_redirect) == 1 && !media_can_presign(media)) {
        log_error("media-redirect needs an s3:// media store (--media-store)");
        goto out;
    }
    /* Alone on the directory (SQLite, locked), every temporary file is an interrupted
     * write and every picture no record refers to was left by a crash: all go now;
     * shared (PostgreSQL, or a bucket, which other deployments' processes may write
     * to), those older than --media-sweep-age (default 300 s, 3600 s for a bucket).
     * Then, on both backends, the sweeper does the same while serving
     * (media/sweeper.h). */
    double sweep_age = cfg.media_sweep_age > 0 ? cfg.media_sweep_age
                       : media_cfg_remote(&cfg) ? 3600 : 300;
    media_sweep_once(media, store, lockfd >= 0 && !media_cfg_remote(&cfg) ? 0 : sweep_age);
    if (!(sweeper = media_sweeper_start(media, store, sweep_age, cfg.media_sweep_interval))) {
        log_error("cannot start the media sweeper");
        goto out;
    }
    if (!(prov = provider_new(&cfg, err, sizeof(err)))) {
        log_error("provider: %s", err);
        goto out;
    }
    metrics_init(strcmp(cfg.metrics, "on") == 0, prov->name, store_backend_name(store));
    bool shared = store_shared(store);
    app.cfg = &cfg;
    app.store = store;
    app.media = media;
    app.prov = prov;
    if (store_probes(store))
        app.rcache = rcache_new((size_t)cfg.record_cache_mb << 20);
    if (prov->text_inline && !(writer = writer_start(store, WRITER_MAX_BATCH))) {
        log_error("cannot start the writer thread");
        goto out;
    }
    records_deps_t deps = {.cfg = &cfg, .store = store, .media = media, .prov = prov,
                           .changed = app.rcache ? rcache_changed : NULL,
                           .changed_arg = app.rcache, .writer = writer};
    if (!(app.records = records_start(&deps))) {
        log_error("cannot start the records service");
        goto out;
    }
    obs_observe_records(app.records);
    if (!(jobs = jobs_start(&cfg, store, media, prov, app.records))) {
        log_error("cannot start the job workers");
        goto out;
    }
    records_set_jobs(app.records, jobs);
    if (!(proxies = proxies_parse(cfg.trusted_proxies, err, sizeof(err)))) {
        log_error("%s", err);
        goto out;
    }
    app.rl = ratelimit_new(cfg.rate_limit, shared);
    app.public_url = cfg_public_url(&cfg, port);
    api_idempotency_install(&app); /* Idempotency-Key on every create path */
    if (!(app.exports = export_pool_start((int)cfg.export_threads, (int)cfg.export_max,
                                          (int)cfg.export_per_user,
                                          (size_t)cfg.export_cache_mb << 20)))
        goto out;
    /* passwords (API.md §21): checked and hashed off the HTTP threads, a bounded pool */
    if (password_init() != 0) {
        log_error("libsodium could not start");
        goto out;
    }
    app.https = strncmp(app.public_url, "https://", 8) == 0;
    if (!(app.hashes = export_pool_start((int)cfg.signin_threads, (int)cfg.signin_max,
                                         (int)cfg.signin_max, 0)))
        goto out;
    /* webhooks (API.md §22): the delivery workers, rendering records as the API does */
    wh_opts_t who = {.store = store,
                     .workers = (int)cfg.webhook_workers,
                     .per_endpoint = 2,
                     .retry_scale = cfg.webhook_retry_scale,
                     .allow_private = cfg_switch_value(cfg.webhook_allow_private) == 1,
                     .timeout_s = 10,
                     .user_agent = "inkwell/" INKWELL_VERSION,
                     .render = api_webhook_render,
                     .render_arg = &app};
    if (!(app.webhooks = wh_start(&who))) {
        log_error("cannot start the webhook workers");
        goto out;
    }
    http_opts_t ho = {cfg.listen,
                      (int)cfg.threads,
                      (int)cfg.max_connections,
                      (int)cfg.connection_timeout,
                      (int)cfg.request_timeout,
                      (size_t)cfg.max_body,
                      api_handle,
                      &app,
                      (int)cfg.max_connections_per_address,
                      proxies,
                      cfg.data_dir};
    http = http_start(&ho, listen_fd, err, sizeof(err));
    listen_fd = -1; /* http_start's now (closed on its failure) */
    if (!http) {
        log_error("http: %s", err);
        goto out;
    }
    log_info("inkwell listening on %s (port %u), storage %s, provider %s, %ld workers",
             cfg.listen, http_port(http), store_backend_name(store), prov->name, cfg.workers);

    int sig = 0;
    sigwait(&sigs, &sig);
    log_info("signal %d: draining (/readyz 503 for %g s, then no new connections; requests "
             "and jobs in progress finish within %g s)",
             sig, cfg.drain_delay, cfg.shutdown_grace);
    drain(&cfg, &sigs, http, jobs, app.records);
    rc = 0;
out:
    export_pool_stop(app.exports); /* waiting exports answer 503, running ones finish */
    export_pool_stop(app.hashes);
    http_stop(http);
    wh_stop(app.webhooks); /* an attempt in progress ends (10 s at most); its lease keeps it */
    media_sweeper_stop(sweeper);
    export_pool_free(app.exports);
    export_pool_free(app.hashes);
    export_shutdown(); /* no request runs now: the PDF writer's font caches go */
    jobs_stop(jobs); /* running jobs are released for the next start */
    writer_stop(writer);
    records_stop(app.records);
    rcache_free(app.rcache);
    if (prov)
        prov->destroy(prov);
    ratelimit_free(app.rl);
    proxies_free(proxies);
    free(app.public_url);
    oidc_free(app.oidc);
    if (listen_fd >= 0)
        close(listen_fd);
    media_close(media);
    store_close(store);
    datalock_release(lockfd);
    free(dburl);
    cfg_free(&cfg);
    if (rc == 0)
        log_info("stopped");
    return rc;
}

int main(int argc, char **argv)
{
    /* Request arenas come and go all the time: keep freed memory in the process
     * instead of handing it back to the kernel (madvise + page faults) each time. */
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
    mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024);
    if (argc < 2) {
        usage();
        return 2;
    }
    if (strcmp(argv[1], "serve") == 0)
        return serve(argc - 2, argv + 2);
    if (strcmp(argv[1], "key") == 0)
        return cli_key(argc - 1, argv + 1);
    if (strcmp(argv[1], "user") == 0)
        return cli_user(argc - 1, argv + 1);
    if (strcmp(argv[1], "usage") == 0)
        return cli_usage(argc - 1, argv + 1);
    if (strcmp(argv[1], "backup") == 0)
        return cli_backup(argc - 1, argv + 1);
    if (strcmp(argv[1], "media") == 0)
        return cli_media(argc - 1, argv + 1);
    if (strcmp(argv[1], "migrate") == 0)
        return cli_migrate(argc - 1, argv + 1);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage();
        return 0;
    }
    usage();
    return 2;
}
