/* test_prompt.c — the chat messages of gen/prompt.c, exactly: a table of generations
 * and actions (whole text, a selection, a continuation in the middle and at the end,
 * change_tone, translate to a known and an unknown tag), language names, and the
 * context cut around a selection in a long document. */
#include "gen/prompt.h"
#include "test.h"

#define INSTR "Write a blog post."
#define FORMAT                                                                                 \
    "Format the text in Markdown (CommonMark): headings, lists and emphasis where they help. " \
    "Return only the text, without any preamble or commentary."
#define EDITOR "You are an editor working on a document written in Markdown (CommonMark).\n"
#define CONTEXT "The rest of the document is there for context: leave it out of your answer.\n"
#define WRITTEN "The document was written to these instructions: " INSTR "\n"
#define ONLY_WHOLE                                                                             \
    "Keep its Markdown formatting. Return only the new text, without any preamble, "          \
    "commentary or quotation marks."
#define ONLY_PART                                                                              \
    "Keep its Markdown formatting. Return only the new text of the selected part, without "   \
    "the <selection> tags, preamble, commentary or quotation marks."
#define ONLY_CONT                                                                              \
    "Use Markdown as the document does. Return only the new text, without any preamble, "     \
    "commentary or quotation marks."
#define TEXT "One. Two. Three."

typedef struct {
    gen_text_req_t req;
    const char *sys, *user;
} case_t;

static const case_t cases[] = {
    /* a generation with the defaults: the language is always said */
    {{.prompt = "tea"}, INSTR "\n\nWrite in English (en).\n" FORMAT, "tea"},
    /* every option set */
    {{.prompt = "tea", .tone = "witty", .language = "pt-BR", .length = "short"},
     INSTR "\n\nWrite in Brazilian Portuguese (pt-BR).\n"
           "Use a witty tone: clever and lightly humorous.\n"
           "Keep it short: clearly shorter than usual for this kind of text.\n" FORMAT,
     "tea"},
    {{.prompt = "tea", .tone = "neutral", .language = "en", .length = "long"},
     INSTR "\n\nWrite in English (en).\n"
           "Make it long and detailed: clearly longer than usual for this kind of text.\n" FORMAT,
     "tea"},
    /* an action on the whole text: the text is the user's message */
    {{.action = "shorten", .text = TEXT, .sel_start = 0, .sel_end = 16},
     EDITOR "Shorten the text the user sends to about half its length, keeping its key points "
            "and facts.\nWrite in English (en).\n" WRITTEN ONLY_WHOLE,
     TEXT},
    /* a selection, in the document's language and tone */
    {{.action = "rephrase", .text = TEXT, .sel_start = 5, .sel_end = 9, .tone = "formal",
      .language = "de"},
     EDITOR "Rephrase the selected part: say the same thing in different words, keeping its "
            "meaning and approximate length.\n" CONTEXT "Write in German (de).\n"
            "Use a formal tone: formal and precise, without contractions or slang.\n" WRITTEN
                ONLY_PART,
     "<document>\nOne. <selection>Two.</selection> Three.\n</document>"},
    /* a continuation inside the text, and at its end */
    {{.action = "continue", .text = TEXT, .sel_start = 4, .sel_end = 4},
     EDITOR "Continue the document at the point marked <continue/>: write the next paragraph, "
            "following on naturally from the text before it and leading into the text after "
            "it, in the same style and format.\n"
            "The rest of the document is there for context: do not repeat it.\n"
            "Write in English (en).\n" WRITTEN ONLY_CONT,
     "<document>\nOne.<continue/> Two. Three.\n</document>"},
    {{.action = "continue", .text = TEXT, .sel_start = 16, .sel_end = 16},
     EDITOR "Continue the text the user sends: write the next paragraph, following on "
            "naturally from where it ends, in the same style and format.\n"
            "Write in English (en).\n" WRITTEN ONLY_CONT,
     TEXT},
    /* change_tone names the new tone (and no second tone line) */
    {{.action = "change_tone", .text = TEXT, .sel_start = 0, .sel_end = 16, .tone = "friendly"},
     EDITOR "Rewrite the text the user sends in a friendly tone: warm and approachable. Keep "
            "its meaning and facts.\nWrite in English (en).\n" WRITTEN ONLY_WHOLE,
     TEXT},
    /* translate names the target language (and no "Write in" line) */
    {{.action = "translate", .text = TEXT, .sel_start = 5, .sel_end = 9, .language = "uk"},
     EDITOR "Translate the selected part into Ukrainian (uk). Keep its meaning, tone and "
            "Markdown formatting.\n" CONTEXT WRITTEN ONLY_PART,
     "<document>\nOne. <selection>Two.</selection> Three.\n</document>"},
    {{.action = "translate", .text = TEXT, .sel_start = 0, .sel_end = 16, .language = "xx-Qaaa"},
     EDITOR "Translate the text the user sends into the language with the BCP 47 tag "
            "\"xx-Qaaa\". Keep its meaning, tone and Markdown formatting.\n" WRITTEN ONLY_WHOLE,
     TEXT},
    /* the other actions' words, on a selection */
    {{.action = "fix_grammar", .text = TEXT, .sel_start = 0, .sel_end = 4},
     EDITOR "Correct the spelling, grammar and punctuation of the selected part. Change nothing "
            "else.\n" CONTEXT "Write in English (en).\n" WRITTEN ONLY_PART,
     "<document>\n<selection>One.</selection> Two. Three.\n</document>"},
};

static void test_table(void)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        buf_t sys, user;
        buf_init(&sys);
        buf_init(&user);
        prompt_compose(&cases[i].req, INSTR, &sys, &user);
        CHECK_MSG(strcmp(buf_cstr(&sys), cases[i].sys) == 0, "case %zu system:\n%s\n---\n%s", i,
                  buf_cstr(&sys), cases[i].sys);
        CHECK_MSG(strcmp(buf_cstr(&user), cases[i].user) == 0, "case %zu user:\n%s\n---\n%s", i,
                  buf_cstr(&user), cases[i].user);
        buf_free(&sys);
        buf_free(&user);
    }
}

static void test_languages(void)
{
    static const char *const tags[][2] = {
        {"en", "English (en)"},         {"en-GB", "British English (en-GB)"},
        {"DE", "German (DE)"},          {"de-AT", "German (de-AT)"},
        {"zh-Hans", "Simplified Chinese (zh-Hans)"},
        {"zh-Hans-CN", "Chinese (zh-Hans-CN)"},
        {"tlh", "the language with the BCP 47 tag \"tlh\""},
    };
    for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
        buf_t b;
        buf_init(&b);
        prompt_language(tags[i][0], &b);
        CHECK_STR(buf_cstr(&b), tags[i][1]);
        buf_free(&b);
    }
}

/* A selection in a long document: at most PROMPT_CONTEXT_MAX bytes each side, cut on a
 * character, marked with "…". */
static void test_context_cut(void)
{
    buf_t text;
    buf_init(&text);
    for (int i = 0; i < 4000; i++)
        buf_puts(&text, "é"); /* 8000 bytes */
    size_t s0 = text.len;
    buf_puts(&text, "MIDDLE");
    size_t s1 = text.len;
    for (int i = 0; i < 4000; i++)
        buf_puts(&text, "ü");
    gen_text_req_t req = {.action = "improve", .text = buf_cstr(&text), .sel_start = s0,
                          .sel_end = s1};
    buf_t sys, user;
    buf_init(&sys);
    buf_init(&user);
    prompt_compose(&req, INSTR, &sys, &user);
    const char *u = buf_cstr(&user);
    CHECK(strncmp(u, "<document>\n…é", strlen("<document>\n…é")) == 0);
    CHECK(strstr(u, "é<selection>MIDDLE</selection>ü") != NULL);
    const char *end = "ü…\n</document>";
    CHECK(user.len > strlen(end) && strcmp(u + user.len - strlen(end), end) == 0);
    /* 2 × 6000 bytes of context, the markers, the selection */
    size_t expect = strlen("<document>\n") + 2 * strlen("…") + PROMPT_CONTEXT_MAX * 2 +
                    strlen("<selection>MIDDLE</selection>") + strlen("\n</document>");
    CHECK_INT(user.len, expect);
    buf_free(&sys);
    buf_free(&user);
    buf_free(&text);
}

int main(void)
{
    test_table();
    test_languages();
    test_context_cut();
    TEST_DONE();
}
