/* curl_lazy_va.c — what core/curl_lazy.c (generated) cannot be: libcurl's variadic
 * functions, and its global initialisation when it is loaded.
 *
 * libcurl is loaded at the first call of one of its functions (core/lazylib.h), so its
 * curl_global_init (which Debian 12's 7.88 makes thread-safe only where the platform
 * has atomics, and which loads OpenSSL: ~3 MB of an idle server) runs there, once,
 * inside the loader's pthread_once, before any stub returns: whichever thread calls
 * libcurl first, the others wait for it. The callers' own curl_global_init calls are
 * then only counted (libcurl keeps a count). */
#include "core/lazylib.h"

#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void curl_lazy_init(lazylib_t *l);
void *lazy_curl_easy_setopt(void);
void *lazy_curl_easy_getinfo(void);
void *lazy_curl_share_setopt(void);

void curl_lazy_init(lazylib_t *l)
{
    CURLcode (*init)(long) = (CURLcode(*)(long))lazylib_raw(l, "curl_global_init");
    if (init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fputs("inkwell: libcurl could not start\n", stderr);
        abort();
    }
}

/* The names are in parentheses: curl.h makes them type-checking macros under GCC. */
CURLcode(curl_easy_setopt)(CURL *c, CURLoption opt, ...)
{
    CURLcode (*f)(CURL *, CURLoption, ...) =
        (CURLcode(*)(CURL *, CURLoption, ...))lazy_curl_easy_setopt();
    va_list ap;
    va_start(ap, opt);
    CURLcode rc;
    /* the argument's type is the option's range (curl.h's CURLOPTTYPE_*), as libcurl's
     * own curl_easy_setopt reads it */
    if (opt < CURLOPTTYPE_OBJECTPOINT)
        rc = f(c, opt, va_arg(ap, long));
    else if (opt < CURLOPTTYPE_FUNCTIONPOINT)
        rc = f(c, opt, va_arg(ap, void *));
    else if (opt < CURLOPTTYPE_OFF_T)
        rc = f(c, opt, va_arg(ap, void (*)(void)));
    else if (opt < CURLOPTTYPE_BLOB)
        rc = f(c, opt, va_arg(ap, curl_off_t));
    else
        rc = f(c, opt, va_arg(ap, void *));
    va_end(ap);
    return rc;
}

CURLcode(curl_easy_getinfo)(CURL *c, CURLINFO info, ...)
{
    CURLcode (*f)(CURL *, CURLINFO, ...) = (CURLcode(*)(CURL *, CURLINFO, ...))lazy_curl_easy_getinfo();
    va_list ap;
    va_start(ap, info);
    CURLcode rc = f(c, info, va_arg(ap, void *)); /* always a pointer to the answer */
    va_end(ap);
    return rc;
}

CURLSHcode(curl_share_setopt)(CURLSH *s, CURLSHoption opt, ...)
{
    CURLSHcode (*f)(CURLSH *, CURLSHoption, ...) =
        (CURLSHcode(*)(CURLSH *, CURLSHoption, ...))lazy_curl_share_setopt();
    va_list ap;
    va_start(ap, opt);
    CURLSHcode rc;
    switch (opt) {
    case CURLSHOPT_SHARE:
    case CURLSHOPT_UNSHARE:
        rc = f(s, opt, va_arg(ap, int)); /* a curl_lock_data */
        break;
    case CURLSHOPT_LOCKFUNC:
        rc = f(s, opt, va_arg(ap, curl_lock_function));
        break;
    case CURLSHOPT_UNLOCKFUNC:
        rc = f(s, opt, va_arg(ap, curl_unlock_function));
        break;
    default:
        rc = f(s, opt, va_arg(ap, void *));
        break;
    }
    va_end(ap);
    return rc;
}
