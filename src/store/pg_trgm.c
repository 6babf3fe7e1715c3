/* pg_trgm.c — which part of a search the PostgreSQL trigram index is asked for.
 *
 * A GIN scan of `name_fold LIKE '%garden note 4242%'` reads the posting list of every
 * trigram of the pattern, and those of "not", "ote" or " 42" hold most rows: at 1M
 * documents it reads ~2,200 index pages for the rows of one name. So the list SQL
 * (pg_lists.c) asks the index for at most two rare pieces of the search (ASCII letter
 * and digit runs whose trigrams are all rare, e.g. "4242") and checks the whole search
 * on the candidates with a LIKE the index cannot serve: the rows are exactly those of a
 * scan, since a row holding the search holds each of its pieces.
 *
 * How rare a trigram is comes from PostgreSQL's own statistics: migration 7 (since 9:
 * the folded columns, API.md §15) creates extended statistics on `show_trgm(column)`, whose ANALYZE (autovacuum's, or a
 * manual one) keeps the most common trigrams and their frequencies (an array's most
 * common elements); a trigram not among them is rarer than the least common listed.
 * They are read per connection and read again after STATS_TTL_S. Without them (not yet
 * analyzed, PostgreSQL 13) the whole search goes to the index, as before. */
#include "store/pg_int.h"

#include <stdlib.h>
#include <string.h>

#define STATS_TTL_S 60.0
#define RARE_FREQ 0.01    /* a piece's trigrams are each in at most 1 % of the rows, or
                           * rarer than every trigram the statistics list */
#define SELECTIVE 0.001   /* a piece this rare is enough alone; else a second is added */

/* One column's most common trigrams, sorted for bsearch. */
typedef struct {
    char (*tri)[4];
    float *freq;
    size_t n;
    float min_freq; /* a trigram not listed is rarer than this */
} trgm_col_t;

struct pg_trgm_stats {
    double read_at; /* mono_s(); 0 = never */
    trgm_col_t col[PG_TRGM_COLS];
};

static const char *const stat_names[PG_TRGM_COLS] = {
    "documents_name_trgm_freq", "documents_result_trgm_freq", "images_name_trgm_freq"};

void pg_trgm_free(pg_trgm_stats_t *st)
{
    if (!st)
        return;
    for (int i = 0; i < PG_TRGM_COLS; i++) {
        free(st->col[i].tri);
        free(st->col[i].freq);
    }
    free(st);
}

typedef struct {
    char tri[4];
    float freq;
} trgm_row_t;

static int tri_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* Reads the three columns' statistics (an error leaves them empty: the whole search
 * then goes to the index). */
static void stats_read(pg_conn_t *c, pg_trgm_stats_t *st)
{
    for (int i = 0; i < PG_TRGM_COLS; i++) {
        free(st->col[i].tri);
        free(st->col[i].freq);
        memset(&st->col[i], 0, sizeof(st->col[i]));
    }
    st->read_at = mono_s();
    PGresult *r = PQexec(c->pg,
                         "SELECT s.statistics_name, e.elem, e.freq FROM pg_stats_ext_exprs s,"
                         " unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs)"
                         " WITH ORDINALITY AS e(elem, freq, ord)"
                         " WHERE s.statistics_name LIKE '%\\_trgm\\_freq'"
                         " AND s.statistics_schemaname = current_schema() ORDER BY 1, e.ord");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        PQclear(r);
        return; /* e.g. PostgreSQL 13: no such view */
    }
    int rows = PQntuples(r);
    for (int i = 0; i < PG_TRGM_COLS; i++) {
        trgm_col_t *col = &st->col[i];
        col->tri = xmalloc((size_t)(rows ? rows : 1) * sizeof(*col->tri));
        col->freq = xmalloc((size_t)(rows ? rows : 1) * sizeof(*col->freq));
        bool first_null = true;
        for (int row = 0; row < rows; row++) {
            if (strcmp(PQgetvalue(r, row, 0), stat_names[i]) != 0)
                continue;
            float f = strtof(PQgetvalue(r, row, 2), NULL);
            if (PQgetisnull(r, row, 1)) {
                /* the frequencies array ends with min, max and null fraction */
                if (first_null)
                    col->min_freq = f;
                first_null = false;
                continue;
            }
            const char *t = PQgetvalue(r, row, 1);
            if (strlen(t) != 3)
                continue; /* multibyte trigrams: pieces are ASCII only */
            memcpy(col->tri[col->n], t, 4);
            col->freq[col->n++] = f;
        }
        /* sorted by the server's text order; sort by bytes for bsearch (with freq) */
        trgm_row_t *tmp = xmalloc((col->n ? col->n : 1) * sizeof(*tmp));
        for (size_t j = 0; j < col->n; j++) {
            memcpy(tmp[j].tri, col->tri[j], 4);
            tmp[j].freq = col->freq[j];
        }
        qsort(tmp, col->n, sizeof(*tmp), tri_cmp);
        for (size_t j = 0; j < col->n; j++) {
            memcpy(col->tri[j], tmp[j].tri, 4);
            col->freq[j] = tmp[j].freq;
        }
        free(tmp);
        if (col->n == 0)
            col->min_freq = 0;
    }
    PQclear(r);
}

/* The frequency of the trigram at t (ASCII, A-Z folded here), and whether it is rare:
 * listed at most RARE_FREQ, or not listed at all (rarer than every listed one; its
 * frequency is then taken as half the least listed one's, for ranking). */
static float tri_freq(const trgm_col_t *col, const char *t, bool *rare)
{
    *rare = true;
    char key[4];
    for (int k = 0; k < 3; k++)
        key[k] = t[k] >= 'A' && t[k] <= 'Z' ? (char)(t[k] - 'A' + 'a') : t[k];
    key[3] = '\0';
    size_t lo = 0, hi = col->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = strcmp(col->tri[mid], key);
        if (cmp == 0) {
            *rare = col->freq[mid] <= RARE_FREQ;
            return col->freq[mid];
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return col->min_freq / 2;
}

static bool ascii_alnum(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

static char *piece_pattern(const char *s, size_t len, arena_t *a)
{
    char *p = arena_alloc(a, len + 3);
    p[0] = '%';
    for (size_t i = 0; i < len; i++)
        p[1 + i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
    p[len + 1] = '%';
    p[len + 2] = '\0';
    return p;
}

void pg_trgm_pieces(pg_conn_t *c, int col, const char *search, const char *whole, arena_t *a,
                    const char *out[2])
{
    out[0] = out[1] = whole;
    if (!c->trgm)
        c->trgm = xcalloc(1, sizeof(*c->trgm));
    if (c->trgm->read_at == 0 || mono_s() - c->trgm->read_at > STATS_TTL_S)
        stats_read(c, c->trgm);
    const trgm_col_t *tc = &c->trgm->col[col];
    if (tc->n == 0)
        return;
    /* the two rarest pieces: maximal runs of ASCII letters and digits (pg_trgm's word
     * characters) whose every trigram is rare; a piece's rarity is its rarest trigram */
    const char *best[2] = {NULL, NULL};
    size_t best_len[2] = {0, 0};
    float best_f[2] = {2, 2};
    size_t n = strlen(search);
    for (size_t i = 0; i < n;) {
        if (!ascii_alnum(search[i])) {
            i++;
            continue;
        }
        size_t end = i;
        while (end < n && ascii_alnum(search[end]))
            end++;
        /* runs of rare trigrams inside the word [i, end) */
        for (size_t t = i; t + 3 <= end;) {
            bool rare;
            float f = tri_freq(tc, search + t, &rare);
            if (!rare) {
                t++;
                continue;
            }
            size_t from = t;
            float min = f;
            for (t++; t + 3 <= end; t++) {
                float g = tri_freq(tc, search + t, &rare);
                if (!rare)
                    break;
                min = g < min ? g : min;
            }
            /* the piece is search[from, t + 2) */
            int slot = min < best_f[0] ? 0 : min < best_f[1] ? 1 : -1;
            if (slot == 0) {
                best[1] = best[0], best_len[1] = best_len[0], best_f[1] = best_f[0];
            }
            if (slot >= 0) {
                best[slot] = search + from;
                best_len[slot] = t + 2 - from;
                best_f[slot] = min;
            }
        }
        i = end;
    }
    if (!best[0])
        return;
    out[0] = out[1] = piece_pattern(best[0], best_len[0], a);
    if (best[1] && best_f[0] > SELECTIVE)
        out[1] = piece_pattern(best[1], best_len[1], a);
}
