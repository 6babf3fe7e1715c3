/* thumb.c — thumbnails of the pictures for the gallery (GET /media/<key>.png?w=N):
 * decoded with libpng's simplified API, the centre square cut out, scaled down by area
 * averaging (each output pixel is the mean of the source pixels it covers, so nothing
 * aliases), encoded with png_encode_rgb; and the process-wide cache, bounded in bytes,
 * least recently used out first. */
#include "media/thumb.h"

#include "gen/png.h"

#include <png.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define THUMB_SRC_MAX 4096

bool thumb_parse_width(const char *s, int *w)
{
    if (!s || !*s || strlen(s) > 5)
        return false;
    int v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (*p - '0');
    }
    if (v < THUMB_MIN || v > THUMB_MAX)
        return false;
    *w = v;
    return true;
}

/* Box-filters the s×s square of src (stride sw pixels, origin x0,y0) to o×o. */
static void scale_square(const uint8_t *src, int sw, int x0, int y0, int s, int o, uint8_t *dst)
{
    /* the horizontal pass: s rows of o pixels, as sums kept in 32 bits */
    uint32_t *row = xmalloc((size_t)s * (size_t)o * 3 * sizeof(uint32_t));
    for (int y = 0; y < s; y++) {
        const uint8_t *line = src + ((size_t)(y0 + y) * (size_t)sw + (size_t)x0) * 3;
        for (int ox = 0; ox < o; ox++) {
            int a = (int)((int64_t)ox * s / o), b = (int)((int64_t)(ox + 1) * s / o);
            uint32_t sum[3] = {0, 0, 0};
            for (int x = a; x < b; x++)
                for (int c = 0; c < 3; c++)
                    sum[c] += line[x * 3 + c];
            for (int c = 0; c < 3; c++)
                row[((size_t)y * (size_t)o + (size_t)ox) * 3 + (size_t)c] = sum[c] * 256u / (uint32_t)(b - a);
        }
    }
    /* the vertical pass (values carry 8 bits of fraction until the end) */
    for (int oy = 0; oy < o; oy++) {
        int a = (int)((int64_t)oy * s / o), b = (int)((int64_t)(oy + 1) * s / o);
        for (int ox = 0; ox < o; ox++)
            for (int c = 0; c < 3; c++) {
                uint64_t sum = 0;
                for (int y = a; y < b; y++)
                    sum += row[((size_t)y * (size_t)o + (size_t)ox) * 3 + (size_t)c];
                uint64_t n = (uint64_t)(b - a) * 256u;
                dst[((size_t)oy * (size_t)o + (size_t)ox) * 3 + (size_t)c] = (uint8_t)((sum + n / 2) / n);
            }
    }
    free(row);
}

int thumb_make(const void *png, size_t n, int w, buf_t *out)
{
    if (!png || n == 0 || w < 1)
        return -1;
    png_image im;
    memset(&im, 0, sizeof(im));
    im.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&im, png, n))
        return -1;
    if (im.width == 0 || im.height == 0 || im.width > THUMB_SRC_MAX || im.height > THUMB_SRC_MAX) {
        png_image_free(&im);
        return -1;
    }
    im.format = PNG_FORMAT_RGB;
    uint8_t *px = xmalloc(PNG_IMAGE_SIZE(im));
    if (!png_image_finish_read(&im, NULL, px, 0, NULL)) {
        free(px);
        png_image_free(&im);
        return -1;
    }
    int W = (int)im.width, H = (int)im.height;
    int s = W < H ? W : H, o = w < s ? w : s;
    uint8_t *dst = xmalloc((size_t)o * (size_t)o * 3);
    scale_square(px, W, (W - s) / 2, (H - s) / 2, s, o, dst);
    free(px);
    int rc = png_encode_rgb(dst, o, o, 6, out);
    free(dst);
    return rc == 0 ? 0 : -1;
}

/* ---- the cache ---------------------------------------------------------------------- */

typedef struct entry {
    struct entry *prev, *next; /* most recently used first */
    char key[48];
    int w;
    size_t n;
    unsigned char *data;
} entry_t;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static entry_t *head, *tail;
static size_t held;

static void unlink_entry(entry_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        tail = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(entry_t *e)
{
    e->next = head;
    e->prev = NULL;
    if (head)
        head->prev = e;
    head = e;
    if (!tail)
        tail = e;
}

static entry_t *find(const char *key, int w)
{
    for (entry_t *e = head; e; e = e->next)
        if (e->w == w && strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

bool thumb_cache_get(const char *key, int w, buf_t *out)
{
    pthread_mutex_lock(&mu);
    entry_t *e = find(key, w);
    if (e) {
        unlink_entry(e);
        push_front(e);
        buf_append(out, e->data, e->n);
    }
    pthread_mutex_unlock(&mu);
    return e != NULL;
}

static void drop(entry_t *e)
{
    unlink_entry(e);
    held -= e->n;
    free(e->data);
    free(e);
}

void thumb_cache_put(const char *key, int w, const void *data, size_t n)
{
    if (n > THUMB_CACHE_BYTES || strlen(key) >= sizeof(((entry_t *)0)->key))
        return;
    entry_t *e = xcalloc(1, sizeof(*e));
    unsigned char *copy = xmalloc(n ? n : 1);
    memcpy(copy, data, n);
    strcpy(e->key, key);
    e->w = w;
    e->n = n;
    e->data = copy;
    pthread_mutex_lock(&mu);
    entry_t *old = find(key, w);
    if (old)
        drop(old);
    while (tail && held + n > THUMB_CACHE_BYTES)
        drop(tail);
    push_front(e);
    held += n;
    pthread_mutex_unlock(&mu);
}

size_t thumb_cache_clear(void)
{
    pthread_mutex_lock(&mu);
    size_t was = held;
    while (tail)
        drop(tail);
    pthread_mutex_unlock(&mu);
    return was;
}
