/* server_coding.c — §26 on the server's answers: which buffered answer is compressed,
 * with what, and its ETag per coding. See server.h ("§26 compression") and compress.h. */
#include "http/compress.h"
#include "http/server_int.h"

#include <string.h>
#include <strings.h>

void http_set_no_compress(http_req_t *r)
{
    r->no_compress = true;
}

http_coding_t http_req_coding(http_req_t *r)
{
    return http_coding_pick(http_header(r, "Accept-Encoding"));
}

void http_set_content_coding(http_req_t *r, http_coding_t c)
{
    r->coded = c != HTTP_CODING_IDENTITY;
    r->coding = (int)c;
}

bool http_if_none_match(http_req_t *r, const char *etag, const char *content_type)
{
    const char *inm = http_header(r, "If-None-Match");
    if (!inm)
        return false;
    http_coding_t c = r->no_compress || !http_type_compressible(content_type)
                          ? HTTP_CODING_IDENTITY
                          : http_req_coding(r);
    char coded[256];
    http_etag_coded(etag, c, coded, sizeof(coded));
    return http_etag_listed(inm, coded);
}

static int etag_slot(http_req_t *r)
{
    for (int i = 0; i < r->nhdr; i++)
        if (strcasecmp(r->hdr_name[i], "ETag") == 0)
            return i;
    return -1;
}

static void set_coded_etag(http_req_t *r, int slot, http_coding_t c)
{
    char coded[256];
    http_etag_coded(r->hdr_value[slot], c, coded, sizeof(coded));
    r->hdr_value[slot] = arena_strdup(&r->arena, coded);
}

const char *http_code_answer(http_req_t *r, bool *vary)
{
    *vary = false;
    if (!http_type_compressible(r->content_type))
        return NULL;
    *vary = true;
    int slot = etag_slot(r);
    if (r->status == 304) {
        /* a handler's early 304 (http_if_none_match): the ETag the client holds */
        http_coding_t want = r->no_compress ? HTTP_CODING_IDENTITY : http_req_coding(r);
        if (slot >= 0 && want != HTTP_CODING_IDENTITY) {
            char coded[256];
            http_etag_coded(r->hdr_value[slot], want, coded, sizeof(coded));
            if (http_etag_listed(http_header(r, "If-None-Match"), coded))
                r->hdr_value[slot] = arena_strdup(&r->arena, coded);
        }
        return NULL;
    }
    if (!r->coded && !r->no_compress && r->resp.len >= HTTP_COMPRESS_MIN) {
        http_coding_t want = http_req_coding(r);
        if (want != HTTP_CODING_IDENTITY) {
            buf_t out;
            buf_init(&out);
            if (http_compress(want, r->resp.data, r->resp.len, &out)) {
                buf_free(&r->resp);
                r->resp = out;
                r->coded = true;
                r->coding = (int)want;
            } else {
                buf_free(&out);
            }
        }
    }
    http_coding_t c = r->coded ? (http_coding_t)r->coding : HTTP_CODING_IDENTITY;
    if (slot >= 0 && c != HTTP_CODING_IDENTITY)
        set_coded_etag(r, slot, c);
    if (r->status == 200 && slot >= 0 && r->method &&
        (strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0) &&
        http_etag_listed(http_header(r, "If-None-Match"), r->hdr_value[slot])) {
        r->status = 304;
        buf_free(&r->resp);
        return NULL;
    }
    return c != HTTP_CODING_IDENTITY ? http_coding_name(c) : NULL;
}
