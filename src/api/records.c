/* records.c — the five routes of documents and images (§4) and their regenerate
 * (§16), one code path for both kinds: decode, call the records service
 * (records/records.h), render. A request that asks for text/event-stream is handed to
 * stream.c (§10). */
#include "api/api_int.h"
#include "core/unicode.h"

#include "core/log.h"
#include "gen/templates.h"
#include "obs/metrics.h"
#include "api/rcache.h"
#include "records/records.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const kind_object[] = {"document", "image"};
static const char *const resolutions[] = {"1024x1024", "1792x1024", "1024x1792"};
static const char *const styles[] = {"vivid", "natural"};

#define PAGE_CAP 1000000000000LL /* pages past this are answered as (empty) pages past the end */

static bool one_of(const char *s, const char *const *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, set[i]) == 0)
            return true;
    return false;
}

static void location(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id)
{
    http_add_header(r, "Location", api_record_url(app, http_arena(r), kind, id));
}

/* ---- list ---- */

/* The request's query with page set to `page`: every other piece kept as sent. */
void api_page_url(buf_t *out, const app_t *app, http_req_t *r, rec_kind_t kind, int64_t page)
{
    api_page_url_at(out, api_collection_url(app, http_arena(r), kind), r, page);
}

void api_page_url_at(buf_t *out, const char *base, http_req_t *r, int64_t page)
{
    buf_printf(out, "%s?", base);
    const char *q = http_query(r);
    bool placed = false;
    while (*q) {
        const char *amp = strchr(q, '&');
        size_t len = amp ? (size_t)(amp - q) : strlen(q);
        bool is_page = (len == 4 && strncmp(q, "page", 4) == 0) ||
                       (len >= 5 && strncmp(q, "page=", 5) == 0);
        if (len && !(is_page && placed)) {
            if (is_page)
                buf_printf(out, "page=%lld&", (long long)page);
            else {
                buf_append(out, q, len);
                buf_putc(out, '&');
            }
            placed = placed || is_page;
        }
        q += len + (amp ? 1 : 0);
    }
    if (!placed)
        buf_printf(out, "page=%lld", (long long)page);
    else
        out->data[--out->len] = '\0'; /* the trailing '&' */
}

/* A page's link on the collection's URL base (made once per list), or null. */
static void link_or_null(jw_t *w, const char *base, http_req_t *r, int64_t page, bool present)
{
    if (!present) {
        jw_null(w);
        return;
    }
    buf_t u;
    buf_init(&u);
    api_page_url_at(&u, base, r, page);
    jw_str(w, u.data);
    buf_free(&u);
}

/* Fills the list query from the parameters. Values outside their set fall back to
 * the default; a parameter that does not decode is a 422. */
int api_list_params(http_req_t *r, rec_kind_t kind, list_query_t *lq, int64_t *page_asked)
{
    kvlist_t q;
    api_query(r, &q);
    verrs_t v;
    verrs_init(&v, http_arena(r));
    memset(lq, 0, sizeof(*lq));
    lq->user_id = http_user_id(r);
    lq->favorite = -1;
    lq->per_page = 10;
    lq->page = 1;

    const char *search = param_value(&v, &q, "search", "search");
    if (search && utf8_count(search, strlen(search)) < 0)
        verrs_add(&v, "search", "The search field must be valid UTF-8 text.");
    else if (search && *search)
        lq->search = search;
    const char *s;
    if ((s = param_value(&v, &q, "search_by", "search by")) && kind == KIND_DOC)
        lq->search_result = strcmp(s, "result") == 0;
    int64_t n;
    if (kind == KIND_DOC && (s = param_value(&v, &q, "template_id", "template id")) &&
        parse_uint(s, &n) && n >= 1 && n <= INT_MAX &&
        (n <= TEMPLATE_COUNT || n >= CUSTOM_TEMPLATE_MIN_ID))
        lq->template_id = (int)n; /* a user's own: api_records_list checks it is theirs */
    if (kind == KIND_IMG) {
        if ((s = param_value(&v, &q, "resolution", "resolution")) &&
            one_of(s, resolutions, ARRAY_LEN(resolutions)))
            lq->resolution = s;
        if ((s = param_value(&v, &q, "style", "style")) && one_of(s, styles, ARRAY_LEN(styles)))
            lq->style = s;
    }
    if ((s = param_value(&v, &q, "favorite", "favorite")))
        lq->favorite = parse_bool(s); /* -1 (ignored) when not a boolean */
    if ((s = param_value(&v, &q, "tag", "tag"))) /* §23 */
        lq->tag = api_tag_filter(s, http_arena(r));
    if ((s = param_value(&v, &q, "sort_by", "sort by")))
        lq->sort_by_name = strcmp(s, "name") == 0;
    if ((s = param_value(&v, &q, "sort", "sort")))
        lq->asc = strcmp(s, "asc") == 0;
    if ((s = param_value(&v, &q, "per_page", "per page")) && parse_uint(s, &n) &&
        (n == 10 || n == 25 || n == 50 || n == 100))
        lq->per_page = (int)n;
    *page_asked = 1;
    if ((s = param_value(&v, &q, "page", "page")) && parse_uint(s, &n) && n >= 1)
        *page_asked = n;
    lq->page = *page_asked > PAGE_CAP ? PAGE_CAP : *page_asked;
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return -1;
    }
    return 0;
}

/* The list's probe: the renderings the cache holds for the rows' exact versions are
 * copied out at once (NUL-separated, in page order), so an eviction meanwhile cannot
 * take them away. */
typedef struct {
    rcache_t *rc;
    buf_t held;
} probe_t;

static bool probe_rcache(void *arg, rec_kind_t kind, int64_t id, int64_t updated_us)
{
    probe_t *pb = arg;
    if (!rcache_get(pb->rc, kind, id, updated_us, &pb->held))
        return false;
    buf_putc(&pb->held, '\0');
    return true;
}

/* Writes a record: the rendering the probe held for it (and moves *held past it), or,
 * when it was read whole, renders it now and keeps that rendering. */
static void record_json_cached(app_t *app, jw_t *w, const record_t *rec, const char **held)
{
    if (rec->probed) {
        size_t len = strlen(*held);
        jw_rawn(w, *held, len);
        *held += len + 1;
        return;
    }
    size_t start = w->out->len + (w->need_comma[w->depth] ? 1 : 0); /* past the comma */
    api_record_json(app, w, rec);
    rcache_put(app->rcache, rec->kind, rec->id, rec->updated_us, w->out->data + start,
               w->out->len - start);
}

void api_records_list(app_t *app, http_req_t *r, rec_kind_t kind)
{
    list_query_t lq;
    int64_t page;
    if (api_list_params(r, kind, &lq, &page) != 0)
        return;
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    if (lq.template_id > TEMPLATE_COUNT) { /* one of the user's own, deleted or not (§18) */
        custom_template_t t;
        int trc = store_template_get(c, http_user_id(r), lq.template_id, true, http_arena(r), &t);
        if (trc != STORE_OK && trc != STORE_NOTFOUND) {
            api_store_error(r, trc);
            return;
        }
        if (trc == STORE_NOTFOUND)
            lq.template_id = 0; /* outside the user's set: the default, as §4 says */
    }
    probe_t pb = {.rc = app->rcache};
    buf_init(&pb.held);
    if (app->rcache) {
        lq.probe = probe_rcache;
        lq.probe_arg = &pb;
    }
    /* the page's records in an arena of their own, given back once rendered: a page of
     * long documents is not held beside its answer while a slow client reads it */
    arena_t page_arena;
    arena_init(&page_arena);
    record_list_t l;
    int rc = records_list(app->records, c, kind, &lq, &page_arena, &l);
    if (rc != STORE_OK) {
        arena_free(&page_arena);
        buf_free(&pb.held);
        api_store_error(r, rc);
        return;
    }
    int64_t last = l.total ? (l.total + lq.per_page - 1) / lq.per_page : 1;
    buf_reset(http_resp(r));
    buf_reserve(http_resp(r), 512 + l.n * 600);
    jw_t w;
    jw_init(&w, http_resp(r));
    jw_obj_begin(&w);
    jw_key(&w, "data");
    jw_arr_begin(&w);
    const char *held = pb.held.data; /* held renderings come in page order */
    if (kind == KIND_DOC)
        api_template_names(app, l.items, l.n, &page_arena);
    for (size_t i = 0; i < l.n; i++)
        record_json_cached(app, &w, &l.items[i], &held);
    buf_free(&pb.held);
    arena_free(&page_arena);
    jw_arr_end(&w);
    char *path = api_collection_url(app, http_arena(r), kind);
    jw_key(&w, "links");
    jw_obj_begin(&w);
    jw_key(&w, "first");
    link_or_null(&w, path, r, 1, true);
    jw_key(&w, "last");
    link_or_null(&w, path, r, last, true);
    jw_key(&w, "prev");
    link_or_null(&w, path, r, page - 1, page > 1);
    jw_key(&w, "next");
    link_or_null(&w, path, r, page + 1, page < last);
    jw_obj_end(&w);
    jw_key(&w, "meta");
    jw_obj_begin(&w);
    jw_key(&w, "current_page");
    jw_int(&w, page);
    jw_key(&w, "from");
    if (l.n)
        jw_int(&w, (page - 1) * lq.per_page + 1);
    else
        jw_null(&w);
    jw_key(&w, "last_page");
    jw_int(&w, last);
    jw_key(&w, "path");
    jw_str(&w, path);
    jw_key(&w, "per_page");
    jw_int(&w, lq.per_page);
    jw_key(&w, "to");
    if (l.n)
        jw_int(&w, (page - 1) * lq.per_page + (int64_t)l.n);
    else
        jw_null(&w);
    jw_key(&w, "total");
    jw_int(&w, l.total);
    jw_obj_end(&w);
    jw_key(&w, "status");
    jw_int(&w, 200);
    jw_obj_end(&w);
    http_respond(r, 200);
}

/* ---- show ---- */

/* {"data":<the record>,"status":200}, the record from the cache or rendered (and then
 * kept); compressed in the client's coding once per version of the record, the copy
 * kept with the rendering (§26; the server compresses other answers per request). */
static void show_answer(app_t *app, http_req_t *r, const record_t *rec, probe_t *pb)
{
    http_coding_t want = app->rcache ? http_req_coding(r) : HTTP_CODING_IDENTITY;
    buf_t *out = http_resp(r);
    if (want != HTTP_CODING_IDENTITY) {
        buf_reset(out);
        if (rcache_get_show(app->rcache, rec->kind, rec->id, rec->updated_us, (int)want, out)) {
            http_set_content_coding(r, want);
            http_respond(r, 200);
            return;
        }
    }
    jw_t w;
    api_data_begin(r, &w);
    const char *held = pb->held.data;
    record_json_cached(app, &w, rec, &held);
    api_data_end(r, &w, 200);
    if (want == HTTP_CODING_IDENTITY || out->len < HTTP_COMPRESS_MIN)
        return;
    buf_t z;
    buf_init(&z);
    if (!http_compress(want, out->data, out->len, &z)) {
        buf_free(&z);
        return; /* the server sends it as it is */
    }
    rcache_put_show(app->rcache, rec->kind, rec->id, rec->updated_us, (int)want, z.data, z.len);
    buf_free(out);
    *out = z;
    http_set_content_coding(r, want);
}

void api_records_show(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id)
{
    if (api_wants_stream(r)) {
        api_stream_show(app, r, kind, id);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    record_t rec;
    probe_t pb = {.rc = app->rcache};
    buf_init(&pb.held);
    int rc = records_get(app->records, c, kind, http_user_id(r), id,
                         app->rcache ? probe_rcache : NULL, &pb, http_arena(r), &rec);
    if (rc == STORE_NOTFOUND)
        api_not_found(r);
    else if (rc != STORE_OK)
        api_store_error(r, rc);
    else
        show_answer(app, r, &rec, &pb);
    buf_free(&pb.held);
}

/* ---- store ---- */

/* The create runs once the request is suspended (its outcome may resume it at once);
 * records_create_finish and the answer come in an HTTP thread. */
static void create_done(records_create_t *cr)
{
    http_resume(cr->arg);
}

void api_create_suspended(http_req_t *r)
{
    app_t *app = http_app(r);
    records_create(app->records, http_wait(r));
}

static void on_create_resumed(void *appv, http_req_t *r)
{
    app_t *app = appv;
    records_create_t *cr = http_wait(r);
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    records_create_finish(app->records, c, cr);
    api_create_answer(app, r, cr);
}

void api_create_answer(app_t *app, http_req_t *r, records_create_t *cr)
{
    const records_result_t *res = &cr->res;
    switch (res->outcome) {
    case CREATE_HOOK: api_idem_respond(r, cr); break;
    case CREATE_FAILED: {
        const char *msg;
        int status = api_failure_status(res->failure, res->error, &msg);
        if (status == 503)
            http_add_header(r, "Retry-After", "60");
        api_error(r, status, msg);
        break;
    }
    case CREATE_STORE_ERROR: api_store_error(r, res->store_rc); break;
    case CREATE_BUSY: api_error(r, 409, "The record is being generated."); break;
    case CREATE_NOTFOUND: api_not_found(r); break;
    case CREATE_QUOTA_USED: { /* the usage read again near the limit (records/quota.c) */
        bool img = res->rec.kind == KIND_IMG;
        metrics_quota_refused(img ? MQ_IMAGES : MQ_WORDS);
        api_error(r, 403, img ? "Your monthly image quota is used up."
                              : "Your monthly word quota is used up.");
        break;
    }
    case CREATE_QUOTA_BUSY:
        /* not used up, but the user's generations in flight may use it up (§19's
         * bound, records/quota.c): a retry once they have finished gets 2xx or 403 */
        http_add_header(r, "Retry-After", "1");
        api_error(r, 429, res->rec.kind == KIND_IMG
                              ? "Your other pictures being generated may use up your monthly "
                                "image quota: try again when they have finished."
                              : "Your other generations running now may use up your monthly "
                                "word quota: try again when they have finished.");
        break;
    case CREATED_DONE:
    case CREATED_PENDING:
    case CREATED_STREAM:
        location(app, r, res->rec.kind, res->rec.id);
        api_respond_record(app, r, api_create_status(cr, res->outcome), &res->rec);
        break;
    }
}

int api_create_status(const records_create_t *cr, create_outcome_t outcome)
{
    if (outcome == CREATED_PENDING)
        return 202;
    if (outcome == CREATED_DONE || outcome == CREATED_STREAM)
        return cr->req.regenerate ? 200 : 201; /* a regenerate's 200 is a create's 201 */
    return 0;
}

static bool prefers_async(http_req_t *r)
{
    const char *p = http_header(r, "Prefer");
    if (!p)
        return false;
    /* a comma-separated list of preferences; respond-async is a bare token */
    const char *s = p;
    while ((s = strcasestr(s, "respond-async")) != NULL) {
        bool start = s == p || s[-1] == ',' || s[-1] == ' ' || s[-1] == '\t';
        char after = s[13];
        if (start && (after == '\0' || after == ',' || after == ' ' || after == ';' || after == '\t'))
            return true;
        s += 13;
    }
    return false;
}

static const char *const tones[] = {"neutral", "friendly", "professional", "casual",
                                    "persuasive", "witty", "formal", "empathetic"};
static const char *const lengths[] = {"short", "medium", "long"};

bool api_tone_valid(const char *s)
{
    return one_of(s, tones, ARRAY_LEN(tones));
}

/* A BCP 47 tag's shape: 2 to 35 characters, a language subtag of 2 to 8 letters, then
 * subtags of 1 to 8 letters or digits, separated by '-'. */
bool api_language_tag(const char *s)
{
    size_t n = strlen(s), sub = 0, first = 0;
    if (n < 2 || n > 35)
        return false;
    bool in_first = true;
    for (size_t i = 0; i <= n; i++) {
        char ch = s[i];
        if (ch == '-' || ch == '\0') {
            if (sub == 0 || sub > 8 || (in_first && sub < 2))
                return false;
            if (in_first)
                first = sub;
            in_first = false;
            sub = 0;
            continue;
        }
        bool letter = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
        if (!letter && (in_first || !(ch >= '0' && ch <= '9')))
            return false;
        sub++;
    }
    return first >= 2;
}

/* An optional field whose value is one of set (§17, §3): sent empty is not sent; kept
 * in *out when valid, else the 422 "The selected NAME is invalid.". */
static void optional_choice(verrs_t *v, const kvlist_t *f, const char *name,
                            const char *const *set, size_t n, const char **out)
{
    const char *s = field_text(v, f, name, name, false, 64, NULL);
    if (s && *s && !one_of(s, set, n))
        verrs_add(v, name, "The selected %s is invalid.", name);
    else if (s && *s)
        *out = s;
}

/* The writing options of §17 (tone, language, length): a field sent empty is not sent.
 * The builtin generator writes English only. */
static void writing_options(verrs_t *v, const kvlist_t *f, const provider_t *prov, record_t *rec)
{
    optional_choice(v, f, "tone", tones, ARRAY_LEN(tones), &rec->tone);
    optional_choice(v, f, "length", lengths, ARRAY_LEN(lengths), &rec->length);
    const char *s = field_text(v, f, "language", "language", false, 64, NULL);
    if (s && *s && !api_language_tag(s))
        verrs_add(v, "language", "The language must be a BCP 47 language tag.");
    else if (s && *s && prov && strcmp(prov->name, "builtin") == 0 &&
             !(strncasecmp(s, "en", 2) == 0 && (s[2] == '\0' || s[2] == '-')))
        verrs_add(v, "language", "The builtin generator writes English only.");
    else if (s && *s)
        rec->language = s;
}

static int doc_fields(verrs_t *v, const kvlist_t *f, record_t *rec)
{
    rec->name = field_text(v, f, "name", "name", true, 255, NULL);
    rec->prompt = field_text(v, f, "prompt", "prompt", true, 16384, NULL);
    rec->creativity = 0.5;
    const char *s = field_text(v, f, "creativity", "creativity", false, 64, NULL);
    if (s) {
        double cr;
        if (!parse_decimal(s, &cr) || !creativity_valid(cr))
            verrs_add(v, "creativity", "The selected creativity is invalid.");
        else
            rec->creativity = cr == 0 ? 0 : cr; /* no -0 */
    }
    rec->template_id = 1;
    s = field_text(v, f, "template_id", "template id", false, 64, NULL);
    if (s) {
        int64_t t;
        if (!parse_uint(s, &t) || t < 1 || t > INT_MAX)
            verrs_add(v, "template_id", "The selected template id is invalid.");
        else
            rec->template_id = (int)t; /* one of the 52 or the user's own: api_template_check */
    }
    return 0;
}

static int img_fields(verrs_t *v, const kvlist_t *f, record_t *rec)
{
    rec->name = field_text(v, f, "name", "name", true, 255, NULL);
    rec->description = field_text(v, f, "description", "description", true, 4000, NULL);
    const char *s = field_text(v, f, "resolution", "resolution", true, 64, NULL);
    if (s && !one_of(s, resolutions, ARRAY_LEN(resolutions)))
        verrs_add(v, "resolution", "The selected resolution is invalid.");
    rec->resolution = s;
    s = field_text(v, f, "style", "style", false, 64, NULL);
    if (s && *s && !one_of(s, styles, ARRAY_LEN(styles)))
        verrs_add(v, "style", "The selected style is invalid.");
    rec->style = s && *s ? s : NULL;
    return 0;
}

void api_records_store(app_t *app, http_req_t *r, rec_kind_t kind)
{
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return;
    if (api_storage_full(app, r))
        return;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    record_t rec;
    memset(&rec, 0, sizeof(rec));
    rec.kind = kind;
    rec.user_id = http_user_id(r);
    if (kind == KIND_DOC) {
        doc_fields(&v, &f, &rec);
        writing_options(&v, &f, app->prov, &rec);
    }
    else
        img_fields(&v, &f, &rec);
    const char **tags = NULL; /* §23 */
    int ntags = 0;
    api_tags_field(&v, &f, "tags", http_arena(r), &tags, &ntags);
    if (ntags > 0 && !verrs_any(&v)) {
        /* the answer shows the spellings the user's tags have (the store gives them) */
        store_conn_t *c = api_conn(app, r);
        if (!c)
            return;
        int trc = api_tags_spell(c, rec.user_id, tags, ntags, http_arena(r));
        if (trc != STORE_OK) {
            api_store_error(r, trc);
            return;
        }
        buf_t b;
        buf_init(&b);
        jw_t w;
        jw_init(&w, &b);
        api_tags_json(&w, tags, ntags);
        rec.tags_json = arena_strdup(http_arena(r), buf_cstr(&b));
        buf_free(&b);
        rec.tags = tags;
        rec.ntags = ntags;
    }
    if (kind == KIND_DOC && !verrs_any(&v)) {
        int trc = api_template_check(app, r, &v, &rec);
        if (trc != STORE_OK) {
            api_store_error(r, trc);
            return;
        }
    }
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    records_create_t *cr = arena_alloc(http_arena(r), sizeof(*cr));
    memset(cr, 0, sizeof(*cr));
    cr->req.rec = rec;
    api_create_run(app, r, cr, &f);
}

/* ---- regenerate (§16) ---- */

/* The fields a regenerate's body gives instead of the record's (the store's rules;
 * none is required, an empty one is not sent). */
static void regen_fields(verrs_t *v, const kvlist_t *f, const provider_t *prov, record_t *rec)
{
    const char *s;
    if (rec->kind == KIND_DOC) {
        if ((s = field_text(v, f, "prompt", "prompt", false, 16384, NULL)) && *s)
            rec->prompt = s;
        s = field_text(v, f, "creativity", "creativity", false, 64, NULL);
        double cr;
        if (s && *s && (!parse_decimal(s, &cr) || !creativity_valid(cr)))
            verrs_add(v, "creativity", "The selected creativity is invalid.");
        else if (s && *s)
            rec->creativity = cr == 0 ? 0 : cr;
        s = field_text(v, f, "template_id", "template id", false, 64, NULL);
        int64_t t;
        if (s && *s && (!parse_uint(s, &t) || t < 1 || t > INT_MAX))
            verrs_add(v, "template_id", "The selected template id is invalid.");
        else if (s && *s)
            rec->template_id = (int)t;
        writing_options(v, f, prov, rec);
        return;
    }
    if ((s = field_text(v, f, "description", "description", false, 4000, NULL)) && *s)
        rec->description = s;
    optional_choice(v, f, "resolution", resolutions, ARRAY_LEN(resolutions), &rec->resolution);
    optional_choice(v, f, "style", styles, ARRAY_LEN(styles), &rec->style);
}

bool api_record_to_change(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id, kvlist_t *f,
                          store_conn_t **c, record_t *rec)
{
    if (api_body_fields(r, f) != 0 || !(*c = api_conn(app, r)))
        return false;
    int rc = records_get(app->records, *c, kind, http_user_id(r), id, NULL, NULL,
                         http_arena(r), rec);
    if (rc == STORE_NOTFOUND)
        api_not_found(r);
    else if (rc != STORE_OK)
        api_store_error(r, rc);
    return rc == STORE_OK;
}

void api_records_regenerate(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id)
{
    kvlist_t f;
    store_conn_t *c;
    record_t rec; /* the record's inputs, which the body's fields replace */
    if (!api_record_to_change(app, r, kind, id, &f, &c, &rec))
        return;
    int rc;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    regen_fields(&v, &f, app->prov, &rec);
    if (kind == KIND_DOC && !verrs_any(&v)) {
        /* the body's template, or the record's own: a deleted one is refused (§18) */
        rec.template_name = NULL;
        rc = api_template_check(app, r, &v, &rec);
        if (rc != STORE_OK) {
            api_store_error(r, rc);
            return;
        }
    }
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    if (api_storage_full(app, r))
        return;
    records_create_t *cr = arena_alloc(http_arena(r), sizeof(*cr));
    memset(cr, 0, sizeof(*cr));
    cr->req.rec = rec;
    cr->req.regenerate = true;
    api_create_run(app, r, cr, &f);
}

void api_create_run(app_t *app, http_req_t *r, records_create_t *cr, const kvlist_t *f)
{
    cr->arena = http_arena(r);
    kvlist_t *fields = arena_alloc(http_arena(r), sizeof(*f));
    memcpy(fields, f, sizeof(*f));
    cr->req.fields = fields;
    cr->done = create_done;
    cr->arg = r;
    cr->req.idempotency_key = http_header(r, "Idempotency-Key"); /* api/idempotency.c */
    const api_state_t *st = api_state(r); /* set by the router's quota check (§19) */
    cr->req.quota_limit = st->quota_limit;
    cr->req.quota_used = st->quota_used;
    cr->req.quota_at = st->quota_at;
    if (api_wants_stream(r)) {
        api_stream_create(app, r, cr);
        return;
    }
    cr->req.mode = prefers_async(r) || app->cfg->wait_limit <= 0 ? CREATE_ASYNC : CREATE_WAIT;
    http_suspend(r, api_create_suspended, on_create_resumed, cr);
}

/* ---- update ---- */

void api_records_update(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id)
{
    kvlist_t f;
    if (api_body_fields(r, &f) != 0)
        return;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    record_patch_t p = {.favorite = -1};
    bool present;
    p.name = field_text(&v, &f, "name", "name", false, 255, &present);
    if (present && p.name && *p.name == '\0')
        verrs_add(&v, "name", "The name field must not be empty.");
    else if (present && p.name) {
        const char *t = p.name;
        while (*t == ' ' || *t == '\t' || *t == '\n' || *t == '\r')
            t++;
        if (!*t)
            verrs_add(&v, "name", "The name field must not be empty.");
    }
    if (kind == KIND_DOC) {
        p.result = field_text(&v, &f, "result", "result", false, 0, NULL);
        if (p.result)
            p.words = uni_count_words(p.result, p.result ? strlen(p.result) : 0);
    }
    const char **tags; /* §23 */
    p.set_tags = api_tags_field(&v, &f, "tags", http_arena(r), &tags, &p.ntags);
    p.tags = tags;
    const char *fav = field_text(&v, &f, "favorite", "favorite", false, 16, &present);
    if (fav) {
        p.favorite = parse_bool(fav);
        if (p.favorite < 0)
            verrs_add(&v, "favorite", "The favorite field must be true or false.");
    }
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    record_t rec;
    int rc = records_update(app->records, c, kind, http_user_id(r), id, &p, http_arena(r), &rec);
    if (rc == STORE_NOTFOUND)
        api_not_found(r);
    else if (rc != STORE_OK)
        api_store_error(r, rc);
    else
        api_respond_record(app, r, 200, &rec);
}

/* ---- delete ---- */

void api_records_delete(app_t *app, http_req_t *r, rec_kind_t kind, int64_t id)
{
    store_conn_t *c = api_conn(app, r);
    if (!c)
        return;
    int rc = records_delete(app->records, c, kind, http_user_id(r), id);
    if (rc == STORE_NOTFOUND) {
        api_not_found(r);
        return;
    }
    if (rc != STORE_OK) {
        api_store_error(r, rc);
        return;
    }
    buf_reset(http_resp(r));
    buf_printf(http_resp(r), "{\"id\":%lld,\"object\":\"%s\",\"deleted\":true,\"status\":200}",
               (long long)id, kind_object[kind]);
    http_respond(r, 200);
}
