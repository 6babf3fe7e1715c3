/* req.c — the accessors of a request (server.h): what the handler reads of an
 * http_req_t and how it builds its answer, the fields themselves being private to
 * src/http/ (req_int.h); and detached requests for unit tests and fuzzers. */
#include "http/req_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

arena_t *http_arena(http_req_t *r)
{
    return &r->arena;
}

const char *http_method(const http_req_t *r)
{
    return r->method;
}

const char *http_path(const http_req_t *r)
{
    return r->path;
}

const char *http_query(const http_req_t *r)
{
    return r->query;
}

const char *http_body(const http_req_t *r, size_t *len)
{
    *len = r->body.len;
    return r->body.data;
}

bool http_body_too_large(const http_req_t *r)
{
    return r->body_too_large;
}

const char *http_req_id(const http_req_t *r)
{
    return r->id;
}

http_server_t *http_req_server(http_req_t *r)
{
    return r->srv;
}

void *http_app(http_req_t *r)
{
    return r->app;
}

int64_t http_user_id(const http_req_t *r)
{
    return r->user_id;
}

void http_set_user_id(http_req_t *r, int64_t user_id)
{
    r->user_id = user_id;
}

void http_set_metric_route(http_req_t *r, int route)
{
    r->metric_route = route;
}

void *http_wait(http_req_t *r)
{
    return r->wait;
}

void http_set_app_state(http_req_t *r, void *state)
{
    r->app_state = state;
}

void *http_app_state(http_req_t *r)
{
    return r->app_state;
}

buf_t *http_resp(http_req_t *r)
{
    return &r->resp;
}

void http_set_content_type(http_req_t *r, const char *content_type)
{
    r->content_type = content_type;
}

int http_status(const http_req_t *r)
{
    return r->status;
}

bool http_responded(const http_req_t *r)
{
    return r->responded;
}

http_req_t *http_req_detached(const char *method, const char *path, const char *query,
                              const void *body, size_t len)
{
    http_req_t *r = xcalloc(1, sizeof(*r));
    arena_init(&r->arena);
    buf_init(&r->body);
    buf_init(&r->resp);
    r->method = arena_strdup(&r->arena, method ? method : "GET");
    r->path = arena_strdup(&r->arena, path ? path : "/");
    r->query = arena_strdup(&r->arena, query ? query : "");
    if (len)
        buf_append(&r->body, body, len);
    r->resp_fd = -1;
    strcpy(r->id, "detached");
    return r;
}

void http_req_free_detached(http_req_t *r)
{
    if (!r)
        return;
    if (r->resp_fd >= 0)
        close(r->resp_fd);
    buf_free(&r->body);
    buf_free(&r->resp);
    arena_free(&r->arena);
    free(r);
}
