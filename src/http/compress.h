/* compress.h — §26: content codings of answers (gzip, br, zstd).
 *
 * The negotiation is a pure function of Accept-Encoding (http_coding_pick); the server
 * (server.c send_response) applies it to every buffered answer of a compressible type
 * of HTTP_COMPRESS_MIN bytes or more, unless the handler marked the answer
 * http_set_no_compress (an answer carrying a key or a secret) or coded it itself
 * (http_set_content_coding: a copy compressed once, e.g. a static file). Streams and
 * answers sent from a file are never compressed.
 *
 * Rules (docs/design.md "Compression"):
 * - each coding's quality is its own entry's q, else the entry "*"'s, else 0;
 *   "x-gzip" is gzip; unknown codings are ignored; an entry whose q is not a valid
 *   qvalue (0..1, at most three decimals) is ignored; a coding named twice keeps its
 *   first entry;
 * - the coding of highest quality > 0 wins, ties going zstd, then br, then gzip; it is
 *   used unless identity is named (by its own entry, else by "*") with a strictly
 *   higher quality ("gzip;q=0.5, identity" stays uncompressed, "gzip;q=0.5" does not);
 * - no header, an empty one, or nothing acceptable (identity;q=0 with no coding
 *   acceptable included): identity, the answer uncompressed (RFC 9110 §12.5.3 lets a
 *   server do that rather than answer 406). */
#ifndef INK_HTTP_COMPRESS_H
#define INK_HTTP_COMPRESS_H

#include "core/util.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    HTTP_CODING_IDENTITY = 0,
    HTTP_CODING_GZIP,
    HTTP_CODING_BR,
    HTTP_CODING_ZSTD,
    HTTP_CODING_COUNT
} http_coding_t;

/* Answers smaller than this are sent as they are. */
#define HTTP_COMPRESS_MIN 1024

/* The levels (docs/benchmarks.md "Compression" measured them on list pages). */
#define HTTP_GZIP_LEVEL 4
#define HTTP_BR_LEVEL 4
#define HTTP_ZSTD_LEVEL 3

/* The coding an Accept-Encoding value picks (NULL: none sent). Pure. */
http_coding_t http_coding_pick(const char *accept_encoding);
/* "gzip", "br", "zstd"; "identity". */
const char *http_coding_name(http_coding_t c);
/* True for JSON (and +json), text/..., JavaScript, SVG and XML types. */
bool http_type_compressible(const char *content_type);
/* Appends in[0..len) compressed with c to out; false on failure (out as it was). */
bool http_compress(http_coding_t c, const void *in, size_t len, buf_t *out);
/* The same at the coding's highest level (gzip 9, br 11, zstd 19): for a copy made once
 * and sent many times (the web app's files). */
bool http_compress_best(http_coding_t c, const void *in, size_t len, buf_t *out);
/* An ETag with the coding added: "<tag>" -> "<tag>-gzip", W/"<tag>" -> W/"<tag>-gzip";
 * identity (or a value that is not a quoted tag): the tag as it is. Into out (size n). */
void http_etag_coded(const char *etag, http_coding_t c, char *out, size_t n);
/* True when an If-None-Match value lists etag ("*" included; weak comparison). */
bool http_etag_listed(const char *if_none_match, const char *etag);

#endif
