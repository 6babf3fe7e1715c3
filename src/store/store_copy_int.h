/* store_copy_int.h — what a backend does for `inkwell migrate` (store_copy.h): list its
 * tables and columns, read a table's rows as text, write rows into an empty store in
 * one transaction. Values travel in one form whatever the backend, so a row's checksum
 * is the same on both sides: integers in decimal, booleans 0 or 1, reals as "%.17g",
 * texts as they are (a packed SQLite text unpacked), NULL as a NULL pointer. For the
 * backends and store/copy.c only. */
#ifndef INK_STORE_COPY_INT_H
#define INK_STORE_COPY_INT_H

#include "store/store.h"

#include <stdbool.h>
#include <stddef.h>

/* COPY_UNTYPED: a SQLite column of no declared type (CREATE TABLE AS of an expression):
 * read by each value's own type, written as the other side's column says. */
typedef enum {
    COPY_INT,
    COPY_REAL,
    COPY_TEXT,
    COPY_BOOL,
    COPY_BLOB,
    COPY_PACKED,
    COPY_UNTYPED
} copy_type_t;

typedef struct {
    const char *name;
    copy_type_t type;
} copy_col_t;

/* One row: vals[i] (lens[i] bytes, NUL-terminated) or NULL, in the order of the columns
 * asked for. Nonzero stops the read (its value is returned). */
typedef int (*copy_row_fn)(void *arg, const char *const *vals, const size_t *lens);

typedef struct store_copy_ops {
    /* Every table of the schema (no backend's own internal or shadow tables). */
    int (*tables)(store_conn_t *c, arena_t *a, const char ***names, size_t *n);
    /* The table's columns, in their order. */
    int (*columns)(store_conn_t *c, const char *table, arena_t *a, copy_col_t **cols,
                   size_t *n);
    int (*count)(store_conn_t *c, const char *table, int64_t *n);
    /* Every row of the table, columns cols[0..n) (names of the table's own columns). */
    int (*read)(store_conn_t *c, const char *table, const copy_col_t *cols, size_t n,
                copy_row_fn fn, void *arg);
    /* The table's id sequence: the highest id it has handed out (0 when none). */
    int (*seq_get)(store_conn_t *c, const char *table, const char *idcol, int64_t *v);
    /* Writing: begin opens the transaction (the backend's triggers off: the rows come
     * with what they made); table_begin .. row .. table_end per table (the backend
     * fills its own columns the source has not: an order key, a search folding);
     * seq_set after the rows; end commits (commit) or rolls back, triggers back on. */
    int (*write_begin)(store_conn_t *c);
    int (*table_begin)(store_conn_t *c, const char *table, const copy_col_t *cols, size_t n);
    int (*row)(store_conn_t *c, const char *const *vals, const size_t *lens);
    int (*table_end)(store_conn_t *c);
    int (*seq_set)(store_conn_t *c, const char *table, const char *idcol, int64_t v);
    int (*write_end)(store_conn_t *c, bool commit);
} store_copy_ops_t;

extern const store_copy_ops_t sq_copy_ops, pg_copy_ops;

/* The types of cols[0..n) as c's own table has them (by name; text when it has no
 * such column), in a; NULL when its columns cannot be read (copy.c). */
copy_type_t *store_copy_types(store_conn_t *c, const char *table, const copy_col_t *cols,
                              size_t n, arena_t *a);

/* A backend's ops from its functions p_tables, p_columns, ... */
#define STORE_COPY_OPS(p)                                                                  \
    {.tables = p##_tables, .columns = p##_columns, .count = p##_count, .read = p##_read,  \
     .seq_get = p##_seq_get, .write_begin = p##_write_begin,                              \
     .table_begin = p##_table_begin, .row = p##_row, .table_end = p##_table_end,          \
     .seq_set = p##_seq_set, .write_end = p##_write_end}

/* The text form of a real (the one both sides write and hash). */
#define COPY_REAL_FMT "%.17g"

#endif
