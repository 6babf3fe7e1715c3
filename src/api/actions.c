/* actions.c — POST /documents/{id}/actions (API.md §17): a completed document's text
 * rewritten by the generator, whole or a selection of it. The request is checked here
 * (the action and its fields, the document's state, the selection against its text in
 * code points); then it is a regeneration whose job carries the action
 * (records_req_t.action), answered like one (records.c api_create_run: wait 200,
 * async 202, stream 200, Idempotency-Key). The job runner (records/jobs.c) rewrites the
 * part and splices it into the unchanged rest (records/actions.c). */
#include "api/api_int.h"

#include "core/utf8.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* A selection offset: -1 when not sent (or sent empty), -2 after an error. */
static int64_t offset_field(verrs_t *v, const kvlist_t *f, const char *key)
{
    const char *s = field_text(v, f, key, key, false, 32, NULL);
    if (!s)
        return verrs_any(v) && kv_get(f, key) ? -2 : -1;
    if (!*s)
        return -1;
    int64_t n;
    if (!parse_uint(s, &n)) {
        verrs_add(v, key, "The %s must be a whole number of at least 0.", key);
        return -2;
    }
    return n;
}

/* The action's own fields: the action, the tone or language it needs. */
static void action_fields(app_t *app, verrs_t *v, const kvlist_t *f, record_t *rec,
                          const char **action)
{
    const char *a = field_text(v, f, "action", "action", true, 64, NULL);
    if (a && !records_action_valid(a)) {
        verrs_add(v, "action", "The selected action is invalid.");
        a = NULL;
    }
    *action = a;
    const char *tone = field_text(v, f, "tone", "tone", false, 64, NULL);
    if (tone && *tone && !api_tone_valid(tone))
        verrs_add(v, "tone", "The selected tone is invalid.");
    else if (a && strcmp(a, "change_tone") == 0 && !(tone && *tone))
        verrs_add(v, "tone", "The tone field is required when action is change_tone.");
    else if (a && strcmp(a, "change_tone") == 0)
        rec->tone = tone;
    bool builtin = strcmp(app->prov->name, "builtin") == 0;
    if (a && strcmp(a, "translate") == 0 && builtin) {
        verrs_add(v, "action", "The builtin generator cannot translate: it writes English only.");
        return;
    }
    const char *lang = field_text(v, f, "language", "language", false, 64, NULL);
    if (lang && *lang && !api_language_tag(lang))
        verrs_add(v, "language", "The language must be a BCP 47 language tag.");
    else if (a && strcmp(a, "translate") == 0 && !(lang && *lang))
        verrs_add(v, "language", "The language field is required when action is translate.");
    else if (a && strcmp(a, "translate") == 0)
        rec->language = lang;
}

/* The selection, both offsets or neither, 0 <= start <= end <= the text's length in
 * code points. */
static void selection_fields(verrs_t *v, const kvlist_t *f, const char *text, int64_t *start,
                             int64_t *end)
{
    *start = offset_field(v, f, "selection_start");
    *end = offset_field(v, f, "selection_end");
    if (*start == -2 || *end == -2)
        return;
    if (*start >= 0 && *end < 0) {
        verrs_add(v, "selection_end", "The selection_end field is required when selection_start is present.");
        return;
    }
    if (*end >= 0 && *start < 0) {
        verrs_add(v, "selection_start", "The selection_start field is required when selection_end is present.");
        return;
    }
    if (*start < 0)
        return;
    long long len = utf8_count(text, strlen(text));
    if (*start > len)
        verrs_add(v, "selection_start", "The selection_start must be between 0 and %lld.", len);
    else if (*end > len)
        verrs_add(v, "selection_end", "The selection_end must be between 0 and %lld.", len);
    else if (*end < *start)
        verrs_add(v, "selection_end", "The selection_end must not be before selection_start.");
}

void api_documents_action(app_t *app, http_req_t *r, int64_t id)
{
    kvlist_t f;
    store_conn_t *c;
    record_t rec;
    if (!api_record_to_change(app, r, KIND_DOC, id, &f, &c, &rec))
        return;
    verrs_t v;
    verrs_init(&v, http_arena(r));
    const char *action;
    action_fields(app, &v, &f, &rec, &action);
    if (verrs_any(&v)) {
        api_validation_error(r, &v);
        return;
    }
    /* A document being generated is refused by the store (409, §16) once the
     * Idempotency-Key hook has had its say: a retry of an accepted action is replayed
     * however the record stands. A selection is checked against the latest text. */
    bool busy = rec.state == REC_QUEUED || rec.state == REC_GENERATING;
    if (!busy && !rec.result) {
        api_error(r, 409, "The document has no result yet.");
        return;
    }
    int64_t start = -1, end = -1;
    if (rec.result) /* (a first generation still running has none: its 409 follows) */
        selection_fields(&v, &f, rec.result, &start, &end);
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
    cr->req.action = action;
    cr->req.sel_start = start;
    cr->req.sel_end = end;
    api_create_run(app, r, cr, &f);
}
