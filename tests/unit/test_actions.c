/* test_actions.c — the actions of API.md §17 below the API: the builtin generator's
 * actions (gen/builtin_text_actions.c: what each does, the part's own white space
 * kept, the same text for the same input, translate refused) and the records
 * service's ranges (records/actions.c: code points to bytes, clamping, continue's
 * point and separator, the splice). */
#include "gen/builtin.h"
#include "records/records.h"
#include "test.h"

static char *act(const char *action, const char *part, const char *tone)
{
    static char out[4096];
    buf_t b;
    buf_init(&b);
    int rc = builtin_action(action, part, strlen(part), "Before.", 7, "tea ceremonies", tone, &b);
    snprintf(out, sizeof(out), "%s%s", rc == 0 ? "" : "ERR:", buf_cstr(&b));
    buf_free(&b);
    return out;
}

static void test_builtin_actions(void)
{
    /* shorten: each paragraph keeps its first half of sentences; headings stay */
    CHECK_STR(act("shorten", "One thing. Two things. Three things. Four things.\n\n## Heading\n\n"
                             "Five here. Six there.", NULL),
              "One thing. Two things.\n\n## Heading\n\nFive here.");
    CHECK_STR(act("shorten", "A single sentence that goes on, and on, and on.", NULL),
              "A single sentence that goes on.");
    /* fix_grammar: doubled words, spacing, capitals */
    CHECK_STR(act("fix_grammar", "tea is is good .it helps  focus. really", NULL),
              "Tea is good. It helps focus. Really.");
    /* simplify: plain words, a long sentence split at its join */
    CHECK_STR(act("simplify", "We utilize numerous methods to facilitate learning, and we "
                              "demonstrate how individuals obtain sufficient assistance in "
                              "approximately a week.", NULL),
              "We use many methods to help learning. We show how people get enough help in "
              "about a week.");
    /* change_tone: the tone's phrasing */
    CHECK_STR(act("change_tone", "We do not know. It is fine.", "casual"),
              "So, here's the deal. We don't know. It's fine.");
    CHECK_STR(act("change_tone", "We don't know. It's fine.", "formal"),
              "The matter is set out below. We do not know. It is fine.");
    CHECK_STR(act("change_tone", "Plain words.", "neutral"), "Plain words.");
    /* rephrase and improve reword */
    CHECK_STR(act("rephrase", "Tea is very good and helps focus.", NULL),
              "Tea is remarkably great and supports focus.");
    CHECK_STR(act("improve", "tea is very good and and helps focus", NULL),
              "Tea is remarkably great and supports focus.");
    /* expand: the text, then sentences about the subject; its white space kept */
    const char *e = act("expand", "  Tea is calm.  ", NULL);
    CHECK(strncmp(e, "  Tea is calm. ", 15) == 0);
    CHECK(strstr(e, "tea ceremonies") != NULL);
    CHECK(strlen(e) > 40 && strcmp(e + strlen(e) - 3, ".  ") == 0);
    /* continue: a paragraph of its own about the subject */
    const char *c = act("continue", "", NULL);
    CHECK(strstr(c, "tea ceremonies") != NULL);
    CHECK(c[0] != '\n' && c[strlen(c) - 1] != '\n');
    /* the same input, the same text */
    char first[4096];
    snprintf(first, sizeof(first), "%s", act("continue", "", NULL));
    CHECK_STR(act("continue", "", NULL), first);
    /* nothing to rewrite: the part as it is */
    CHECK_STR(act("improve", "   ", NULL), "   ");
    /* translate is not the builtin generator's */
    CHECK_STR(act("translate", "Tea.", NULL), "ERR:");
}

static void test_ranges(void)
{
    const char *t = "Ωmega café 🙂 end"; /* Ω 2 bytes, é 2, 🙂 4 */
    size_t b0, b1;
    records_action_range(t, "improve", -1, -1, &b0, &b1);
    CHECK_INT(b0, 0);
    CHECK_INT(b1, strlen(t));
    records_action_range(t, "improve", 0, 1, &b0, &b1); /* "Ω" */
    CHECK_INT(b0, 0);
    CHECK_INT(b1, 2);
    records_action_range(t, "improve", 6, 10, &b0, &b1); /* "café" */
    CHECK_INT(b0, 7);
    CHECK_INT(b1, 12);
    records_action_range(t, "improve", 11, 12, &b0, &b1); /* "🙂" */
    CHECK_INT(b1 - b0, 4);
    CHECK(memcmp(t + b0, "🙂", 4) == 0);
    records_action_range(t, "improve", 5, 500, &b0, &b1); /* clamped to the text */
    CHECK_INT(b1, strlen(t));
    /* continue: the point at the selection's end, or the text's */
    records_action_range(t, "continue", 0, 5, &b0, &b1);
    CHECK_INT(b0, 6);
    CHECK_INT(b1, 6);
    records_action_range(t, "continue", -1, -1, &b0, &b1);
    CHECK_INT(b0, strlen(t));
    CHECK_INT(b1, strlen(t));
    /* a continuation starts a paragraph of its own */
    CHECK_STR(records_action_sep("Text.", "continue", 5), "\n\n");
    CHECK_STR(records_action_sep("Text.\n", "continue", 6), "\n");
    CHECK_STR(records_action_sep("Text.\n\n", "continue", 7), "");
    CHECK_STR(records_action_sep("", "continue", 0), "");
    CHECK_STR(records_action_sep("Text.", "shorten", 5), "");
    char *s = records_action_splice("Ωmega café 🙂", 7, 12, "CAFÉ!", strlen("CAFÉ!"));
    CHECK_STR(s, "Ωmega CAFÉ! 🙂");
    free(s);
    CHECK(records_action_valid("fix_grammar"));
    CHECK(!records_action_valid("summarise"));
    CHECK(!records_action_valid(NULL));
}

int main(void)
{
    test_builtin_actions();
    test_ranges();
    TEST_DONE();
}
