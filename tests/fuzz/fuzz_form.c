/* fuzz_form.c — form_parse and kv_get on arbitrary bytes. Checks the documented
 * invariants and compares the pairs with a reference built from pct_decode and
 * utf8_count: split on '&', then on the first '='. */
#include "fuzz.h"
#include "http/decode.h"

#include <stdint.h>
#include <string.h>

#define REF_MAX_PAIRS 1000 /* the bound documented in decode.c */

/* The next pair the reference expects, from the piece p[0..len). Returns false when
 * the piece is skipped (empty) or its key is dropped. */
static bool ref_piece(arena_t *a, const char *p, size_t len, kv_t *kv)
{
    if (len == 0)
        return false;
    const char *eq = memchr(p, '=', len);
    size_t kin = eq ? (size_t)(eq - p) : len;
    char *key;
    size_t klen;
    if (pct_decode(a, p, kin, true, &key, &klen) != 0 || klen == 0 ||
        utf8_count(key, klen) < 0 || memchr(key, '\0', klen))
        return false;
    kv->key = key;
    const char *vin = eq ? eq + 1 : p + len;
    char *val;
    size_t vlen;
    if (pct_decode(a, vin, (size_t)(p + len - vin), true, &val, &vlen) != 0)
        kv->status = KV_BAD_ESCAPE;
    else if (utf8_count(val, vlen) < 0)
        kv->status = KV_BAD_UTF8;
    else if (memchr(val, '\0', vlen))
        kv->status = KV_HAS_NUL;
    else
        kv->status = KV_OK;
    kv->val = kv->status == KV_OK ? val : NULL;
    kv->val_len = kv->status == KV_OK ? vlen : 0;
    return true;
}

static void check_against_reference(arena_t *a, const char *s, size_t size, const kvlist_t *l)
{
    size_t k = 0;
    const char *p = s, *end = s + size;
    while (p <= end && k < REF_MAX_PAIRS) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        size_t len = amp ? (size_t)(amp - p) : (size_t)(end - p);
        kv_t want;
        if (ref_piece(a, p, len, &want)) {
            FUZZ_CHECK(k < l->n);
            const kv_t *got = &l->items[k];
            FUZZ_CHECK(strcmp(got->key, want.key) == 0);
            FUZZ_CHECK(got->status == want.status);
            FUZZ_CHECK(got->val_len == want.val_len);
            if (want.val)
                FUZZ_CHECK(got->val && memcmp(got->val, want.val, want.val_len) == 0);
            k++;
        }
        if (!amp)
            break;
        p = amp + 1;
    }
    FUZZ_CHECK(k == l->n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    arena_t a;
    arena_init(&a);
    kvlist_t l;
    form_parse(&a, s, size, &l);
    FUZZ_CHECK(l.n <= REF_MAX_PAIRS);
    FUZZ_CHECK(l.n == 0 || l.items != NULL);

    size_t total = 0;
    for (size_t i = 0; i < l.n; i++) {
        const kv_t *kv = &l.items[i];
        FUZZ_CHECK(kv->key != NULL);
        size_t klen = strlen(kv->key);
        FUZZ_CHECK(klen > 0 && klen <= size);
        FUZZ_CHECK(utf8_count(kv->key, klen) >= 0);
        FUZZ_CHECK(kv->status <= KV_HAS_NUL);
        if (kv->status == KV_OK) {
            FUZZ_CHECK(kv->val != NULL && kv->val[kv->val_len] == '\0');
            FUZZ_CHECK(utf8_count(kv->val, kv->val_len) >= 0);
            FUZZ_CHECK(memchr(kv->val, '\0', kv->val_len) == NULL);
        } else {
            FUZZ_CHECK(kv->val == NULL && kv->val_len == 0);
        }
        total += klen + kv->val_len;
        /* the last pair with this key wins (fully checked on smaller lists only,
         * to keep the target fast) */
        const kv_t *found = kv_get(&l, kv->key);
        FUZZ_CHECK(found != NULL && found >= kv && strcmp(found->key, kv->key) == 0);
        for (const kv_t *later = kv + 1; l.n <= 64 && later < l.items + l.n; later++)
            if (strcmp(later->key, kv->key) == 0)
                FUZZ_CHECK(found >= later);
    }
    FUZZ_CHECK(total <= size); /* decoding never grows */
    check_against_reference(&a, s, size, &l);
    arena_free(&a);
    return 0;
}
