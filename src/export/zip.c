/* zip.c — several documents as one ZIP archive (API.md §23: a bulk export), with libzip:
 * each rendered as export_render renders it alone, named as a single export names its
 * file (filename.c), a name already taken getting " (2)", " (3)"... before its
 * extension, UTF-8 names flagged as such. Built in memory. */
#include "export/export.h"

#include "core/log.h"

#include <stdlib.h>
#include <string.h>
#include <zip.h>

/* The name of entry i: its file name, with a copy number past the names before it. */
static char *entry_name(char **taken, size_t i, export_format_t f, const char *name)
{
    for (int copy = 1;; copy++) {
        buf_t b;
        buf_init(&b);
        export_file_name(&b, name, f, copy);
        bool used = false;
        for (size_t j = 0; j < i && !used; j++)
            used = strcmp(taken[j], buf_cstr(&b)) == 0;
        if (!used)
            return buf_steal(&b);
        buf_free(&b);
    }
}

int export_zip(export_format_t f, const char *const *names, const char *const *langs,
               const char *const *texts, size_t n, buf_t *out)
{
    int rc = -1;
    buf_t *files = calloc(n ? n : 1, sizeof(*files));
    char **taken = calloc(n ? n : 1, sizeof(*taken));
    zip_error_t err;
    zip_error_init(&err);
    zip_t *z = NULL;
    zip_source_t *archive = NULL;
    if (!files || !taken)
        goto out;
    archive = zip_source_buffer_create(NULL, 0, 0, &err);
    if (!archive)
        goto out;
    zip_source_keep(archive); /* it outlives the zip_t that writes into it */
    if (!(z = zip_open_from_source(archive, ZIP_TRUNCATE, &err)))
        goto out;
    for (size_t i = 0; i < n; i++) {
        buf_init(&files[i]);
        const char *t = texts[i] ? texts[i] : "";
        if (export_render(f, names[i], langs ? langs[i] : NULL, t, strlen(t), &files[i]) != 0)
            goto out;
        taken[i] = entry_name(taken, i, f, names[i]);
        /* the bytes stay valid until zip_close */
        zip_source_t *src = zip_source_buffer(z, files[i].data ? files[i].data : "",
                                              files[i].len, 0);
        if (!src)
            goto out;
        if (zip_file_add(z, taken[i], src, ZIP_FL_ENC_UTF_8) < 0) {
            zip_source_free(src);
            goto out;
        }
    }
    if (zip_close(z) != 0)
        goto out;
    z = NULL;
    if (zip_source_open(archive) != 0)
        goto out;
    char chunk[16384];
    zip_int64_t got;
    while ((got = zip_source_read(archive, chunk, sizeof(chunk))) > 0)
        buf_append(out, chunk, (size_t)got);
    zip_source_close(archive);
    rc = got == 0 ? 0 : -1;
out:
    if (rc != 0)
        log_error("export: zip: %s", z ? zip_strerror(z) : zip_error_strerror(&err));
    if (z)
        zip_discard(z);
    if (archive)
        zip_source_free(archive);
    zip_error_fini(&err);
    for (size_t i = 0; files && taken && i < n; i++) {
        buf_free(&files[i]);
        free(taken[i]);
    }
    free(files);
    free(taken);
    return rc;
}
