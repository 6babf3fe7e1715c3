/* builtin_text_writers2.c — the writers of the builtin text generator, second half
 * (startup ideas to feature section). Part of builtin_text.c (which see). */
#include "gen/builtin_text_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool bt_ends(const char *s, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n > k + 2 && memcmp(s + n - k, suf, k) == 0;
}

/* The stem of an ASCII word for a brand name: "gardening" → "garden",
 * "beginners" → "begin", "balconies" → "balcony". */
static size_t bt_stem(char *w, size_t n)
{
    bool cut = true;
    if (bt_ends(w, n, "ing") || bt_ends(w, n, "ers"))
        n -= 3;
    else if (bt_ends(w, n, "able"))
        n -= 4;
    else if (bt_ends(w, n, "ies"))
        n -= 3, w[n++] = 'y';
    else if (n > 3 && w[n - 1] == 's' && w[n - 2] != 's')
        n -= 1;
    else
        cut = false;
    if (cut && n > 3 && w[n - 1] == w[n - 2] && !strchr("aeiou", w[n - 1]))
        n--;
    if (n > 8)
        n = 8;
    w[n] = '\0';
    return n;
}

/* A name for a startup made from a word: "Gardenify", "GoUrban", "CompostHub". */
static void bt_brand(const char *word, unsigned style, char *out, size_t size)
{
    static const char *const suffix[] = {"ly", "ify", "Hub", "Lab", "Nest", "io", "Works",
                                         "Base", "Loop", "Kit", "Flow", "Wise", "Spark", "Path"};
    static const char *const prefix[] = {"Go", "Get", "Try", "My", "Up", "Neo", "Hello"};
    char stem[WORD_MAX];
    size_t n = 0;
    bool ascii = true;
    for (const char *p = word; *p && n + 2 < sizeof stem; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x80)
            ascii = false;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c >= 0x80)
            stem[n++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    stem[n] = '\0';
    if (n == 0)
        n = (size_t)snprintf(stem, sizeof stem, "nova");
    const char *suf = suffix[(style / 3) % ARRAY_LEN(suffix)];
    if (ascii) {
        n = bt_stem(stem, n);
        if (strcmp(suf, "ly") == 0 && strchr("ly", stem[n - 1]))
            suf = "ify";
        while (n > 3 && strchr("aeiouy", stem[n - 1]) && strchr("aeiouy", suf[0]))
            stem[--n] = '\0';
        if (stem[0] >= 'a' && stem[0] <= 'z')
            stem[0] = (char)(stem[0] - 32);
    }
    if (style % 3 == 2)
        snprintf(out, size, "%s%s", prefix[(style / 3) % ARRAY_LEN(prefix)], stem);
    else
        snprintf(out, size, "%s%s", stem, suf);
}

void t_startup_ideas(gen_t *g)
{
    static const char *const problem[] = {
        "{$A|People} {struggle to|find it hard to} {keep track of|make sense of|find "
        "trustworthy help with} $s.",
        "{Getting started with|Keeping up with} $s is {slow, costly and confusing|harder than "
        "it should be} for $a.",
        "There is no {simple|affordable} way for $a to {plan|organise|share} $s.",
    };
    static const char *const solution[] = {
        "A {mobile app|web platform|subscription service} that {turns $s into a simple weekly "
        "routine|makes $s easy to plan and track}.",
        "A {marketplace|community platform} that {connects $a with experts in $s|lets $a "
        "share and swap $s}.",
        "A {tool|service} that {automates the boring parts of $s|gives personal, step-by-step "
        "guidance on $s}.",
    };
    static const char *const model[] = {
        "Monthly subscription{ with a free tier|}", "Commission on each booking or sale",
        "Freemium, with paid features for power users", "Per-seat pricing for teams",
        "One-off purchase plus optional add-ons",
    };
    int k = g_range(g, 3, 5);
    for (int i = 0; i < k; i++) {
        char name[64];
        g->sect = i == 0 ? g->tp->phrase[0] : g_next_phrase(g);
        bt_brand(g_next_word(g), g_pick(g, 64), name, sizeof name);
        g_printf(g, "%s%d. **%s**\n   Problem: ", i ? "\n" : "", i + 1, name);
        SENTS(g, problem, 1, NULL);
        g_puts(g, "\n   Solution: ");
        SENTS(g, solution, 1, NULL);
        g_puts(g, "\n   Business model: ");
        SENTS(g, model, 1, NULL);
        g_puts(g, ".\n");
    }
}

void t_startup_names(gen_t *g)
{
    static const char *const why[] = {
        "short and easy to remember, with $t at its heart",
        "{friendly|warm} and {modern|approachable}; hints at $s",
        "suggests {growth|momentum} in $t",
        "easy to spell and to say out loud",
        "{playful|confident}, and a natural fit for $s",
        "works well as a domain and a social handle",
        "{clear|direct}: says what you do in one word",
        "{memorable|distinctive} without being hard to pronounce",
    };
    int k = g_range(g, 8, 12);
    char names[12][64];
    int got = 0;
    for (int tries = 0; got < k && tries < 60; tries++) {
        char name[64];
        bt_brand(g_next_word(g), g_pick(g, 98), name, sizeof name);
        bool dup = false;
        for (int i = 0; i < got && !dup; i++)
            dup = strcmp(names[i], name) == 0;
        if (dup)
            continue;
        memcpy(names[got], name, sizeof name);
        g->sect = g_next_phrase(g);
        g_printf(g, "%d. %s — ", got + 1, name);
        g->cap_pending = false;
        g_line(g, why[g_pick(g, ARRAY_LEN(why))]);
        got++;
    }
}

void t_subheadline(gen_t *g)
{
    LIST(g, B_SUBLINE, g_range(g, 3, 5), NULL, false);
}

void t_testimonial(gen_t *g)
{
    static const char *const first[] = {
        "{I was skeptical at first|I did not expect much at first}, but $t {completely "
        "changed|really improved} the way I {handle|think about} $n.",
        "{I have tried a lot of things|Over the years I tried many options}, and $t is the "
        "{first|only} one that {actually stuck|made a real difference}.",
    };
    static const char *const more[] = {
        "{Within a few weeks|Almost right away}, I {noticed|saw} {a real difference|real "
        "results} in $n.",
        "{Everything is|It is all} {simple, clear and|easy to follow and} {genuinely "
        "helpful|well thought out}.",
        "{I would recommend it to|I have already recommended it to} {anyone interested in "
        "$t|friends and colleagues}.",
        "{What I like most is|The best part is} {how much time it saves me|that I finally "
        "feel in control of $n}.",
    };
    static const char *const names[] = {"Alex M.", "Priya S.", "Jordan K.", "Maria G.",
                                        "Sam T.",  "Chen L.",  "Fatima R.", "Lukas B."};
    static const char *const roles[] = {"customer", "small business owner", "long-time user",
                                        "project manager", "first-time buyer", "team lead"};
    g_puts(g, "“");
    SENTS(g, first, 1, NULL);
    g_puts(g, " ");
    SENTS(g, more, g_range(g, 1, 3), NULL);
    g_printf(g, "”\n— %s, %s\n", names[g_pick(g, ARRAY_LEN(names))],
             roles[g_pick(g, ARRAY_LEN(roles))]);
}

void t_social_quote(gen_t *g)
{
    static const char *const q[] = {
        "{Great|Good} $t {is not an accident|does not happen by chance}; it is the result of "
        "{small choices made every day|care and practice}.",
        "Every expert in $t was once a beginner{ who refused to quit|}.",
        "{Invest in|Take care of} $t today, and your future self will thank you.",
        "The {secret|heart} of $t is {simple|not complicated}: {show up|keep going} {and keep "
        "learning|every single day}.",
        "$t is {not a destination|less a destination than a habit}; it is a {journey worth "
        "taking|way of seeing the world}.",
        "{Start where you are|Begin today}: $t {grows|gets easier} with every step you take.",
    };
    g_puts(g, "“");
    SENTS(g, q, 1, NULL);
    g_puts(g, "”\n");
}

void t_social_bio(gen_t *g)
{
    static const char *const bio[] = {
        "{Helping|Inspiring} $a {with|through} $t{ and $n|}. {Tips, ideas and stories|Practical "
        "tips} {every week|daily}. {Say hi below|Follow along}.",
        "$T {lover|enthusiast} | {Sharing|Writing about} $n | {New posts every week|DMs "
        "open}. {Join us|Follow along}.",
        "{All things|Everything} $t. {Honest advice|Real stories} for $a. {Start here|Link "
        "below}.",
    };
    char line[512];
    g_fit(g, bio[g_pick(g, ARRAY_LEN(bio))], 160, line, sizeof line);
    g_puts(g, line);
    g_puts(g, "\n");
}

void t_value_prop(gen_t *g)
{
    static const char *const head[] = {
        "{The easiest way to|The smarter way to|A simpler way to} {enjoy|handle|get the most "
        "from} $t.",
        "$T {without the hassle|made simple|that works as hard as you do}.",
    };
    static const char *const bullets[] = {
        "{Save time|Move faster} on $n",
        "{Clear|Simple} {guidance|steps} {from day one|at every stage}",
        "{Better|More reliable} results with $n",
        "{Fair|Transparent} pricing with no surprises",
        "{Friendly support|Help} whenever you need it",
        "{Works|Fits} with {the way you already work|your existing routine}",
    };
    g_puts(g, "# ");
    SENTS(g, head, 1, NULL);
    g_puts(g, "\n");
    g_line(g, "{Made|Built} for $a who want {real results|more from $t} {without wasted time "
              "or money|in less time}.");
    g_puts(g, "\n");
    LIST(g, bullets, 3, "- ", false);
}

void t_video_description(gen_t *g)
{
    static const char *const chapters[] = {"The role of $s", "Getting started with $s",
                                           "Common mistakes with $s", "$s in practice",
                                           "Tips for better $s", "Tools for $s"};
    g_put(g, "In this video, {we|I} {explore|walk through|break down} $t{, covering $n and "
             "$n|}. ");
    SENTS(g, B_BODY, g_range(g, 1, 2), NULL);
    g_puts(g, "\n\nChapters:\n00:00 Intro\n");
    int idx[6];
    int k = g_choose(g, ARRAY_LEN(chapters), g_range(g, 3, 5), NULL, idx);
    int secs = 0;
    for (int i = 0; i < k; i++) {
        secs += 45 + (int)g_pick(g, 150);
        g->sect = g_next_phrase(g);
        g_printf(g, "%02d:%02d ", secs / 60, secs % 60);
        g->cap_pending = true;
        g_line(g, chapters[idx[i]]);
    }
    secs += 40 + (int)g_pick(g, 80);
    g_printf(g, "%02d:%02d Wrap-up\n\n", secs / 60, secs % 60);
    g_line(g, "{Subscribe|If you found this useful, subscribe} for more videos on $t{ and "
              "turn on notifications so you never miss one|}.");
    g_puts(g, "\n");
    g_hashtags(g, 3, 5);
    g_puts(g, "\n");
}

void t_video_script(gen_t *g)
{
    static const char *const mid_visual[] = {
        "[Visual: {close-up|slow pan} of $s]",
        "[Visual: {on-screen text|a simple diagram} explaining $s]",
        "[Visual: {b-roll|a quick montage} of $s in everyday life]",
    };
    g_puts(g, "## Scene 1 — Hook\n");
    g_line(g, "[Visual: {quick montage|bold title card} about $t]");
    g_put(g, "Narrator: ^");
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, "\n\n");
    int mids = g_range(g, 1, 4);
    for (int i = 0; i < mids; i++) {
        g->sect = g_next_phrase(g);
        g_printf(g, "## Scene %d — ", i + 2);
        g_line(g, i == 0 ? "{The basics|Setting the scene}: $s" : "{Key point|Next up}: $s");
        SENTS(g, mid_visual, 1, NULL);
        g_put(g, "\nNarrator: ^");
        SENTS(g, B_SECT, 2, NULL);
        g_puts(g, "\n\n");
    }
    g_printf(g, "## Scene %d — Call to action\n", mids + 2);
    g_line(g, "[Visual: {host on camera|end screen with subscribe button}]");
    g_put(g, "Narrator: ^");
    SENTS(g, B_CLOSE, 1, NULL);
    g_line(g, " {Subscribe for more on $t|Like and subscribe if this helped}{, and tell us in "
              "the comments what you want to see next|}.");
}

void t_video_tags(gen_t *g)
{
    g_tag_line(g, 10, 15);
}

void t_video_title(gen_t *g)
{
    static const char *const vt[] = {
        "I Tried $T for 30 Days — Here's What Happened",
        "$T Explained in {5|10} Minutes",
        "The {Beginner's|Complete} Guide to $T",
        "{Stop Making|Avoid} These $T Mistakes",
        "How I Got Better at $T",
        "$T: {What Nobody Tells You|The Honest Truth}",
        "Watch This Before You Try $T",
        "{5|7} $T Tips You Need to Know",
        "$T for $A: {Start Here|A Simple Plan}",
    };
    LIST(g, vt, 5, NULL, false);
}

void t_vision(gen_t *g)
{
    g_put(g, "{We envision|Our vision is} a world where $t {is within everyone's "
             "reach|brings people together|is simple, fair and sustainable}.");
    if (g_pick(g, 3))
        g_put(g, " {Within|Over} the next decade, we want $n to {become the norm, not the "
                 "exception|feel effortless for $a}.");
    g_puts(g, "\n");
}

void t_product_sheet(gen_t *g)
{
    static const char *const feats[] = {
        "{Thoughtful|Smart} design {built around|centred on} $n",
        "{Simple|Quick} {setup|start}: {ready to use in minutes|no special skills needed}",
        "{Durable|Reliable} {quality|construction} {made to last|for everyday use}",
        "{Flexible|Adaptable} {options|settings} for $n",
        "{Clear|Step-by-step} {instructions|guidance} included",
        "{Friendly|Responsive} support when you need it",
    };
    static const char *const bens[] = {
        "{Save time|Spend less effort} on $n",
        "{Enjoy|Get} {better|more consistent} results with $t",
        "{Feel confident|Stay in control} from the first day",
        "{Less|No} guesswork{, more results|}",
    };
    g_line(g, "# Product: $T");
    g_puts(g, "\n## Overview\n");
    SENTS(g, B_MKT, 2, NULL);
    g_puts(g, "\n\n");
    bool benefits_first = g_pick(g, 4) == 0;
    for (int part = 0; part < 2; part++) {
        if ((part == 0) != benefits_first) {
            g_puts(g, "## Key features\n");
            LIST(g, feats, g_range(g, 3, 5), "- ", false);
        } else {
            g_puts(g, "## Benefits\n");
            LIST(g, bens, g_range(g, 2, 3), "- ", false);
        }
        g_puts(g, "\n");
    }
    g_line(g, "## Ideal for\n$A who want {more from $t|$t without the hassle}.");
    if (g_pick(g, 2))
        g_puts(g, "\n## Specifications\n- Dimensions: [to be added]\n- Materials: [to be "
                  "added]\n- Price: [to be added]\n");
    g_puts(g, "\n");
    SENTS(g, B_CTA, 1, NULL);
    g_puts(g, "\n");
}

void t_welcome_email(gen_t *g)
{
    static const char *const steps[] = {
        "{Set up|Complete} your profile so we can {tailor|personalise} it around $n.",
        "{Explore|Browse} our {guide|starter guide} to $t.",
        "{Try|Pick} one small thing {today|this week}: {start with $n|focus on $n}.",
        "{Join|Say hello in} our community of $a.",
        "{Save|Bookmark} this email so the links are always at hand.",
    };
    g_line(g, "Subject: {Welcome to|You're in! Welcome to} $T");
    g_puts(g, "\n");
    g_line(g, "{Hi there,|Hello,|Hi and welcome,}");
    g_puts(g, "\n");
    g_line(g, "{Thank you for joining|Thanks for signing up for} $t{!|.} {We are "
              "thrilled|We're glad} to have you{ with us|}.");
    g_puts(g, "\n");
    g_line(g, "{Here is how to get started|A few first steps}:");
    LIST(g, steps, g_range(g, 2, 3), NULL, false);
    g_puts(g, "\n");
    g_line(g, "{If you have any questions, just reply|Questions at any point? Just reply} to "
              "this email{ — we read every message|}.");
    g_puts(g, "\n");
    g_line(g, "{Warm regards|Cheers|Best wishes},");
    g_line(g, "The $T team");
}

void t_push(gen_t *g)
{
    static const char *const titles[] = {
        "{New|Fresh} for you: $T", "$T {is waiting|awaits}", "{Quick tip|Today's tip}: $T",
        "{Ready|Time} for $T?",    "Don't miss this: $T",
    };
    static const char *const msgs[] = {
        "{Tap to see|Open the app to discover} {what's new with $t|today's picks for $n}.",
        "Your $t {update|guide} is ready. {Take a look|Check it out} {now|before it's gone}.",
        "{Just a few minutes|Two minutes} {today|is all it takes} to move forward with $n. "
        "{Let's go|Start now}.",
        "{Something new|A small surprise} about $t {just landed|is here}. Tap to {see "
        "more|find out}.",
    };
    char t[3][256], m[3][256];
    for (int i = 0; i < 3; i++) {
        g_fit_any(g, titles, ARRAY_LEN(titles), 40, t, i, t[i]);
        g_fit_any(g, msgs, ARRAY_LEN(msgs), 120, m, i, m[i]);
        g_printf(g, "%d. ", i + 1);
        g_puts(g, t[i]);
        g_puts(g, "\n   ");
        g_puts(g, m[i]);
        g_puts(g, i < 2 ? "\n\n" : "\n");
    }
}

void t_listicle(gen_t *g)
{
    static const char *const heads[] = {
        "Start with $s",   "Focus on $s",         "Rethink $s",       "Pay attention to $s",
        "Make time for $s", "Don't ignore $s",    "Experiment with $s", "Keep track of $s",
        "Learn from $s",   "Simplify $s",
    };
    int k = g_range(g, 5, 8);
    uint64_t used = 0;
    g_printf(g, "# %d ", k);
    g_line(g, "{Ways|Tips|Ideas} {to Make the Most of|for Better|to Rethink} $T");
    g_puts(g, "\n");
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_PROMISE, 1, NULL);
    g_puts(g, "\n\n");
    int idx[10];
    int got = g_choose(g, ARRAY_LEN(heads), k, NULL, idx);
    for (int i = 0; i < got; i++) {
        g->sect = i == 0 ? g->tp->phrase[0] : g_next_phrase(g);
        g_printf(g, "## %d. ", i + 1);
        g_line(g, heads[idx[i]]);
        SENTS(g, B_SECT, 2, &used);
        if (used == (1ull << ARRAY_LEN(B_SECT)) - 1)
            used = 0;
        g_puts(g, "\n\n");
    }
    SENTS(g, B_CLOSE, 1, NULL);
    g_puts(g, "\n");
}

void t_blog_tags(gen_t *g)
{
    g_tag_line(g, 5, 10);
}

void t_pros_cons(gen_t *g)
{
    static const char *const pros[] = {
        "{Can save|Saves} time {on $n|once it becomes routine}",
        "{Improves|Strengthens} $n",
        "{Flexible|Adaptable} enough for $a",
        "{Low|Modest} cost to {start|try}",
        "{Builds|Develops} useful {skills|habits} that last",
        "{A large|An active} community{ and plenty of resources|}",
    };
    static const char *const cons[] = {
        "{Takes|Requires} time {to learn|before results show}",
        "{Results can vary|Not every approach works for everyone}",
        "{Can get|May become} {expensive|costly} with premium options",
        "{Easy to overdo|Easy to lose momentum with} $n",
        "{Needs|Demands} {regular attention|consistent effort}",
        "{Conflicting advice|Too much information} about $t can be confusing",
    };
    if (g_pick(g, 2))
        g_line(g, "{Thinking about|Considering} $t? {Here is an honest look at both "
                  "sides.|Here is how it stacks up.}\n");
    g_puts(g, "## Pros\n");
    LIST(g, pros, g_range(g, 3, 5), "- ", false);
    g_puts(g, "\n## Cons\n");
    LIST(g, cons, g_range(g, 3, 5), "- ", false);
    if (g_pick(g, 2))
        g_line(g, "\n**Verdict:** ^{for most $a, the pros outweigh the cons|$t is worth it if you "
                  "are ready to commit to $n}.");
}

void t_google_ad(gen_t *g)
{
    static const char *const heads[] = {
        "$T",           "{Try|Discover|Explore} $T", "$T {Made Easy|Done Right}",
        "$X {Made Easy|Done Right}", "Better $N",   "{Get Started|Start} Today",
        "{Simple|Smart} $X Solutions", "$X for $A", "Learn More About $X", "{Try|Discover} $X",
    };
    static const char *const descs[] = {
        "{Discover|Explore} $t {for $a|today}. {Simple, reliable and built around you|Clear "
        "guidance at every step}.",
        "{Get|Enjoy} better $n without the hassle. {Start today|Sign up in minutes}.",
        "{Everything you need for|Your shortcut to} $t in one place. {Learn more|Find out how} "
        "today.",
        "{Trusted|Friendly} help with $t and $n. {Book|Get in touch} today.",
        "{Discover|Explore} $x {for $a|today}. Clear guidance at every step.",
    };
    char fields[5][256];
    g->extra = bt_short_topic(g->tp->phrase[0]);
    for (int i = 0; i < 3; i++) {
        g_fit_any(g, heads, ARRAY_LEN(heads), 30, fields, i, fields[i]);
        g_printf(g, "Headline %d: ", i + 1);
        g_puts(g, fields[i]);
        g_puts(g, "\n");
    }
    for (int i = 0; i < 2; i++) {
        g_fit_any(g, descs, ARRAY_LEN(descs), 90, fields + 3, i, fields[3 + i]);
        g_printf(g, "Description %d: ", i + 1);
        g_puts(g, fields[3 + i]);
        g_puts(g, "\n");
    }
}

void t_facebook_ad(gen_t *g)
{
    static const char *const buttons[] = {"Learn More", "Shop Now", "Sign Up", "Get Offer",
                                          "Book Now"};
    static const char *const descs[] = {"{Simple|Smart|Honest} $t for $a.",
                                        "{Simple|Smart|Honest} $x for $a.", "$X, made simple."};
    char line[256];
    g->extra = bt_short_topic(g->tp->phrase[0]);
    g_puts(g, "Primary text: ");
    SENTS(g, B_MKT, g_range(g, 2, 3), NULL);
    g_puts(g, "\n\nHeadline: ");
    static const char *const heads[] = {
        "$T, {Reimagined|Done Right}",     "$X, {Finally Made Simple|Reimagined|Done Right}",
        "Better $X Starts {Here|Today}",   "{Discover|Meet} the Simpler Side of $X",
        "$X That Actually {Works|Delivers}", "Make $X Your {Advantage|Superpower}",
    };
    g_fit_any(g, heads, ARRAY_LEN(heads), 40, NULL, 0, line);
    g_puts(g, line);
    g_puts(g, "\n\nDescription: ");
    g_fit_any(g, descs, ARRAY_LEN(descs), 60, NULL, 0, line);
    g_puts(g, line);
    g_printf(g, "\n\nCall to action: %s\n", buttons[g_pick(g, ARRAY_LEN(buttons))]);
}

void t_job_description(gen_t *g)
{
    static const char *const resp[] = {
        "{Plan|Own} and {deliver|carry out} work on $n",
        "{Collaborate|Work closely} with {colleagues|the team} on shared goals",
        "{Keep|Maintain} {clear|accurate} {documentation|records} of $n",
        "{Identify|Spot} opportunities to improve $n",
        "{Communicate|Share} progress with {stakeholders|the team} {regularly|every week}",
        "{Stay up to date|Keep current} with {best practices|new developments} in $t",
    };
    static const char *const req[] = {
        "{Proven|Solid} experience with $n or a related field",
        "{Strong|Clear} written and verbal communication skills",
        "{Good|Strong} organisational skills and attention to detail",
        "Ability to work {independently|on your own} and as part of a team",
        "{Knowledge of|Familiarity with} $n",
        "{A genuine interest in|Enthusiasm for} $t",
    };
    static const char *const offer[] = {
        "{A supportive|A friendly} team that values your ideas",
        "{Flexible|Hybrid} working {hours|arrangements}",
        "{Room to grow|Learning and development opportunities}",
        "Salary: [to be confirmed]",
    };
    static const char *const roles[] = {"specialist", "coordinator", "manager", "lead"};
    char title[PHRASE_MAX + 32];
    const topic_t *saved_tp = g->tp;
    topic_t rest = *g->tp; /* the topic without the role phrase, for $t and $n */
    int role = -1;
    /* A phrase naming a role ("senior backend developer") is the job title. */
    for (int i = 0; i < rest.nphrase && role < 0; i++) {
        const char *ph = rest.phrase[i], *lastw = strrchr(ph, ' ');
        char low[WORD_MAX];
        lastw = lastw ? lastw + 1 : ph;
        bt_lower(lastw, strlen(lastw), low);
        if (bt_in_list(low, role_words, ARRAY_LEN(role_words)))
            role = i;
    }
    if (role >= 0) {
        snprintf(title, sizeof title, "%s", rest.phrase[role]);
        if (rest.nphrase > 1) {
            memmove(rest.phrase[role], rest.phrase[role + 1],
                    sizeof rest.phrase[0] * (size_t)(rest.nphrase - role - 1));
            rest.nphrase--;
        }
        g->tp = &rest;
    } else {
        snprintf(title, sizeof title, "%s %s", rest.phrase[0], roles[g_pick(g, ARRAY_LEN(roles))]);
    }
    g_puts(g, "# Job title: ");
    g_emit_title(g, title);
    if (title[0] >= 'A' && title[0] <= 'Z' && title[1] >= 'a' && title[1] <= 'z')
        title[0] = (char)(title[0] + 32); /* mid-sentence: "a senior developer" */
    g->extra = title;
    g_puts(g, "\n\n## About the role\n");
    g_line(g, "We are looking for a {motivated|talented|detail-oriented} $x to {join our "
              "team|help us grow}. {In this role|Day to day}, you will {focus on|take "
              "ownership of} $t{ and $n|}.");
    g_puts(g, "\n## Responsibilities\n");
    LIST(g, resp, g_range(g, 4, 6), "- ", false);
    g_puts(g, "\n## Requirements\n");
    LIST(g, req, g_range(g, 4, 6), "- ", false);
    g_puts(g, "\n## What we offer\n");
    LIST(g, offer, g_range(g, 2, 4), "- ", false);
    g_line(g, "\n{To apply, send|Interested? Send} your CV and a short note about your "
              "experience with $t to [email].");
    g->tp = saved_tp;
}

void t_review(gen_t *g)
{
    static const char *const titles[] = {"A solid choice", "Worth it",
                                         "Impressive, with one caveat", "Better than expected",
                                         "Good, not perfect"};
    int stars = g_pick(g, 4) == 0 ? 3 : 4 + (int)g_pick(g, 2);
    g_puts(g, "# ");
    g_puts(g, titles[g_pick(g, ARRAY_LEN(titles))]);
    g_puts(g, ": ");
    g_emit_title(g, g->tp->phrase[0]);
    g_puts(g, "\n**Rating:** ");
    for (int i = 0; i < 5; i++)
        g_puts(g, i < stars ? "★" : "☆");
    g_printf(g, " (%d/5)\n\n", stars);
    g_put(g, "I {tried|spent a few weeks with} $t{ recently|}, and {overall I am "
             "impressed|it mostly lived up to my expectations}. {What stood out|The highlight} "
             "was $n: it felt {well thought out|genuinely useful}.");
    if (g_pick(g, 2))
        g_put(g, " {It was also easy to get started|Getting started took no time at all}, "
                 "which I appreciated.");
    g_put(g, g_pick(g, 2) ? "\n\n" : " ");
    g_line(g, "{On the downside|One thing could be better}: $n {could be simpler|took a while "
              "to get used to}. {Would I recommend it|Would I try it again}? {Yes|Absolutely}"
              "{, especially for $a|}.");
}

void t_feature_section(gen_t *g)
{
    static const char *const names[] = {"{Smart|Simple} $S", "Built-in $S", "Effortless $S",
                                        "$S, {simplified|your way}", "Everything for $S"};
    static const char *const lines[] = {
        "{Get|Enjoy} $s {without the usual hassle|in a few clicks}, so you can relax.",
        "{Everything|All you need} for $s is {ready when you are|right where you expect it}.",
        "{Stay on top of|Keep track of} $s with {clear|simple} {overviews|reminders}.",
        "{Designed|Made} to make $s {faster|easier} {from day one|for $a}.",
    };
    g_line(g, "# {Why choose $T?|What makes $T different?|What sets $T apart?}");
    g_puts(g, "\n");
    g_line(g, "{Everything you need|All the tools you need} {for $t|to enjoy $t}, {in one "
              "place|designed around you}.");
    g_puts(g, "\n");
    int k = g_range(g, 3, 4);
    int ni[5], li[4];
    g_choose(g, ARRAY_LEN(names), k, NULL, ni);
    g_choose(g, ARRAY_LEN(lines), k, NULL, li);
    for (int i = 0; i < k; i++) {
        g->sect = i == 0 ? g->tp->phrase[0] : g_next_phrase(g);
        g_puts(g, "## ");
        g_line(g, names[ni[i]]);
        g_line(g, lines[li[i]]);
        if (i + 1 < k)
            g_puts(g, "\n");
    }
}
