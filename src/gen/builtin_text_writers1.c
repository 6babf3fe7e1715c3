/* builtin_text_writers1.c — the writers of the builtin text generator, first half
 * (freestyle to social caption): one function per template, laying out its shape from
 * sentence patterns. Part of builtin_text.c (which see). */
#include "gen/builtin_text_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ writers */

static void g_title_line(gen_t *g)
{
    g_puts(g, "# ");
    SENTS(g, B_TITLE, 1, NULL);
    g_puts(g, "\n\n");
}

static void g_section(gen_t *g, uint64_t *used_sect)
{
    g->sect = g_next_phrase(g);
    g_puts(g, "## ");
    SENTS(g, B_SUBHEAD, 1, NULL);
    g_puts(g, "\n");
    SENTS(g, B_SECT, g_range(g, 2, 3), used_sect);
    g_puts(g, "\n\n");
}

void t_freestyle(gen_t *g)
{
    uint64_t used = 0;
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_BODY, 2, &used);
    g_puts(g, "\n\n");
    if (g_pick(g, 2)) {
        SENTS(g, B_BODY, g_range(g, 2, 3), &used);
        g_puts(g, "\n\n");
    }
    SENTS(g, B_BODY, 1, &used);
    g_puts(g, " ");
    SENTS(g, B_CLOSE, 1, NULL);
    g_puts(g, "\n");
}

void t_about_us(gen_t *g)
{
    static const char *const intro[] = {
        "{We are|We're} {a team|a small team|a group of people} {passionate about|dedicated "
        "to} $t.",
        "{At heart|First and foremost}, we are people who care deeply about $t.",
    };
    static const char *const story[] = {
        "{We started with a simple idea|It all began with a simple question}: {$t should be "
        "easier|what if $t could be simpler} for $a{ everywhere|}.",
        "{What began as a side project|What started as a simple idea} {has grown|grew} into "
        "{a team|a company} {built around|focused on} $n.",
    };
    static const char *const what[] = {
        "Today we {help|work with} $a {to make the most of|who care about} $t, with a "
        "{special focus|focus} on $n and $n.",
        "{Every|Each} project {starts with listening|begins with a conversation} and ends "
        "with {work we are proud of|results you can see}.",
        "{We keep things simple|We do not believe in shortcuts}: {honest advice|clear "
        "communication}, {careful work|real craft} and {no surprises|fair prices}.",
    };
    static const char *const values[] = {
        "{We believe in|What drives us is} {honesty, craft and care|doing things "
        "properly|keeping things simple}.",
        "{If that sounds like you|If you share that view}, {we would love to hear from you|get "
        "in touch — we would love to meet you}.",
    };
    if (g_pick(g, 2))
        g_puts(g, "# About us\n\n");
    SENTS(g, intro, 1, NULL);
    g_puts(g, " ");
    SENTS(g, story, 1, NULL);
    g_puts(g, "\n\n");
    SENTS(g, what, g_range(g, 2, 3), NULL);
    g_puts(g, "\n\n");
    g_put(g, values[0]);
    g_puts(g, " ");
    g_line(g, values[1]);
}

void t_advertisement(gen_t *g)
{
    g_puts(g, "# ");
    SENTS(g, B_HEAD, 1, NULL);
    g_puts(g, "\n\n");
    SENTS(g, B_MKT, g_range(g, 2, 3), NULL);
    g_puts(g, "\n\n");
    SENTS(g, B_CTA, 1, NULL);
    g_puts(g, "\n");
}

void t_article(gen_t *g)
{
    static const char *const concl[] = {"Conclusion", "Final thoughts", "The bottom line"};
    uint64_t used = 0, used_sect = 0;
    g_title_line(g);
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_BODY, g_range(g, 1, 2), &used);
    g_puts(g, "\n\n");
    for (int i = g_range(g, 3, 5); i > 0; i--) {
        g_section(g, &used_sect);
        if (used_sect == (1ull << ARRAY_LEN(B_SECT)) - 1)
            used_sect = 0;
    }
    g_puts(g, "## ");
    SENTS(g, concl, 1, NULL);
    g_puts(g, "\n");
    SENTS(g, B_BODY, 1, &used);
    g_puts(g, " ");
    SENTS(g, B_CLOSE, 1, NULL);
    g_puts(g, "\n");
}

void t_blog_intro(gen_t *g)
{
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_BODY, g_range(g, 1, 2), NULL);
    g_puts(g, " ");
    SENTS(g, B_PROMISE, 1, NULL);
    g_puts(g, "\n");
}

void t_blog_outline(gen_t *g)
{
    static const char *const sec[] = {
        "Understanding $s",          "Why $t depends on $s",    "Getting started with $s",
        "Common mistakes with $s",   "Tools and resources for $s", "Real-world examples of $s",
        "$s and $t: how they connect", "Measuring progress with $s", "Advanced tips for $s",
    };
    static const char *const sub[] = {
        "Define $s in plain terms",
        "Why $a should care",
        "A quick example",
        "{Key|Main} benefits",
        "Mistakes to avoid",
        "{One simple|A practical} first step",
        "How to measure {progress|success}",
        "{Questions|Objections} readers often have",
        "{Useful|Recommended} tools",
        "How it connects to $n",
    };
    int total = g_range(g, 5, 8);
    g_puts(g, "# ");
    SENTS(g, B_TITLE, 1, NULL);
    g_puts(g, "\n\n1. Introduction\n");
    g_line(g, "   - Hook: {a surprising fact|a relatable question|a short story} about $t");
    g_line(g, "   - Why $t matters {now|today}");
    if (g_pick(g, 2))
        g_line(g, "   - What the reader will learn");
    int idx[16];
    int nsec = g_choose(g, ARRAY_LEN(sec), total - 2, NULL, idx);
    for (int i = 0; i < nsec; i++) {
        g->sect = g_next_phrase(g);
        g_printf(g, "%d. ", i + 2);
        g_line(g, sec[idx[i]]);
        int sidx[4];
        int ns = g_choose(g, ARRAY_LEN(sub), g_range(g, 2, 3), NULL, sidx);
        for (int k = 0; k < ns; k++) {
            g_puts(g, "   - ");
            g_line(g, sub[sidx[k]]);
        }
    }
    g_printf(g, "%d. Conclusion\n", nsec + 2);
    g_line(g, "   - Recap of the key points about $t");
    g_line(g, "   - {A final tip|One last piece of advice}");
    if (g_pick(g, 2))
        g_line(g, "   - Call to action: {share your experience|try one idea this week}");
}

void t_blog_outro(gen_t *g)
{
    g_put(g, "{To wrap up|In short|All in all}, $t {comes down to|is really about} $n and $n. ");
    SENTS(g, B_BODY, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_CLOSE, 1, NULL);
    g_puts(g, g_pick(g, 2) ? "\n\n" : " ");
    g_line(g, "{What is your experience with $t|Which of these ideas will you try first}? "
              "{Share it in the comments|Let us know in the comments}{ — we read every "
              "one|}.");
}

void t_blog_paragraph(gen_t *g)
{
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_BODY, g_range(g, 3, 4), NULL);
    if (g_pick(g, 2)) {
        g_puts(g, " ");
        SENTS(g, B_CLOSE, 1, NULL);
    }
    g_puts(g, "\n");
}

void t_blog_post(gen_t *g)
{
    static const char *const concl[] = {"Conclusion", "Wrapping up", "Final thoughts"};
    uint64_t used = 0, used_sect = 0;
    g_title_line(g);
    SENTS(g, B_OPEN, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_BODY, 1, &used);
    g_puts(g, " ");
    SENTS(g, B_PROMISE, 1, NULL);
    g_puts(g, "\n\n");
    for (int i = g_range(g, 3, 4); i > 0; i--) {
        g_section(g, &used_sect);
        if (used_sect == (1ull << ARRAY_LEN(B_SECT)) - 1)
            used_sect = 0;
    }
    g_puts(g, "## ");
    SENTS(g, concl, 1, NULL);
    g_puts(g, "\n");
    SENTS(g, B_BODY, 1, &used);
    g_puts(g, " ");
    SENTS(g, B_CLOSE, 1, NULL);
    g_line(g, " {What has your experience with $t been|Which idea will you try first}? "
              "{Tell us in the comments|Share it in the comments}.");
}

void t_blog_section(gen_t *g)
{
    uint64_t used = 0;
    g->sect = g->tp->phrase[0];
    g_puts(g, "## ");
    SENTS(g, B_SUBHEAD, 1, NULL);
    g_puts(g, "\n\n");
    for (int p = g_range(g, 2, 3); p > 0; p--) {
        SENTS(g, B_SECT, 2, &used);
        g_puts(g, " ");
        SENTS(g, B_BODY, 1, NULL);
        g_puts(g, p > 1 ? "\n\n" : "\n");
    }
}

void t_talking_points(gen_t *g)
{
    static const char *const pts[] = {
        "Why $t matters {right now|today} and who it affects",
        "The {basics|key terms} of $n, explained {simply|in plain language}",
        "{Common|Widespread} myths about $t{ and what is actually true|}",
        "How $n {changes|shapes} {the outcome|the results}",
        "{A step-by-step|A simple} approach for $a",
        "{Mistakes|Pitfalls} to avoid with $n",
        "{Real-world examples|Short case studies} that show $t in action",
        "{Tools|Resources} that make $n easier",
        "How to measure progress with $t",
        "What the future of $t {might look like|holds}",
    };
    LIST(g, pts, g_range(g, 5, 8), "- ", true);
}

void t_blog_title(gen_t *g)
{
    LIST(g, B_TITLE, g_range(g, 5, 10), NULL, false);
}

void t_call_to_action(gen_t *g)
{
    LIST(g, B_CTA, g_range(g, 3, 5), NULL, false);
}

void t_faq(gen_t *g)
{
    static const char *const qa[] = {
        "**Q: What is $t?**\nA: ^$t {is about|covers} $n and $n. {In short, it|Put simply, it} "
        "{helps $a get better results with less effort|is a practical way to reach your "
        "goals}.",
        "**Q: Who is $t for?**\nA: {It suits|It is a good fit for} $a{, whether they are just "
        "starting out or already experienced|}. Anyone who cares about $n can benefit.",
        "**Q: How do I get started with $t?**\nA: {Start small|Begin with one simple step}: "
        "{focus on $n first|pick one area, such as $n}, {then build from there|and add more "
        "once it feels natural}.",
        "**Q: How long does it take to see results?**\nA: {It depends on your starting "
        "point|That varies}, but {many people notice a difference within a few "
        "weeks|steady effort usually shows results sooner than expected}.",
        "**Q: What are the most common mistakes with $t?**\nA: {Trying to do everything at "
        "once|Skipping the basics} and {ignoring|overlooking} $n are the {usual|most "
        "frequent} ones.",
        "**Q: Does $t cost a lot?**\nA: {Not necessarily|Not always}. {You can begin with what "
        "you already have|Many of the basics are free}, and invest more {only when you are "
        "sure it is worth it|as your needs grow}.",
        "**Q: Where can I learn more about $n?**\nA: {Good starting points are|Try} {reputable "
        "guides, community forums and hands-on practice|trusted guides and people who "
        "already practise it}.",
        "**Q: Why does $t matter?**\nA: Because it {affects|touches} $n{ and $n|}, and {small "
        "improvements add up|getting it right early saves time later}.",
    };
    int idx[8];
    int k = g_choose(g, ARRAY_LEN(qa), g_range(g, 4, 6), NULL, idx);
    for (int i = 0; i < k; i++) {
        if (i)
            g_puts(g, "\n");
        g_line(g, qa[idx[i]]);
    }
}

void t_hashtags(gen_t *g)
{
    g_hashtags(g, 8, 15);
    g_puts(g, "\n");
}

void t_headline(gen_t *g)
{
    LIST(g, B_HEAD, g_range(g, 5, 8), NULL, false);
}

void t_how_it_works(gen_t *g)
{
    static const char *const steps[] = {
        "Tell us what you need\n{Share|Describe} your goals for $t {in a few words|in a "
        "short form}, so we understand where you are.",
        "{Get|Receive} a {tailored|personal} plan\nWe {map out|put together} {the steps|a "
        "plan} around $n, {matched to your situation|so nothing is left to chance}.",
        "{Set it up|Get set up} {in minutes|quickly}\n{Everything you need for $t is "
        "ready|Connect your tools and preferences}, {with guidance at every step|without a "
        "steep learning curve}.",
        "{Put it to work|Start using it}\n{Use it day to day|Apply it to $n}, and adjust "
        "as you learn what works for you.",
        "{Track|See} your {progress|results}\n{Clear updates show|A simple overview shows} "
        "{how $t is improving|what has changed}, so you always know where you stand.",
        "{Keep improving|Grow with it}\n{As your needs change|When you are ready for more}, "
        "{add $n|expand} {without starting over|at your own pace}.",
    };
    int k = g_range(g, 3, 5);
    int idx[6];
    int got = g_choose(g, ARRAY_LEN(steps) - 1, k - 1, NULL, idx);
    for (int i = 0; i < got; i++)
        idx[i]++;
    idx[got++] = 0;
    qsort(idx, (size_t)got, sizeof idx[0], bt_cmp_int);
    for (int i = 0; i < got; i++) { /* a heading per step, its text under it */
        g_printf(g, "%s## Step %d: ", i ? "\n" : "", i + 1);
        g_line(g, steps[idx[i]]);
    }
}

void t_meta_description(gen_t *g)
{
    static const char *const long_form[] = {
        "{Discover|Learn|Explore} {everything you need to know about|the essentials "
        "of|practical tips on} $t{, from $n to $n|}. {Start today|Read more|Get started now}.",
        "{Your|A} {practical|clear|friendly} guide to $t for $a: {tips, examples and next "
        "steps|what works and what to avoid}.",
        "{Looking for|Curious about} $t? {Find|Get} {clear answers|practical advice} on $n "
        "and {more|how to get started}.",
    };
    char line[512];
    g_fit(g, long_form[g_pick(g, ARRAY_LEN(long_form))], 159, line, sizeof line);
    size_t n = strlen(line);
    while (n > 0 && strchr(".!?,;: ", line[n - 1]))
        n--;
    line[n] = '\0';
    g_puts(g, line);
    g_puts(g, n > 0 && line[n - 1] == '?' ? "\n" : ".\n");
}

void t_meta_keywords(gen_t *g)
{
    g_tag_line(g, 8, 15);
}

void t_mission(gen_t *g)
{
    static const char *const m1[] = {
        "Our mission is to make $t {simple, accessible and rewarding|easier and more "
        "rewarding} for $a.",
        "Our mission is to help $a {get more out of|succeed with} $t{ through $n| every "
        "day|}.",
        "We exist to {bring|put} $t within reach of $a{, wherever they are|}.",
    };
    static const char *const m2[] = {
        "{We do this by|Every day, we focus on} {listening closely|putting people first}, "
        "{doing honest work|keeping things simple} and {never settling for good "
        "enough|learning as we go}.",
        "{Through|With} $n, we {help people|make it possible to} {spend less time worrying "
        "and more time living|turn good intentions into real results}.",
    };
    SENTS(g, m1, 1, NULL);
    if (g_pick(g, 3)) {
        g_puts(g, " ");
        SENTS(g, m2, 1, NULL);
    }
    g_puts(g, "\n");
}

void t_newsletter(gen_t *g)
{
    static const char *const heads[] = {
        "{Spotlight|This week's focus}: $S",
        "{Quick tip|Try this}: $S",
        "{Worth your time|Worth a look}: $S",
        "{On our radar|What we are exploring}: $S",
    };
    uint64_t used = 0;
    g_line(g, "Subject: {This week in|Your update on|What's new with} $T");
    g_puts(g, "\n");
    g_line(g, "{Hi there,|Hello $a,|Hi friends,}");
    g_puts(g, "\n");
    SENTS(g, B_OPEN, 1, NULL);
    g_put(g, " {Here is what we have for you this time.|This issue is all about $t.}\n\n");
    int idx[4];
    int k = g_choose(g, ARRAY_LEN(heads), g_range(g, 2, 3), NULL, idx);
    for (int i = 0; i < k; i++) {
        g->sect = g_next_phrase(g);
        g_puts(g, "## ");
        g_line(g, heads[idx[i]]);
        SENTS(g, B_SECT, 2, &used);
        g_puts(g, "\n\n");
    }
    g_line(g, "{Until next time|Thanks for reading|See you next week},");
    g_line(g, "The $T {team|newsletter team}");
}

void t_pas(gen_t *g)
{
    static const char *const pain[] = {
        "{Struggling with|Tired of wrestling with|Frustrated by} $t? {You are not alone|It "
        "happens to the best of us}.",
        "{Most days|Too often}, $t {feels harder than it should|takes more time than it "
        "deserves}, and $n {only adds to the pile|never quite gets done}.",
    };
    static const char *const agitate[] = {
        "{Every day it stays unsolved|The longer it drags on}, {it costs you time, money and "
        "energy|it eats into your time and focus}.",
        "{Meanwhile|And all the while}, {small problems with $n grow into big ones|you fall "
        "further behind on what matters}.",
        "{It is not just frustrating|It is more than an annoyance}: it {holds you back|keeps "
        "you from the results you want}.",
    };
    static const char *const sol[] = {
        "{That is where|This is exactly why} {we come in|our approach helps}: {a simple, "
        "reliable|a clear, practical} way to {handle $t|take control of $t}{, starting with "
        "$n|}.",
        "{Get started today|Try it today} and {feel the difference|see the difference for "
        "yourself}.",
    };
    g_puts(g, "**Pain:** ");
    g_put(g, pain[0]);
    if (g_pick(g, 2)) {
        g_puts(g, " ");
        g_put(g, pain[1]);
    }
    g_puts(g, "\n\n**Agitate:** ");
    SENTS(g, agitate, g_range(g, 2, 3), NULL);
    g_puts(g, "\n\n**Solution:** ");
    g_put(g, sol[0]);
    g_puts(g, " ");
    g_line(g, sol[1]);
}

void t_paragraph(gen_t *g)
{
    g_put(g, "{When it comes to $t, a few things matter more than the rest.|$t deserves a "
             "closer look than it usually gets.|There is more to $t than meets the eye.} ");
    SENTS(g, B_BODY, g_range(g, 3, 4), NULL);
    g_puts(g, " ");
    SENTS(g, B_CLOSE, 1, NULL);
    g_puts(g, "\n");
}

void t_press_release(gen_t *g)
{
    g_puts(g, "FOR IMMEDIATE RELEASE\n\n# ");
    if (g_pick(g, 3))
        g_line(g, "[Organization] {Announces|Introduces|Launches} $T{ for $A|}");
    else
        g_line(g, "New {Initiative|Program} Brings $T to $A");
    g_puts(g, "\n[CITY] — [Month Day, Year] — ");
    g_line(g, "{Today|This week}, [Organization] {announced|unveiled|launched} a new "
              "{initiative|offering} {focused on|dedicated to} $t, {designed to|which aims to} "
              "{help $a with $n|make $n simpler for $a}.");
    g_puts(g, "\n");
    SENTS(g, B_MKT, g_range(g, 1, 2), NULL);
    g_line(g, " {The launch|The announcement} {reflects|builds on} [Organization]'s "
              "{long-standing|ongoing} work on $n.");
    g_puts(g, "\n");
    g_line(g, "“{We built this because|We started this work because} {$t deserves "
              "better|people told us $n felt too hard}. {Our goal is simple|What we want is "
              "simple}: {to make $t work for everyone|to help $a do more with less},” said "
              "[Name], [Title] at [Organization].");
    g_puts(g, "\n");
    g_line(g, "{The new offering|It} is available {starting today|from [Date]}. More "
              "information is available at [website].");
    g_puts(g, "\n## About [Organization]\n");
    g_line(g, "[Organization] {works on|focuses on} $t{ and $n|}. {Learn more at "
              "[website].|Media contact: [Name], [email].}");
    g_puts(g, "\n\\###\n"); /* the end mark, escaped: "###" alone is a heading */
}

void t_social_post(gen_t *g)
{
    static const char *const hook[] = {
        "{Let's talk about|Quick thought on} $t.",
        "{Here is something|Something} {nobody tells you|we wish we had known sooner}: $t.",
        "{Hot take|Unpopular opinion}: $t is {simpler|more rewarding} than it looks.",
    };
    static const char *const ask[] = {
        "What is your {take on|experience with} $t? {Tell us|Share it} below.",
        "{Save this|Bookmark this} for later and share it with someone who needs it.",
        "{Which|What} would you add? Drop it in the comments.",
    };
    SENTS(g, hook, 1, NULL);
    g_puts(g, " ");
    SENTS(g, B_BODY, g_range(g, 1, 2), NULL);
    g_puts(g, " ");
    SENTS(g, ask, 1, NULL);
    g_puts(g, "\n\n");
    g_hashtags(g, 2, 3);
    g_puts(g, "\n");
}

void t_caption(gen_t *g)
{
    static const char *const line1[] = {
        "{Little moments|Small things}, big {difference|impact}: $t.",
        "$T, {just the way we like it|done our way}.",
        "{All about|Here for} $t{ today|}.",
        "{Proof|A reminder} that $t {never gets old|is always worth it}.",
    };
    static const char *const cta[] = {
        "{Tap the link in our bio|Visit the link in bio} to {learn more|see more}.",
        "Tell us {in the comments|below}: {how do you enjoy $t|what does $t mean to you}?",
        "{Tag a friend|Share this with someone} who {loves|needs} $t.",
        "{Save this post|Follow us} for more on $n.",
    };
    SENTS(g, line1, 1, NULL);
    g_puts(g, "\n");
    SENTS(g, cta, 1, NULL);
    g_puts(g, "\n\n");
    g_hashtags(g, 3, 5);
    g_puts(g, "\n");
}
