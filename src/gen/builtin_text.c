/* builtin_text.c — the offline text generator behind the builtin provider.
 *
 * It is a template-driven writer, not a language model. The prompt is read once
 * (at most ANALYSE_MAX bytes) into phrases (runs of content words, the longest being
 * the topic), single key words ranked by frequency, and an audience ("for
 * beginners"). Each of the 52 templates has a small writer that lays out its shape
 * (outline, email, FAQ, ...) from sentence patterns in a tiny notation that
 * expand() fills in:
 *   {a|b|c}  one alternative, chosen by the chooser (flat: no braces inside)
 *   $t $T    the topic, as written / in title case
 *   $n $N    the next phrase (the user's own first, then stock ones)
 *   $s $S    the current section's phrase          $w  the next single key word
 *   $a $A    the audience                          $x  a writer-specific string
 *   $$       a dollar sign                         ^   capitalise the next letter
 * The chooser is the temperature: each choice draws from a stream seeded by
 * (template, prompt) and from one seeded by the caller's seed too, and takes the
 * latter with probability = creativity; at 0 the seed is never looked at.
 * Three templates transform the prompt text itself: rewrite (synonyms), summary
 * (sentence extraction) and grammar (rule-based fixes, the same for every seed).
 *
 * Everything lives on the stack or in the output buffer: no globals that change,
 * no I/O, safe to call from any thread.
 *
 * The parts, one file each (builtin_text_int.h is what they share):
 *   builtin_text_analyse.c     word lists, UTF-8 and case helpers, the prompt analysis
 *   builtin_text_pattern.c     the chooser and the pattern language (expand), tags
 *   builtin_text_banks.c       the sentence-pattern banks the writers share (data)
 *   builtin_text_writers1.c    the writers, freestyle to social caption
 *   builtin_text_writers2.c    the writers, startup ideas to feature section
 *   builtin_text_transforms.c  rewrite, summary and grammar
 *   builtin_text_style.c       §17's length and tone, on every writer's text
 *   builtin_text.c             this entry: the table of writers by template id */
#include "gen/builtin_text_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ entry */

typedef void (*writer_fn)(gen_t *g);

static const writer_fn writers[53] = {
    [1] = t_freestyle,        [2] = t_about_us,         [3] = t_advertisement,
    [4] = t_article,          [5] = t_blog_intro,       [6] = t_blog_outline,
    [7] = t_blog_outro,       [8] = t_blog_paragraph,   [9] = t_blog_post,
    [10] = t_blog_section,    [11] = t_talking_points,  [12] = t_blog_title,
    [13] = t_call_to_action,  [14] = t_content_rewrite, [15] = t_content_summary,
    [16] = t_faq,             [17] = t_hashtags,        [18] = t_headline,
    [19] = t_how_it_works,    [20] = t_meta_description, [21] = t_meta_keywords,
    [22] = t_mission,         [23] = t_newsletter,      [24] = t_pas,
    [25] = t_paragraph,       [26] = t_press_release,   [27] = t_social_post,
    [28] = t_caption,         [29] = t_startup_ideas,   [30] = t_startup_names,
    [31] = t_subheadline,     [32] = t_testimonial,     [33] = t_social_quote,
    [34] = t_social_bio,      [35] = t_value_prop,      [36] = t_video_description,
    [37] = t_video_script,    [38] = t_video_tags,      [39] = t_video_title,
    [40] = t_vision,          [41] = t_product_sheet,   [42] = t_welcome_email,
    [43] = t_push,            [44] = t_listicle,        [45] = t_content_grammar,
    [46] = t_blog_tags,       [47] = t_pros_cons,       [48] = t_google_ad,
    [49] = t_facebook_ad,     [50] = t_job_description, [51] = t_review,
    [52] = t_feature_section,
};

void builtin_text(int template_id, const char *prompt, double creativity, uint64_t seed,
                  buf_t *out)
{
    builtin_text_styled(template_id, prompt, creativity, seed, NULL, NULL, out);
}

/* One text: the writer, then length and tone (bt_style); salt draws other choices for
 * the same tone (see builtin_text_styled). True when the tone's own sentence went in. */
static bool write_once(int template_id, const topic_t *tp, const char *prompt, size_t len,
                       double creativity, uint64_t seed, int ti, int li, uint64_t salt,
                       buf_t *out)
{
    uint64_t h = bt_hash(prompt, len, 0xCBF29CE484222325ull ^ (uint64_t)template_id);
    if (ti || salt) /* a tone draws other choices (neutral: the writer's own) */
        h = bt_mix(h ^ (0x70E5ull * (uint64_t)ti) ^ (salt * 0x9E3779B97F4A7C15ull));
    gen_t g = {
        .out = out,
        .tp = tp,
        .prompt = prompt,
        .prompt_len = len,
        .creativity = creativity,
        .base = h,
        .var = h ^ bt_mix(seed ^ 0x5EEDull),
        .gate = bt_mix(h + seed * 0x9E3779B97F4A7C15ull),
        .autocap = true,
        .cap_pending = true,
        .last = '\n',
    };
    g.stock_off = (int)g_pick(&g, ARRAY_LEN(stock_phrases));
    g.audience = tp->audience[0] ? tp->audience
                                 : fallback_audiences[g_pick(&g, ARRAY_LEN(fallback_audiences))];

    size_t start = out->len;
    writers[template_id](&g);
    /* the three transforms of the user's own text take the tone's sentence before it */
    bool transform = template_id == 14 || template_id == 15 || template_id == 45;
    bool marked = bt_style(&g, start, ti, builtin_length_applies(template_id) ? li : 1, transform);

    /* Never empty, never only white space. */
    bool blank = true;
    for (size_t i = start; i < out->len && blank; i++)
        blank = strchr(" \t\r\n", out->data[i]) != NULL;
    if (blank) {
        out->len = start;
        buf_puts(out, "There is no text to work with yet: add a few words to the prompt.\n");
    }
    return marked;
}

#define TONE_TRIES 12

/* The text of tone ti when its own sentence has no place (a line, a list, tags): the
 * first of its draws (salt 0, 1, ...) that no lower tone's text equals, the lower
 * tones' texts made the same way, so that no two tones give the same text. */
static void distinct_tone(int template_id, const topic_t *tp, const char *prompt, size_t len,
                          double creativity, uint64_t seed, int ti, int li, buf_t *out)
{
    buf_t prev[8];
    for (int k = 0; k <= ti; k++) {
        buf_init(&prev[k]);
        for (uint64_t salt = 0; salt < TONE_TRIES; salt++) {
            buf_reset(&prev[k]);
            bool marked = write_once(template_id, tp, prompt, len, creativity, seed, k, li,
                                     salt, &prev[k]);
            bool same = false;
            for (int j = 0; j < k && !same && !marked; j++)
                same = prev[j].len == prev[k].len && memcmp(prev[j].data, prev[k].data, prev[k].len) == 0;
            if (!same || k == 0)
                break;
        }
    }
    buf_append(out, prev[ti].data, prev[ti].len);
    for (int k = 0; k <= ti; k++)
        buf_free(&prev[k]);
}

void builtin_text_styled(int template_id, const char *prompt, double creativity, uint64_t seed,
                         const char *tone, const char *length, buf_t *out)
{
    int ti = bt_tone_index(tone), li = bt_length_index(length);
    if (template_id < 1 || template_id > 52)
        template_id = 1;
    if (!prompt)
        prompt = "";
    if (!(creativity > 0)) /* also NaN */
        creativity = 0;
    if (creativity > 1)
        creativity = 1;
    size_t len = strlen(prompt);
    if (len > TRANSFORM_MAX)
        len = utf8_floor(prompt, TRANSFORM_MAX);

    topic_t tp;
    bt_analyse(prompt, len, &tp);
    size_t start = out->len;
    if (write_once(template_id, &tp, prompt, len, creativity, seed, ti, li, 0, out) || ti == 0)
        return;
    out->len = start;
    distinct_tone(template_id, &tp, prompt, len, creativity, seed, ti, li, out);
}
