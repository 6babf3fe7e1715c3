/* config.c — the settings table and its three sources (flags, environment, file).
 *
 * Each row names a setting once; flags are --name, variables INKWELL_NAME (dashes
 * become underscores, upper case), file lines `name = value` (dash or underscore).
 * Values are parsed strictly: a bad number is an error, not a zero. */
#include "core/config.h"

#include "core/log.h"
#include "core/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum { T_STR, T_LONG, T_DOUBLE } ctype_t;

typedef struct {
    const char *name;
    ctype_t type;
    size_t off;
    const char *def;
    double min, max; /* numbers only */
    const char *help;
} setting_t;

#define S(n, f, d, h) {n, T_STR, offsetof(cfg_t, f), d, 0, 0, h}
#define L(n, f, d, lo, hi, h) {n, T_LONG, offsetof(cfg_t, f), d, lo, hi, h}
#define D(n, f, d, lo, hi, h) {n, T_DOUBLE, offsetof(cfg_t, f), d, lo, hi, h}

static const setting_t settings[] = {
    S("config", config, "", "a file of `name = value` lines (any setting below)"),
    S("listen", listen, "127.0.0.1:8080", "address and port to serve on: HOST:PORT, [IPV6]:PORT ([::] takes both families)"),
    S("data-dir", data_dir, "./inkwell-data", "SQLite database and media files"),
    S("database", database, "", "database URL: postgres://... or a SQLite file (default: <data-dir>/inkwell.db)"),
    S("provider", provider, "builtin", "generator: builtin (offline) or openai (any OpenAI-compatible server)"),
    S("public-url", public_url, "", "base of absolute links, e.g. https://ink.example.com (default: http://<listen>)"),
    S("trusted-proxies", trusted_proxies, "", "addresses or CIDR ranges of proxies whose X-Forwarded-For gives the client address (comma-separated; default none)"),
    D("drain-delay", drain_delay, "0", 0, 3600, "on SIGTERM, seconds /readyz answers 503 while requests are still taken, before the listener closes"),
    D("shutdown-grace", shutdown_grace, "30", 0, 86400, "on SIGTERM, seconds requests in progress may take to finish after the listener closes"),
    S("database-pooled", database_pooled, "", "postgres:// URL through a transaction-pooling PgBouncer for statements; --database (direct) keeps LISTEN and the session locks"),
    L("rate-limit", rate_limit, "120", 0, 1e9, "requests a minute per key; 0 turns the limit off"),
    S("openai-base-url", openai_base_url, "https://api.openai.com/v1", "OpenAI-compatible API base URL (also OPENAI_BASE_URL)"),
    S("openai-api-key", openai_api_key, "", "API key for the openai provider (also OPENAI_API_KEY); never logged"),
    S("text-model", text_model, "gpt-4o-mini", "model for documents (openai provider)"),
    S("image-model", image_model, "dall-e-3", "model for images (openai provider)"),
    D("provider-timeout", provider_timeout, "120", 0.1, 3600, "seconds one provider call may take"),
    D("provider-idle-timeout", provider_idle_timeout, "30", 0.1, 3600, "seconds a streamed answer may stay silent between two chunks before the attempt is given up"),
    L("max-output-tokens", max_output_tokens, "0", 0, 1000000, "most tokens a model may write for a document, sent as max_tokens; 0 = not sent (the server's own limit)"),
    D("wait-limit", wait_limit, "60", 0, 86400, "seconds a creating request waits for its generation before answering 202"),
    D("stream-keepalive", stream_keepalive, "15", 0.1, 15, "seconds of silence after which a stream (SSE) gets a keep-alive comment"),
    L("workers", workers, "4", 1, 256, "generation workers"),
    L("max-revisions", max_revisions, "50", 1, 100000, "revisions a record keeps (API.md §16); past it the oldest is removed with its picture"),
    S("webhook-allow-private", webhook_allow_private, "0", "a switch: webhook URLs may point to loopback, private and other non-public addresses (tests, private networks; API.md §22)"),
    D("webhook-retry-scale", webhook_retry_scale, "1", 0, 1000, "multiplies every delay of the webhook retry schedule (5 s ... 12 h; tests)"),
    L("webhook-workers", webhook_workers, "4", 1, 256, "webhook deliveries sent at once (at most 2 per endpoint)"),
    L("threads", threads, "2", 1, 256, "HTTP server threads"),
    L("max-body", max_body, "1048576", 1024, 1073741824, "largest request body, bytes"),
    L("record-cache-mb", record_cache_mb, "64", 0, 1048576, "memory for rendered records answered to lists (SQLite); 0 turns it off"),
    L("max-connections", max_connections, "1024", 1, 100000, "most connections at once"),
    L("max-connections-per-address", max_connections_per_address, "0", 0, 100000, "most connections at once from one client address; 0 = half of max-connections"),
    L("min-free-mb", min_free_mb, "16", 0, 1048576, "free space (MiB) the data directory keeps: below it creates answer 503 and /readyz says the storage is full"),
    L("connection-timeout", connection_timeout, "30", 1, 3600, "seconds a connection may stay silent before it is closed"),
    L("request-timeout", request_timeout, "30", 1, 3600, "seconds a client may take to send one whole request (slow clients are cut off)"),
    D("job-lease", job_lease, "30", 0.2, 86400, "seconds a worker holds a job before another may take it over (renewed while it works)"),
    S("log-level", log_level, "info", "error, warn, info (one access line per request) or debug"),
    S("metrics", metrics, "on", "Prometheus metrics at GET /metrics: on, or off (no counting; /metrics is 404)"),
    L("quota-words", quota_words, "-1", -1, 1e15, "monthly words of generated text a new user may have (API.md §19); -1 = no limit"),
    L("quota-images", quota_images, "-1", -1, 1e15, "monthly pictures a new user may have generated; -1 = no limit"),
    D("session-idle", session_idle, "604800", 60, 31536000, "seconds a signed-in session may go without a request before it ends (API.md §21)"),
    D("session-max", session_max, "2592000", 60, 315360000, "seconds a signed-in session lasts at most"),
    /* single sign-on (API.md §21; auth/oidc.h) */
    S("oidc-issuer", oidc_issuer, "", "OpenID Connect issuer URL (https; equal to its discovery document's issuer): turns single sign-on on"),
    S("oidc-client-id", oidc_client_id, "", "the client id inkwell is registered with at the issuer"),
    S("oidc-client-secret", oidc_client_secret, "", "the client's secret (also INKWELL_OIDC_CLIENT_SECRET); never logged"),
    S("oidc-create-users", oidc_create_users, "0", "a switch: a person the issuer signs in who is linked to no user becomes a new member"),
    S("oidc-name-claim", oidc_name_claim, "preferred_username", "the ID token's claim a new user is named from"),
    L("signin-threads", signin_threads, "2", 1, 64, "threads that hash and check passwords (Argon2id) and call the OpenID issuer, off the HTTP threads"),
    L("signin-max", signin_max, "8", 1, 1024, "password checks and issuer calls running or waiting at once; past it a sign-in answers 429 (single sign-on: 503) with Retry-After"),
    L("export-threads", export_threads, "2", 1, 64, "threads that make html, docx and pdf exports, off the HTTP threads and at a lower priority"),
    L("export-max", export_max, "16", 1, 64, "exports made or waiting at once; past it an export answers 503 with Retry-After"),
    L("export-per-user", export_per_user, "2", 1, 64, "exports made or waiting at once for one user; past it 429 with Retry-After"),
    L("export-cache-mb", export_cache_mb, "32", 0, 65536, "memory for made exports, kept by document version (ETag); 0 turns it off"),
    D("media-sweep-age", media_sweep_age, "0", 0, 604800, "seconds after which a temporary media file or a picture no record refers to is removed (far above any write's duration); 0 = 300, or 3600 with an s3:// store"),
    /* pictures in object storage (API.md §25; media/media.h) */
    S("media-store", media_store, "", "where pictures live: a directory, or s3://BUCKET/PREFIX (default: <data-dir>/media)"),
    S("s3-endpoint", s3_endpoint, "", "S3-compatible endpoint URL, e.g. http://minio.internal:9000 (default: https://s3.<region>.amazonaws.com)"),
    S("s3-region", s3_region, "us-east-1", "region the S3 requests are signed for"),
    S("s3-path-style", s3_path_style, "0", "a switch: the bucket in the path (http://host/BUCKET/KEY) instead of the host name"),
    S("s3-access-key", s3_access_key, "", "S3 access key id (also AWS_ACCESS_KEY_ID)"),
    S("s3-secret-key", s3_secret_key, "", "S3 secret key (also AWS_SECRET_ACCESS_KEY); never logged"),
    S("media-redirect", media_redirect, "0", "a switch: GET /media/<key>.png answers 302 to a presigned URL of the store (s3:// only)"),
    D("media-sweep-interval", media_sweep_interval, "60", 0, 86400, "seconds between two sweeps of the media directory while serving; 0 = only at start"),
    L("builtin-delay-ms", builtin_delay_ms, "0", 0, 3600000, "tests and demos: each builtin generation takes this long"),
    L("builtin-busy-ms", builtin_busy_ms, "0", 0, 3600000, "tests: each builtin generation first keeps a CPU busy this long without reporting progress"),
    S("builtin-fail-pattern", builtin_fail_pattern, "", "tests and demos: builtin generations whose input contains this text fail"),
};

bool cfg_is_switch(const char *name)
{
    return strcmp(name, "s3-path-style") == 0 || strcmp(name, "media-redirect") == 0 ||
           strcmp(name, "webhook-allow-private") == 0 || strcmp(name, "oidc-create-users") == 0;
}

int cfg_switch_value(const char *v)
{
    static const char *on[] = {"1", "true", "on", "yes"}, *off[] = {"0", "false", "off", "no", ""};
    for (size_t i = 0; i < ARRAY_LEN(on); i++)
        if (strcasecmp(v, on[i]) == 0)
            return 1;
    for (size_t i = 0; i < ARRAY_LEN(off); i++)
        if (strcasecmp(v, off[i]) == 0)
            return 0;
    return -1;
}

static char **str_field(cfg_t *c, const setting_t *s)
{
    return (char **)((char *)c + s->off);
}

static const setting_t *find_setting(const char *name, size_t n)
{
    for (size_t i = 0; i < ARRAY_LEN(settings); i++) {
        const char *sn = settings[i].name;
        if (strlen(sn) != n)
            continue;
        size_t j = 0;
        for (; j < n; j++) {
            char a = name[j] == '_' ? '-' : name[j];
            if (a != sn[j])
                break;
        }
        if (j == n)
            return &settings[i];
    }
    return NULL;
}

/* Sets one value; origin names the source for error messages. */
static int set_value(cfg_t *c, const setting_t *s, const char *val, const char *origin, char *err,
                     size_t errlen)
{
    char *end = NULL;
    switch (s->type) {
    case T_STR: {
        char **f = str_field(c, s);
        free(*f);
        *f = xstrdup(val);
        return 0;
    }
    case T_LONG: {
        errno = 0;
        long v = strtol(val, &end, 10);
        if (errno || end == val || *end || v < s->min || v > s->max) {
            snprintf(err, errlen, "%s: %s must be a whole number from %.0f to %.0f", origin,
                     s->name, s->min, s->max);
            return -1;
        }
        *(long *)((char *)c + s->off) = v;
        return 0;
    }
    case T_DOUBLE: {
        errno = 0;
        double v = strtod(val, &end);
        if (errno || end == val || *end || !isfinite(v) || v < s->min || v > s->max) {
            snprintf(err, errlen, "%s: %s must be a number from %g to %g", origin, s->name,
                     s->min, s->max);
            return -1;
        }
        *(double *)((char *)c + s->off) = v;
        return 0;
    }
    }
    return -1;
}

static void env_name(const char *name, char *out, size_t outlen)
{
    size_t o = (size_t)snprintf(out, outlen, "INKWELL_");
    for (const char *p = name; *p && o + 1 < outlen; p++)
        out[o++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
    out[o] = '\0';
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* Reads `name = value` lines; '#' starts a comment line. Values may be quoted. */
static int load_file(cfg_t *c, const char *path, const unsigned char *locked, char *err,
                     size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open config file %s", path);
        return -1;
    }
    char line[4096];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#')
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected name = value", path, lineno);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *name = trim(s), *val = trim(eq + 1);
        size_t vl = strlen(val);
        if (vl >= 2 && (val[0] == '"' || val[0] == '\'') && val[vl - 1] == val[0]) {
            val[vl - 1] = '\0';
            val++;
        }
        const setting_t *st = find_setting(name, strlen(name));
        if (!st || strcmp(st->name, "config") == 0) {
            snprintf(err, errlen, "%s:%d: unknown setting '%s'", path, lineno, name);
            rc = -1;
            break;
        }
        if (locked[st - settings])
            continue;
        char origin[64];
        snprintf(origin, sizeof(origin), "config line %d", lineno);
        if (set_value(c, st, val, origin, err, errlen) != 0) {
            rc = -1;
            break;
        }
    }
    fclose(f);
    return rc;
}

int cfg_load(cfg_t *c, int argc, char **argv, bool *help, char *err, size_t errlen)
{
    unsigned char locked[ARRAY_LEN(settings)] = {0};
    memset(c, 0, sizeof(*c));
    *help = false;
    for (size_t i = 0; i < ARRAY_LEN(settings); i++)
        if (set_value(c, &settings[i], settings[i].def, "default", err, errlen) != 0)
            return -1;

    /* 1. flags */
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            *help = true;
            return 0;
        }
        if (strncmp(a, "--", 2) != 0) {
            snprintf(err, errlen, "unexpected argument '%s' (see --help)", a);
            return -1;
        }
        const char *name = a + 2, *eq = strchr(name, '='), *val;
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const setting_t *s = find_setting(name, nlen);
        if (!s) {
            snprintf(err, errlen, "unknown option '--%.*s' (see --help)", (int)nlen, name);
            return -1;
        }
        if (eq) {
            val = eq + 1;
        } else if (cfg_is_switch(s->name) && (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)) {
            val = "1"; /* a switch given alone is on */
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            snprintf(err, errlen, "--%s needs a value", s->name);
            return -1;
        }
        if (set_value(c, s, val, "flag", err, errlen) != 0)
            return -1;
        locked[s - settings] = 1;
    }
    /* 2. environment */
    for (size_t i = 0; i < ARRAY_LEN(settings); i++) {
        char en[96];
        env_name(settings[i].name, en, sizeof(en));
        const char *v = getenv(en);
        if (locked[i] || !v)
            continue;
        if (set_value(c, &settings[i], v, en, err, errlen) != 0)
            return -1;
        locked[i] = 1;
    }
    /* OPENAI_* are honoured below INKWELL_* */
    static const struct {
        const char *var, *setting;
    } openai_vars[] = {{"OPENAI_API_KEY", "openai-api-key"}, {"OPENAI_BASE_URL", "openai-base-url"},
                       {"AWS_ACCESS_KEY_ID", "s3-access-key"},
                       {"AWS_SECRET_ACCESS_KEY", "s3-secret-key"}};
    for (size_t i = 0; i < ARRAY_LEN(openai_vars); i++) {
        const setting_t *s = find_setting(openai_vars[i].setting, strlen(openai_vars[i].setting));
        const char *v = getenv(openai_vars[i].var);
        if (!v || !*v || locked[s - settings])
            continue;
        set_value(c, s, v, openai_vars[i].var, err, errlen);
        locked[s - settings] = 1;
    }
    /* 3. file */
    if (c->config[0] && load_file(c, c->config, locked, err, errlen) != 0)
        return -1;

    if (log_level_parse(c->log_level) < 0) {
        snprintf(err, errlen, "log-level must be error, warn, info or debug");
        return -1;
    }
    if (cfg_switch_value(c->s3_path_style) < 0 || cfg_switch_value(c->media_redirect) < 0 ||
        cfg_switch_value(c->webhook_allow_private) < 0 || cfg_switch_value(c->oidc_create_users) < 0) {
        snprintf(err, errlen, "s3-path-style, media-redirect, webhook-allow-private and oidc-create-users take 1/true/on or 0/false/off");
        return -1;
    }
    if (strcmp(c->metrics, "on") != 0 && strcmp(c->metrics, "off") != 0) {
        snprintf(err, errlen, "metrics must be on or off");
        return -1;
    }
    if (strcmp(c->provider, "builtin") != 0 && strcmp(c->provider, "openai") != 0) {
        snprintf(err, errlen, "provider must be builtin or openai");
        return -1;
    }
    if (!strchr(c->listen, ':')) {
        snprintf(err, errlen, "listen must be HOST:PORT");
        return -1;
    }
    return 0;
}

void cfg_free(cfg_t *c)
{
    for (size_t i = 0; i < ARRAY_LEN(settings); i++)
        if (settings[i].type == T_STR) {
            char **f = str_field(c, &settings[i]);
            free(*f);
            *f = NULL;
        }
}

void cfg_print_help(const char *prog)
{
    printf("usage: %s serve [options]\n\n"
           "Each option --name VALUE (or --name=VALUE) can also be given as the environment\n"
           "variable INKWELL_NAME or as a line `name = value` in the --config file.\n"
           "Precedence: option, environment, file, default.\n\n",
           prog);
    for (size_t i = 0; i < ARRAY_LEN(settings); i++) {
        const setting_t *s = &settings[i];
        char en[96];
        env_name(s->name, en, sizeof(en));
        printf("  --%-22s %s\n  %24s default: %s; env %s\n", s->name, s->help, "",
               s->def[0] ? s->def : "(none)", en);
    }
}

char *cfg_database_url(const cfg_t *c)
{
    if (c->database[0])
        return xstrdup(c->database);
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "%s/inkwell.db", c->data_dir);
    return buf_steal(&b);
}

char *cfg_public_url(const cfg_t *c, unsigned port)
{
    buf_t b;
    buf_init(&b);
    const char *colon = strrchr(c->listen, ':');
    if (c->public_url[0])
        buf_puts(&b, c->public_url);
    else if (colon)
        buf_printf(&b, "http://%.*s:%u", (int)(colon - c->listen), c->listen, port);
    else
        buf_printf(&b, "http://%s", c->listen);
    while (b.len && b.data[b.len - 1] == '/')
        b.data[--b.len] = '\0';
    return buf_steal(&b);
}
