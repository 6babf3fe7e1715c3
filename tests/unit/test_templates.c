/* test_templates.c — the template table of seed §2.1, the creativity scale and the
 * word count. */
#include "core/util.h"
#include "core/unicode.h"
#include "gen/templates.h"
#include "test.h"

#include <stdlib.h>

/* The seed's table, spelled out. */
static const char *const seed_names[TEMPLATE_COUNT + 1] = {
    NULL,
    "Freestyle",          "About us",              "Advertisement",
    "Article",            "Blog intro",            "Blog outline",
    "Blog outro",         "Blog paragraph",        "Blog post",
    "Blog section",       "Blog talking points",   "Blog title",
    "Call to action",     "Content rewrite",       "Content summary",
    "FAQ",                "Hashtags",              "Headline",
    "How it works",       "Meta description",      "Meta keywords",
    "Mission statement",  "Newsletter",            "Pain-Agitate-Solution",
    "Paragraph",          "Press release",         "Social post",
    "Social post caption", "Startup ideas",        "Startup names",
    "Subheadline",        "Testimonial",           "Social media quote",
    "Social media bio",   "Value proposition",     "Video description",
    "Video script",       "Video tags",            "Video title",
    "Vision statement",   "Product sheet",         "Welcome email",
    "Push notification",  "Blog listicle",         "Content grammar",
    "Blog tags",          "Pros and cons",         "Google advertisement",
    "Facebook advertisement", "Job description",   "Review",
    "Feature section",
};

static void test_lookup(void)
{
    CHECK(template_get(0) == NULL);
    CHECK(template_get(53) == NULL);
    CHECK(template_get(-1) == NULL);
    CHECK(template_get(1000000) == NULL);
    for (int id = 1; id <= TEMPLATE_COUNT; id++) {
        const template_t *t = template_get(id);
        CHECK(t != NULL);
        if (!t)
            continue;
        CHECK_INT(t->id, id);
        CHECK_STR(t->name, seed_names[id]);
    }
}

static void test_instructions(void)
{
    for (int id = 1; id <= TEMPLATE_COUNT; id++) {
        const char *ins = template_get(id)->instruction;
        CHECK_MSG(ins && strlen(ins) >= 60, "template %d: instruction too short", id);
        /* 1 to 3 sentences */
        long long words = uni_count_words(ins, strlen(ins));
        CHECK_MSG(words >= 12 && words <= 90, "template %d: %lld words", id, words);
        for (int other = 1; other < id; other++)
            CHECK_MSG(strcmp(ins, template_get(other)->instruction) != 0,
                      "templates %d and %d share an instruction", id, other);
    }
    /* A few instructions say what their format is. */
    CHECK(strstr(template_get(6)->instruction, "numbered outline") != NULL);
    CHECK(strstr(template_get(17)->instruction, "#") != NULL);
    CHECK(strstr(template_get(21)->instruction, "comma") != NULL);
    CHECK(strstr(template_get(20)->instruction, "160") != NULL);
    CHECK(strstr(template_get(16)->instruction, "Q:") != NULL);
    CHECK(strstr(template_get(26)->instruction, "quotation marks") != NULL);
    CHECK(strstr(template_get(48)->instruction, "30") != NULL);
}

/* §14: one sentence for people, different for each template. */
static void test_descriptions(void)
{
    for (int id = 1; id <= TEMPLATE_COUNT; id++) {
        const char *d = template_get(id)->description;
        CHECK_MSG(d != NULL, "template %d: no description", id);
        if (!d)
            continue;
        size_t n = strlen(d);
        CHECK_MSG(n >= 20 && n <= 160, "template %d: description of %zu bytes", id, n);
        CHECK_MSG(d[0] >= 'A' && d[0] <= 'Z', "template %d: description starts with %c", id, d[0]);
        CHECK_MSG(n > 0 && d[n - 1] == '.', "template %d: description does not end with a full stop", id);
        /* one sentence: no other full stop followed by a space */
        CHECK_MSG(strstr(d, ". ") == NULL && strchr(d, '\n') == NULL,
                  "template %d: description is more than one sentence", id);
        CHECK_MSG(strcmp(d, template_get(id)->instruction) != 0, "template %d: description is the instruction", id);
        for (int other = 1; other < id; other++)
            CHECK_MSG(strcmp(d, template_get(other)->description) != 0,
                      "templates %d and %d share a description", id, other);
    }
    CHECK(strstr(template_get(17)->description, "hashtags") != NULL);
    CHECK(strstr(template_get(20)->description, "160") != NULL);
}

static void test_creativity(void)
{
    static const struct {
        double c;
        const char *label;
    } cases[] = {
        {0, "Repetitive"},  {0.25, "Deterministic"}, {0.5, "Original"},
        {0.75, "Creative"}, {1, "Imaginative"},      {0.3, NULL},
        {-0.25, NULL},      {1.5, NULL},             {0.2500001, NULL},
        {-1, NULL},         {2, NULL},               {0.1, NULL},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const char *got = creativity_label(cases[i].c);
        if (cases[i].label) {
            CHECK_STR(got, cases[i].label);
            CHECK(creativity_valid(cases[i].c));
        } else {
            CHECK_MSG(got == NULL, "label for %g should be NULL, got %s", cases[i].c, got);
            CHECK(!creativity_valid(cases[i].c));
        }
    }
    CHECK(!creativity_valid(strtod("nan", NULL)));
    CHECK(!creativity_valid(strtod("inf", NULL)));
    CHECK(creativity_valid(-0.0)); /* -0 == 0 */
}

int main(void)
{
    test_lookup();
    test_instructions();
    test_descriptions();
    test_creativity();
    TEST_DONE();
}
