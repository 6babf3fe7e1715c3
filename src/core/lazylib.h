/* lazylib.h — shared libraries loaded at the first call of one of their functions.
 *
 * An idle server maps only what it uses (docs/benchmarks.md, "Idle memory"): linking
 * libpq, libcurl, OpenSSL's libcrypto, libzip, cjose and the PDF export's cairo, pango
 * and fontconfig cost ~8 MB of RSS at start (their relocated pages, their constructors,
 * and their own dependencies: Kerberos, LDAP, gnutls, glib, X11...), on a server that
 * may never export, call out or use PostgreSQL. Those libraries are not linked: the
 * stubs tools/lazystubs.py generates (core/curl_lazy.c, export/export_lazy.c...) define
 * each function the program calls under its own name, and the first call of any of a
 * library's functions loads it (dlopen) and resolves them all, once for the process
 * (pthread_once: any thread may be the first). A library that cannot be loaded stops
 * the process with its name, as the dynamic linker would have at start (the Debian
 * package depends on each of them: debian/control). */
#ifndef INK_LAZYLIB_H
#define INK_LAZYLIB_H

#include <pthread.h>
#include <stddef.h>

typedef struct lazylib {
    const char *soname;
    const char *const *names;
    void **slots;
    size_t n;
    pthread_once_t once;
    /* run once after the library is resolved, before any stub returns (e.g. libcurl's
     * curl_global_init); it must call the library through lazylib_raw, not the stubs */
    void (*after)(struct lazylib *l);
} lazylib_t;

/* A function's name as the library exports it (the headers may rename it: ICU's
 * ucol_open is ucol_open_72). */
#define LAZYLIB_NAME(f) LAZYLIB_STR(f)
#define LAZYLIB_STR(f) #f

/* The address of function I of L, loading L first if it is not yet. */
void *lazylib_get(lazylib_t *l, size_t i);

/* The address of NAME in L, resolved already (for L's `after` hook). */
void *lazylib_raw(const lazylib_t *l, const char *name);

#endif
