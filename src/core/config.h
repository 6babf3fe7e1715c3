/* config.h — every setting of `inkwell serve`, from one table.
 *
 * One row per setting (name, type, default, help) drives the command-line flags
 * (--name), the environment (INKWELL_NAME), the config file (`name = value` lines,
 * given with --config) and --help. Precedence: flag, then environment, then file,
 * then default. OPENAI_API_KEY and OPENAI_BASE_URL are honoured below INKWELL_*. */
#ifndef INK_CONFIG_H
#define INK_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *config;        /* path of the config file, or "" */
    char *listen;        /* HOST:PORT */
    char *data_dir;
    char *database;      /* "" = sqlite file in data_dir; a path, sqlite:PATH or postgres://... */
    char *provider;      /* builtin | openai */
    char *public_url;    /* "" = http://<listen> */
    long rate_limit;     /* requests a minute per key */
    char *trusted_proxies; /* "" = none (http/proxies.h) */
    double drain_delay;    /* SIGTERM: seconds of 503 /readyz before the listener closes */
    double shutdown_grace; /* SIGTERM: seconds requests may take to finish after that */
    char *database_pooled; /* "" = none: every statement on --database */
    char *openai_base_url;
    char *openai_api_key; /* secret: never logged */
    char *text_model;
    char *image_model;
    double provider_timeout; /* seconds, one provider call */
    double provider_idle_timeout; /* seconds of silence allowed inside a streamed answer */
    long max_output_tokens; /* max_tokens of chat requests; 0 = not sent */
    double wait_limit;   /* seconds a creating request waits */
    long workers;        /* generation workers */
    long max_revisions;  /* revisions a record keeps (API.md §16) */
    char *webhook_allow_private; /* a switch (cfg_switch_value): webhooks may go to non-public addresses (API.md §22) */
    double webhook_retry_scale; /* multiplies every delay of the retry schedule */
    long webhook_workers;       /* sends in flight at once in all */
    double stream_keepalive; /* seconds between SSE keep-alive comments */
    long threads;        /* HTTP threads */
    long max_body;       /* bytes */
    long max_connections;
    long max_connections_per_address; /* 0 = half of max_connections */
    long min_free_mb;    /* creates answer 503 below this much free space in the data directory */
    long record_cache_mb; /* rendered-record cache (api/rcache.h); 0 = none */
    long connection_timeout; /* seconds of idleness before a connection is closed */
    long request_timeout;    /* seconds a client may take to send one request */
    double job_lease;    /* seconds a claimed job is held before another worker may take it */
    char *log_level;
    char *metrics;       /* on | off: GET /metrics and the counting behind it */
    long quota_words;    /* monthly words a new user may generate (§19); -1 = no limit */
    long quota_images;   /* monthly pictures a new user may generate; -1 = no limit */
    double session_idle;   /* seconds a session lives without a request (API.md §21) */
    double session_max;    /* seconds a session lives at most */
    char *oidc_issuer, *oidc_client_id, *oidc_client_secret; /* "" = no single sign-on; the secret never logged */
    char *oidc_create_users; /* a switch (cfg_switch_value) */
    char *oidc_name_claim;   /* the claim a new user is named from */
    long signin_threads;   /* the password pool (Argon2id off the HTTP threads) */
    long signin_max;       /* password checks running or waiting at once */
    long export_threads;   /* the export pool (api/export_pool.h) */
    long export_max;       /* exports running or waiting at once */
    long export_per_user;  /* of which one user's */
    long export_cache_mb;  /* rendered exports kept by document version */
    double media_sweep_age; /* seconds: temporary and unreferenced media older are removed */
    double media_sweep_interval; /* seconds between two sweeps while serving; 0 = off */
    char *media_store;           /* "" (<data-dir>/media), a directory or s3://BUCKET/PREFIX */
    char *s3_endpoint, *s3_region, *s3_path_style, *s3_access_key, *s3_secret_key;
    char *media_redirect;        /* switches: cfg_switch_value */
    long builtin_delay_ms;       /* tests and demos: each builtin generation sleeps this long */
    long builtin_busy_ms;        /* tests: each builtin generation first spins this long */
    char *builtin_fail_pattern;  /* tests and demos: prompts/descriptions containing it fail */
} cfg_t;

/* Fills cfg from argv (after the subcommand), the environment and the config file.
 * Returns 0, or -1 with a message in err. Sets *help when --help was given. */
int cfg_load(cfg_t *cfg, int argc, char **argv, bool *help, char *err, size_t errlen);
/* A switch setting (--s3-path-style, --media-redirect) takes no value on the command
 * line; its value: 1 (1/true/on/yes), 0 (0/false/off/no/empty) or -1. */
bool cfg_is_switch(const char *name);
int cfg_switch_value(const char *v);
void cfg_free(cfg_t *cfg);
void cfg_print_help(const char *prog);

/* The database URL in effect: cfg->database or "<data_dir>/inkwell.db". Malloc'd. */
char *cfg_database_url(const cfg_t *cfg);
/* The public base URL without a trailing slash: --public-url, or http://<listen> with
 * the port bound (port: --listen port 0 is the kernel's choice). Malloc'd. */
char *cfg_public_url(const cfg_t *cfg, unsigned port);

#endif
