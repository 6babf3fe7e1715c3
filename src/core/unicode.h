/* unicode.h — search and order for every language (API.md §15), the one place that
 * calls ICU: the Unicode default case folding a search compares (u_strFoldCase,
 * U_FOLD_CASE_DEFAULT: Кот/кот/КОТ, Ω/ω, É/é, ß/SS alike; accents kept), and the sort
 * key of a name in the CLDR root collation order (ICU's root collator).
 *
 * Both stores use these and nothing else, so both give byte-identical results: SQLite
 * calls them as SQL functions (ink_fold, ink_key; sqlite_lists.c), PostgreSQL keeps the
 * folded text in columns the store writes (pg_lists.c). */
#ifndef INK_UNICODE_H
#define INK_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The default case folding of the valid UTF-8 s[0..n), NUL-terminated, malloc'd;
 * *out_len (if given) gets its length. Invalid UTF-8 is folded as ICU converts it
 * (U+FFFD for a bad sequence): the API only stores valid text. NULL only when
 * memory runs out. */
char *uni_fold(const char *s, size_t n, size_t *out_len);

/* Whether s[0..n) folds to itself (ASCII without A-Z does): callers skip the copy. */
bool uni_fold_is_same(const char *s, size_t n);

/* Whether the folding of hay[0..n) holds needle_fold (a folded, NUL-terminated text)
 * as a substring: a search's match. A text that folding changes only in A-Z (ASCII,
 * dashes, CJK...) is compared in place, without a folded copy. false when memory runs
 * out. */
bool uni_fold_contains(const char *hay, size_t n, const char *needle_fold);

/* The order key of the name s[0..n): its root-collator sort key (its terminating 0
 * included), then the name's own bytes, malloc'd, length in *out_len. Comparing two
 * keys bytewise (memcmp, then the shorter first) orders names by the Unicode Collation
 * Algorithm with the CLDR root order, and names the collator holds equal by their
 * bytes, exactly as PostgreSQL's deterministic "und-x-icu" collation does. NULL when
 * memory runs out or ICU fails. */
uint8_t *uni_sort_key(const char *s, size_t n, size_t *out_len);

/* strcmp-like comparison of two names in that order (for tests and models). */
int uni_name_cmp(const char *a, const char *b);

/* The words of s[0..n) as a reader counts them: the segments ICU's word boundaries
 * (ubrk, UBRK_WORD, root locale) find whose rule status is not UBRK_WORD_NONE —
 * numbers, letters, kana and ideographs — so Japanese, Chinese and Thai count by their
 * words (dictionaries), not by spaces; punctuation, spaces and emoji are not words.
 * The one count of words: records, revisions, usage and quotas (`words`), and the same
 * rule as the web app's live count (Intl.Segmenter, granularity "word", isWordLike).
 * 0 for NULL or "". */
long long uni_count_words(const char *s, size_t n);
/* The NFC normalisation of the valid UTF-8 s[0..n), NUL-terminated, malloc'd; *out_len
 * (if given) gets its length. NULL when memory runs out or ICU fails. */
char *uni_nfc(const char *s, size_t n, size_t *out_len);

/* The ICU version the keys come from (e.g. "72.1"), for the log and the docs: keys
 * change with ICU's collation data, so a database moved to another ICU needs its name
 * indexes rebuilt (REINDEX), as PostgreSQL's own ICU collations do. */
const char *uni_icu_version(void);

#endif
