/* prompt.c — see prompt.h. The messages are short and direct, each line one
 * instruction, as models follow best: the template's instruction first, then the
 * language (always said: the default is English, whatever the prompt is written in),
 * the tone and length when they are not the defaults, the format, and "only the
 * text" (no preamble a person would have to delete). An action names what to do with
 * the text; a selection is marked with <selection>…</selection> (a continuation's
 * point with <continue/>) inside its surroundings, and the model returns the new
 * part only, which inkwell splices back (records/actions.c). */
#include "gen/prompt.h"

#include "core/utf8.h"

#include <string.h>
#include <strings.h>

typedef struct {
    const char *tag, *name;
} lang_t;

/* Tags looked up whole first (case-insensitive), then by their language subtag. */
static const lang_t languages[] = {
    {"en", "English"},         {"en-GB", "British English"}, {"en-US", "American English"},
    {"de", "German"},          {"fr", "French"},             {"es", "Spanish"},
    {"it", "Italian"},         {"pt", "Portuguese"},         {"pt-BR", "Brazilian Portuguese"},
    {"pt-PT", "European Portuguese"}, {"nl", "Dutch"},       {"pl", "Polish"},
    {"uk", "Ukrainian"},       {"ru", "Russian"},            {"cs", "Czech"},
    {"sk", "Slovak"},          {"sv", "Swedish"},            {"da", "Danish"},
    {"nb", "Norwegian Bokmål"}, {"no", "Norwegian"},         {"fi", "Finnish"},
    {"el", "Greek"},           {"tr", "Turkish"},            {"ro", "Romanian"},
    {"hu", "Hungarian"},       {"bg", "Bulgarian"},          {"hr", "Croatian"},
    {"sr", "Serbian"},         {"ar", "Arabic"},             {"he", "Hebrew"},
    {"fa", "Persian"},         {"hi", "Hindi"},              {"bn", "Bengali"},
    {"id", "Indonesian"},      {"ms", "Malay"},              {"vi", "Vietnamese"},
    {"th", "Thai"},            {"ja", "Japanese"},           {"ko", "Korean"},
    {"zh", "Chinese"},         {"zh-Hans", "Simplified Chinese"},
    {"zh-Hant", "Traditional Chinese"}, {"ca", "Catalan"},  {"eu", "Basque"},
    {"ga", "Irish"},           {"cy", "Welsh"},              {"sw", "Swahili"},
};

static const char *language_name(const char *tag)
{
    for (size_t i = 0; i < ARRAY_LEN(languages); i++)
        if (strcasecmp(tag, languages[i].tag) == 0)
            return languages[i].name;
    size_t sub = strcspn(tag, "-");
    for (size_t i = 0; i < ARRAY_LEN(languages); i++)
        if (strlen(languages[i].tag) == sub && strncasecmp(tag, languages[i].tag, sub) == 0)
            return languages[i].name;
    return NULL;
}

void prompt_language(const char *tag, buf_t *out)
{
    const char *name = language_name(tag);
    if (name)
        buf_printf(out, "%s (%s)", name, tag);
    else
        buf_printf(out, "the language with the BCP 47 tag \"%s\"", tag);
}

typedef struct {
    const char *tone, *words;
} tone_t;

static const tone_t tones[] = {
    {"neutral", "neutral and clear"},
    {"friendly", "warm and approachable"},
    {"professional", "clear, confident and businesslike"},
    {"casual", "relaxed and conversational"},
    {"persuasive", "convincing, with clear benefits and a call to action"},
    {"witty", "clever and lightly humorous"},
    {"formal", "formal and precise, without contractions or slang"},
    {"empathetic", "understanding and supportive"},
};

static const char *tone_words(const char *tone)
{
    for (size_t i = 0; i < ARRAY_LEN(tones); i++)
        if (strcmp(tone, tones[i].tone) == 0)
            return tones[i].words;
    return "neutral and clear";
}

typedef struct {
    const char *action, *whole, *part;
} action_words_t;

/* What each action asks, of the whole text (the user's message) and of a selection. */
static const action_words_t actions[] = {
    {"improve", "Improve the text the user sends: make it clearer, more fluent and more "
                "engaging, and fix any errors, keeping its meaning, facts and approximate length.",
     "Improve the selected part: make it clearer, more fluent and more engaging, and fix any "
     "errors, keeping its meaning, facts and approximate length."},
    {"shorten", "Shorten the text the user sends to about half its length, keeping its key "
                "points and facts.",
     "Shorten the selected part to about half its length, keeping its key points and facts."},
    {"expand", "Expand the text the user sends to about twice its length with relevant "
               "detail, examples or explanation, staying on its subject and keeping its facts.",
     "Expand the selected part to about twice its length with relevant detail, examples or "
     "explanation, staying on its subject and keeping its facts."},
    {"continue", "Continue the text the user sends: write the next paragraph, following on "
                 "naturally from where it ends, in the same style and format.",
     "Continue the document at the point marked <continue/>: write the next paragraph, "
     "following on naturally from the text before it and leading into the text after it, "
     "in the same style and format."},
    {"rephrase", "Rephrase the text the user sends: say the same thing in different words, "
                 "keeping its meaning and approximate length.",
     "Rephrase the selected part: say the same thing in different words, keeping its meaning "
     "and approximate length."},
    {"simplify", "Simplify the text the user sends: short sentences and plain, everyday "
                 "words anyone can understand, keeping its meaning.",
     "Simplify the selected part: short sentences and plain, everyday words anyone can "
     "understand, keeping its meaning."},
    {"fix_grammar", "Correct the spelling, grammar and punctuation of the text the user "
                    "sends. Change nothing else.",
     "Correct the spelling, grammar and punctuation of the selected part. Change nothing "
     "else."},
    /* change_tone and translate: compose_action words them with their tone or language */
    {"change_tone", NULL, NULL},
    {"translate", NULL, NULL},
};

static const action_words_t *action_words(const char *action)
{
    for (size_t i = 0; i < ARRAY_LEN(actions); i++)
        if (strcmp(action, actions[i].action) == 0)
            return &actions[i];
    return &actions[0];
}

static void put_language_line(const char *language, buf_t *sys)
{
    buf_puts(sys, "Write in ");
    prompt_language(language, sys);
    buf_puts(sys, ".\n");
}

static void put_tone_line(const char *tone, buf_t *sys)
{
    if (strcmp(tone, "neutral") != 0)
        buf_printf(sys, "Use a %s tone: %s.\n", tone, tone_words(tone));
}

/* Context on one side of a selection: at most PROMPT_CONTEXT_MAX bytes, the ones
 * nearest the selection, cut on a character. */
static void put_before(const char *text, size_t end, buf_t *out)
{
    size_t from = 0;
    if (end > PROMPT_CONTEXT_MAX) {
        from = end - PROMPT_CONTEXT_MAX;
        while (from < end && ((unsigned char)text[from] & 0xC0) == 0x80)
            from++;
        buf_puts(out, "…");
    }
    buf_append(out, text + from, end - from);
}

static void put_after(const char *text, size_t start, buf_t *out)
{
    size_t n = strlen(text + start);
    if (n <= PROMPT_CONTEXT_MAX) {
        buf_append(out, text + start, n);
        return;
    }
    size_t cut = utf8_floor(text + start, PROMPT_CONTEXT_MAX);
    buf_append(out, text + start, cut);
    buf_puts(out, "…");
}

static void compose_action(const gen_text_req_t *req, const char *instruction, const char *tone,
                           const char *language, buf_t *sys, buf_t *user)
{
    const char *text = req->text ? req->text : "";
    size_t n = strlen(text);
    size_t s0 = req->sel_start <= n ? req->sel_start : n;
    size_t s1 = req->sel_end <= n && req->sel_end >= s0 ? req->sel_end : s0;
    bool cont = strcmp(req->action, "continue") == 0;
    bool whole = cont ? s1 == n : s0 == 0 && s1 == n;
    const action_words_t *w = action_words(req->action);
    buf_puts(sys, "You are an editor working on a document written in Markdown (CommonMark).\n");
    const char *what = whole ? "the text the user sends" : "the selected part";
    if (strcmp(req->action, "change_tone") == 0) {
        buf_printf(sys, "Rewrite %s in a %s tone: %s. Keep its meaning and facts.", what, tone,
                   tone_words(tone));
    } else if (strcmp(req->action, "translate") == 0) {
        buf_printf(sys, "Translate %s into ", what);
        prompt_language(language, sys);
        buf_puts(sys, ". Keep its meaning, tone and Markdown formatting.");
    } else {
        buf_puts(sys, whole ? w->whole : w->part);
    }
    buf_putc(sys, '\n');
    if (!whole)
        buf_puts(sys, cont ? "The rest of the document is there for context: do not repeat it.\n"
                           : "The rest of the document is there for context: leave it out of "
                             "your answer.\n");
    if (strcmp(req->action, "translate") != 0)
        put_language_line(language, sys);
    if (strcmp(req->action, "change_tone") != 0)
        put_tone_line(tone, sys);
    buf_printf(sys, "The document was written to these instructions: %s\n", instruction);
    buf_puts(sys, whole && !cont
                      ? "Keep its Markdown formatting. Return only the new text, without any "
                        "preamble, commentary or quotation marks."
                      : cont ? "Use Markdown as the document does. Return only the new text, "
                               "without any preamble, commentary or quotation marks."
                             : "Keep its Markdown formatting. Return only the new text of the "
                               "selected part, without the <selection> tags, preamble, "
                               "commentary or quotation marks.");
    if (whole) {
        buf_append(user, text, n);
        return;
    }
    buf_puts(user, "<document>\n");
    put_before(text, s0, user);
    if (cont) {
        buf_puts(user, "<continue/>");
    } else {
        buf_puts(user, "<selection>");
        buf_append(user, text + s0, s1 - s0);
        buf_puts(user, "</selection>");
    }
    put_after(text, s1, user);
    buf_puts(user, "\n</document>");
}

void prompt_compose(const gen_text_req_t *req, const char *instruction, buf_t *sys, buf_t *user)
{
    const char *tone = req->tone && *req->tone ? req->tone : "neutral";
    const char *language = req->language && *req->language ? req->language : "en";
    const char *length = req->length && *req->length ? req->length : "medium";
    if (req->action) {
        compose_action(req, instruction, tone, language, sys, user);
        return;
    }
    buf_puts(sys, instruction);
    buf_puts(sys, "\n\n");
    put_language_line(language, sys);
    put_tone_line(tone, sys);
    if (strcmp(length, "short") == 0)
        buf_puts(sys, "Keep it short: clearly shorter than usual for this kind of text.\n");
    else if (strcmp(length, "long") == 0)
        buf_puts(sys, "Make it long and detailed: clearly longer than usual for this kind of "
                      "text.\n");
    buf_puts(sys, "Format the text in Markdown (CommonMark): headings, lists and emphasis "
                  "where they help. Return only the text, without any preamble or commentary.");
    buf_puts(user, req->prompt ? req->prompt : "");
}
