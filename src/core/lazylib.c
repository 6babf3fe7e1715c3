/* lazylib.c — see lazylib.h. */
#include "core/lazylib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pthread_once's routine takes no argument: the library being loaded is the calling
 * thread's (pthread_once runs the routine in the thread that calls it). */
static _Thread_local lazylib_t *loading;

static void load(void)
{
    lazylib_t *l = loading;
    /* RTLD_LOCAL: nothing of it is seen by the libraries loaded at start */
    void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "inkwell: cannot load %s: %s\n", l->soname, dlerror());
        abort();
    }
    for (size_t i = 0; i < l->n; i++) {
        if (!(l->slots[i] = dlsym(h, l->names[i]))) {
            fprintf(stderr, "inkwell: %s has no %s\n", l->soname, l->names[i]);
            abort();
        }
    }
    if (l->after)
        l->after(l);
    /* the handle is never closed: the stubs' addresses stay valid for the process */
}

void *lazylib_get(lazylib_t *l, size_t i)
{
    loading = l;
    pthread_once(&l->once, load);
    return l->slots[i];
}

void *lazylib_raw(const lazylib_t *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->names[i], name) == 0)
            return l->slots[i];
    return NULL;
}
