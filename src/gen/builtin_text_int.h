/* builtin_text_int.h — what the files of the builtin text generator share, and
 * nothing else includes: the limits, the prompt's analysis (topic_t), the writer's
 * state (gen_t) and the pattern language that fills it, the banks of sentence
 * patterns, the 52 writers and the three transforms. See builtin_text.c for how the
 * parts fit. */
#ifndef INK_BUILTIN_TEXT_INT_H
#define INK_BUILTIN_TEXT_INT_H

#include "core/utf8.h"
#include "gen/builtin.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ANALYSE_MAX 4096   /* bytes of the prompt read for topic and key words */
#define TRANSFORM_MAX 65536 /* bytes of the prompt rewritten/corrected/summarised */
#define MAX_TOKENS 768
#define WORD_MAX 48        /* bytes of one word, NUL included */
#define PHRASE_WORDS 4
#define PHRASE_MAX (WORD_MAX * PHRASE_WORDS + 8)
#define MAX_PHRASES 10
#define MAX_WORDS 12
#define MAX_RUNS 64
#define MAX_SENTENCES 512
#define TAG_MAX 32

typedef struct {
    char phrase[MAX_PHRASES][PHRASE_MAX]; /* phrase[0] is the topic */
    int nphrase;
    char word[MAX_WORDS][WORD_MAX]; /* single key words, most frequent first */
    int nword;
    char audience[PHRASE_MAX]; /* "" when the prompt names none */
    bool generic;              /* the prompt had no usable word at all */
} topic_t;

typedef struct {
    buf_t *out;
    const topic_t *tp;
    const char *prompt;
    size_t prompt_len;
    double creativity;
    uint64_t base, var, gate; /* the three chooser streams */
    int cursor, wcursor, stock_off;
    const char *sect;      /* $s */
    const char *extra;     /* $x */
    const char *audience;  /* $a */
    bool autocap, cap_pending;
    unsigned char last;
} gen_t;

#define SENTS(g, bank, k, used) g_sentences((g), (bank), ARRAY_LEN(bank), (k), (used))

#define LIST(g, bank, k, prefix, ordered) g_list((g), (bank), ARRAY_LEN(bank), (k), (prefix), (ordered))

/* ---- functions shared between the files ---- */

bool bt_is_word_cp(uint32_t c);
void bt_append_clean(buf_t *out, const char *s, size_t n);
bool bt_in_list(const char *lower, const char *const *list, size_t n);
void bt_lower(const char *s, size_t n, char *out);
bool bt_has_upper(const char *s, size_t n);
uint64_t bt_mix(uint64_t z);
uint64_t bt_splitmix(uint64_t *state);
uint64_t bt_hash(const char *s, size_t n, uint64_t h);
void bt_analyse(const char *prompt, size_t len, topic_t *tp);
unsigned g_pick(gen_t *g, unsigned n);
int g_range(gen_t *g, int lo, int hi);
void g_puts(gen_t *g, const char *s);
void g_printf(gen_t *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void g_emit_title(gen_t *g, const char *s);
const char *g_next_phrase(gen_t *g);
const char *g_next_word(gen_t *g);
void g_put(gen_t *g, const char *pattern);
void g_line(gen_t *g, const char *pattern);
int g_choose(gen_t *g, size_t n, int k, uint64_t *used, int *idx);
int bt_cmp_int(const void *a, const void *b);
void g_sentences(gen_t *g, const char *const *bank, size_t n, int k, uint64_t *used);
void g_list(gen_t *g, const char *const *bank, size_t n, int k, const char *prefix,
                   bool keep_order);
bool g_fit(gen_t *g, const char *pattern, size_t max, char *dst, size_t dstsize);
const char *bt_short_topic(const char *topic);
void g_fit_any(gen_t *g, const char *const *pats, size_t n, size_t max, char (*prev)[256],
                      int nprev, char *field);
void g_tag_line(gen_t *g, int lo, int hi);
void g_hashtags(gen_t *g, int lo, int hi);
void t_freestyle(gen_t *g);
void t_about_us(gen_t *g);
void t_advertisement(gen_t *g);
void t_article(gen_t *g);
void t_blog_intro(gen_t *g);
void t_blog_outline(gen_t *g);
void t_blog_outro(gen_t *g);
void t_blog_paragraph(gen_t *g);
void t_blog_post(gen_t *g);
void t_blog_section(gen_t *g);
void t_talking_points(gen_t *g);
void t_blog_title(gen_t *g);
void t_call_to_action(gen_t *g);
void t_faq(gen_t *g);
void t_hashtags(gen_t *g);
void t_headline(gen_t *g);
void t_how_it_works(gen_t *g);
void t_meta_description(gen_t *g);
void t_meta_keywords(gen_t *g);
void t_mission(gen_t *g);
void t_newsletter(gen_t *g);
void t_pas(gen_t *g);
void t_paragraph(gen_t *g);
void t_press_release(gen_t *g);
void t_social_post(gen_t *g);
void t_caption(gen_t *g);
void t_startup_ideas(gen_t *g);
void t_startup_names(gen_t *g);
void t_subheadline(gen_t *g);
void t_testimonial(gen_t *g);
void t_social_quote(gen_t *g);
void t_social_bio(gen_t *g);
void t_value_prop(gen_t *g);
void t_video_description(gen_t *g);
void t_video_script(gen_t *g);
void t_video_tags(gen_t *g);
void t_video_title(gen_t *g);
void t_vision(gen_t *g);
void t_product_sheet(gen_t *g);
void t_welcome_email(gen_t *g);
void t_push(gen_t *g);
void t_listicle(gen_t *g);
void t_blog_tags(gen_t *g);
void t_pros_cons(gen_t *g);
void t_google_ad(gen_t *g);
void t_facebook_ad(gen_t *g);
void t_job_description(gen_t *g);
void t_review(gen_t *g);
void t_feature_section(gen_t *g);
void t_content_rewrite(gen_t *g);
void t_content_summary(gen_t *g);
void t_content_grammar(gen_t *g);

/* builtin_text_actions.c: contractions made (or undone: expand) in s[0..n), and the end
 * of the sentence that starts at s[i]. */
void bt_contract(const char *s, size_t n, bool expand, buf_t *out);
size_t bt_sentence_end(const char *s, size_t n, size_t i);
/* builtin_text_style.c: §17's length and tone applied to a writer's text out[from..),
 * rewritten in place (g's chooser streams already mixed with the tone); true when the
 * tone's own sentence went in (prepend: before a text that has no paragraph for it). */
bool bt_style(gen_t *g, size_t from, int tone, int length, bool prepend);
int bt_tone_index(const char *tone);     /* 0 neutral (also NULL, unknown) .. 7 */
int bt_length_index(const char *length); /* 0 short, 1 medium (also NULL, unknown), 2 long */

/* ---- data shared between the files ---- */

extern const char *const stop_words[168];
extern const char *const role_words[35];
extern const char *const stock_phrases[12];
extern const char *const fallback_audiences[4];
extern const char *const B_OPEN[7];
extern const char *const B_BODY[12];
extern const char *const B_CLOSE[5];
extern const char *const B_SECT[8];
extern const char *const B_PROMISE[4];
extern const char *const B_TITLE[14];
extern const char *const B_HEAD[11];
extern const char *const B_SUBHEAD[8];
extern const char *const B_MKT[7];
extern const char *const B_CTA[7];
extern const char *const B_SUBLINE[7];

#endif
