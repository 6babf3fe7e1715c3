/* test_export.c — the export module's pure parts: the Markdown subset parser
 * (export/markdown.h), the Content-Disposition file names, the format table, and the
 * md/txt/html writers' exact bytes. (DOCX and PDF are read back by third-party tools
 * in tests/http/test_export.py.) */
#include "export/export.h"
#include "export/markdown.h"
#include "test.h"

#include <string.h>

/* A block per line: P, H<level>, B<depth>, O<depth>#<number>, then ':' and the runs,
 * bold as <b>..</b>, italic as <i>..</i>, both as <bi>..</bi>, a line break as <br>. */
static void dump(buf_t *o, const md_doc_t *d)
{
    static const char *const open[4] = {"", "<b>", "<i>", "<bi>"};
    static const char *const close[4] = {"", "</b>", "</i>", "</bi>"};
    for (size_t i = 0; i < d->nblocks; i++) {
        const md_block_t *b = &d->blocks[i];
        if (i)
            buf_putc(o, '\n');
        switch (b->kind) {
        case MD_PARA: buf_puts(o, "P"); break;
        case MD_HEADING: buf_printf(o, "H%d", b->level); break;
        case MD_BULLET: buf_printf(o, "B%d", b->level); break;
        case MD_ORDERED: buf_printf(o, "O%d#%ld", b->level, b->number); break;
        }
        buf_putc(o, ':');
        for (size_t r = b->run; r < b->run + b->nruns; r++) {
            const md_run_t *run = &d->runs[r];
            buf_puts(o, open[run->style]);
            for (size_t k = 0; k < run->len; k++) {
                char c = d->text[run->off + k];
                if (c == '\n')
                    buf_puts(o, "<br>");
                else
                    buf_putc(o, c);
            }
            buf_puts(o, close[run->style]);
        }
    }
}

static const struct {
    const char *in, *want;
} md_cases[] = {
    {"", ""},
    {"\n\n  \n", ""},
    {"plain text", "P:plain text"},
    {"one\ntwo\r\nthree\n\nnext", "P:one<br>two<br>three\nP:next"},
    {"hard  \nbreak\\\n  soft  \n", "P:hard<br>break<br>soft"},
    {"*across\nlines* and **x**\ny", "P:<i>across<br>lines</i> and <b>x</b><br>y"},
    {"# Title\n## Sub ##\n###### six\n####### seven", "H1:Title\nH2:Sub\nH6:six\nP:####### seven"},
    {"#hashtag\n#", "P:#hashtag\nH1:"},
    {"# C# notes", "H1:C# notes"},
    {"- a\n* b\n+ c\n\n-d", "B0:a\nB0:b\nB0:c\nP:-d"},
    {"1. one\n2) two\n10. ten\nlazy\n\n1.5 is a number",
     "O0#1:one\nO0#2:two\nO0#10:ten<br>lazy\nP:1.5 is a number"},
    {"- top\n  - nested\n    - deeper\n\t- tab", "B0:top\nB1:nested\nB2:deeper\nB1:tab"},
    {"1. item\n   continued here\n- next", "O0#1:item<br>continued here\nB0:next"},
    {"para\n- list starts", "P:para\nB0:list starts"},
    {"para\n# heading", "P:para\nH1:heading"},
    {"**bold** and *it* and ***both***", "P:<b>bold</b> and <i>it</i> and <bi>both</bi>"},
    {"a **b *c* d** e", "P:a <b>b </b><bi>c</bi><b> d</b> e"},
    {"2 * 3 * 4", "P:2 * 3 * 4"},
    {"**unclosed bold", "P:**unclosed bold"},
    {"*unclosed", "P:*unclosed"},
    {"\\*not italic\\*", "P:*not italic*"},
    {"back\\slash \\q", "P:back\\slash \\q"},
    {"- **bold** item", "B0:<b>bold</b> item"},
    {"# **Bold** heading", "H1:<b>Bold</b> heading"},
    {"Привет, *мир*\n\n中文 **粗体**", "P:Привет, <i>мир</i>\nP:中文 <b>粗体</b>"},
    {"ctl\x01x\x7fy\xC2\x85z\tw", "P:ctl\xEF\xBF\xBDx\xEF\xBF\xBDy\xEF\xBF\xBDz w"},
    {"trailing   \n", "P:trailing"},
    {"    - deep indent", "B2:deep indent"},
    {"- a\n\n- b", "B0:a\nB0:b"},
    {"123456789012. too long", "P:123456789012. too long"},
};

static void test_markdown(void)
{
    for (size_t i = 0; i < ARRAY_LEN(md_cases); i++) {
        md_doc_t d;
        md_parse(&d, md_cases[i].in, strlen(md_cases[i].in));
        buf_t o;
        buf_init(&o);
        dump(&o, &d);
        CHECK_MSG(strcmp(buf_cstr(&o), md_cases[i].want) == 0, "md %zu: %s\n  got  %s\n  want %s",
                  i, md_cases[i].in, buf_cstr(&o), md_cases[i].want);
        buf_free(&o);
        md_free(&d);
    }
    /* a long run of markers stays linear and balanced */
    buf_t big;
    buf_init(&big);
    for (int i = 0; i < 100000; i++)
        buf_puts(&big, "* ");
    md_doc_t d;
    md_parse(&d, big.data, big.len);
    CHECK_INT(d.nblocks, 1);
    buf_free(&big);
    md_free(&d);
}

static const struct {
    const char *name, *want;
} name_cases[] = {
    {"Tea guide", "attachment; filename=\"Tea guide.pdf\"; filename*=UTF-8''Tea%20guide.pdf"},
    {"a\"b\\c/d", "attachment; filename=\"a_b_c_d.pdf\"; filename*=UTF-8''a_b_c_d.pdf"},
    {"Отчёт", "attachment; filename=\"_____.pdf\"; "
              "filename*=UTF-8''%D0%9E%D1%82%D1%87%D1%91%D1%82.pdf"},
    {"日本", "attachment; filename=\"__.pdf\"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.pdf"},
    {"x\ty\r\nz\x7f", "attachment; filename=\"x_y__z_.pdf\"; filename*=UTF-8''x_y__z_.pdf"},
    {"\xC2\x85nel\xC2\xA0nbsp", "attachment; filename=\"_nel_nbsp.pdf\"; "
                                "filename*=UTF-8''_nel%C2%A0nbsp.pdf"},
    {"..a..", "attachment; filename=\"a.pdf\"; filename*=UTF-8''a.pdf"},
    {" . ", "attachment; filename=\"document.pdf\"; filename*=UTF-8''document.pdf"},
    {"50%;x=1 <a>|?*:", "attachment; filename=\"50_;x=1 _a_____.pdf\"; "
                       "filename*=UTF-8''50%25%3Bx%3D1%20_a_____.pdf"},
    {"it's (1) [2] {3} @,", "attachment; filename=\"it's (1) [2] {3} @,.pdf\"; "
                            "filename*=UTF-8''it%27s%20%281%29%20%5B2%5D%20%7B3%7D%20%40%2C.pdf"},
};

static void test_disposition(void)
{
    for (size_t i = 0; i < ARRAY_LEN(name_cases); i++) {
        buf_t o;
        buf_init(&o);
        export_disposition(&o, name_cases[i].name, EXPORT_PDF);
        CHECK_STR(buf_cstr(&o), name_cases[i].want);
        buf_free(&o);
    }
    /* long names are cut on a character boundary: 200 bytes of UTF-8, 100 of ASCII */
    buf_t name, o;
    buf_init(&name);
    buf_init(&o);
    for (int i = 0; i < 255; i++)
        buf_puts(&name, "\xCE\xA9"); /* Ω */
    export_disposition(&o, name.data, EXPORT_MD);
    const char *star = strstr(o.data, "UTF-8''");
    CHECK(star != NULL);
    CHECK_INT(strlen(star + 7), 100 * 6 + 3); /* 100 × "%CE%A9" + ".md" */
    const char *q1 = strchr(o.data, '"'), *q2 = strchr(q1 + 1, '"');
    CHECK_INT(q2 - q1 - 1, 100 + 3);
    buf_free(&name);
    buf_free(&o);
}

static void test_formats(void)
{
    export_format_t f;
    CHECK(export_format_parse("docx", &f) && f == EXPORT_DOCX);
    CHECK(!export_format_parse("DOCX", &f));
    CHECK(!export_format_parse("", &f));
    CHECK_STR(export_content_type(EXPORT_MD), "text/markdown; charset=utf-8");
    CHECK_STR(export_format_name(EXPORT_PDF), "pdf");

    buf_t o;
    buf_init(&o);
    CHECK_INT(export_render(EXPORT_MD, "N", NULL, "a\r\nb", 4, &o), 0);
    CHECK_STR(buf_cstr(&o), "# N\n\na\r\nb");
    buf_reset(&o);
    CHECK_INT(export_render(EXPORT_TXT, "N", NULL, "a\r\nb", 4, &o), 0);
    CHECK_STR(buf_cstr(&o), "a\r\nb");
    buf_reset(&o);
    const char *text = "# H\n\n1. a\n2. b\n   - c\n- d\n\n<p> & 'q' \"z\"\x01";
    CHECK_INT(export_render(EXPORT_HTML, "<T>", NULL, text, strlen(text), &o), 0);
    const char *body = strstr(o.data, "<article>");
    CHECK(strstr(o.data, "<title>&lt;T&gt;</title>") != NULL);
    CHECK(strncmp(o.data, "<!DOCTYPE html>\n<html lang=\"en\">\n", 31) == 0); /* the default */
    CHECK_STR(body, "<article>\n<h1>&lt;T&gt;</h1>\n<h2>H</h2>\n"
                    "<ol>\n<li>a</li>\n<li>b<ul>\n<li>c</li></ul>\n</li></ol>\n"
                    "<ul>\n<li>d</li></ul>\n"
                    "<p>&lt;p&gt; &amp; &#39;q&#39; &quot;z&quot;\xEF\xBF\xBD</p>\n"
                    "</article>\n</body>\n</html>\n");
    buf_reset(&o);
    text = "3. three\n4. four";
    CHECK_INT(export_render(EXPORT_HTML, "N", NULL, text, strlen(text), &o), 0);
    CHECK(strstr(o.data, "<ol start=\"3\">\n<li>three</li>\n<li>four</li></ol>") != NULL);
    /* a single line break inside a paragraph or an item stays a line break */
    buf_reset(&o);
    text = "Overview\nCreated for <you>\n\n- item\n  more";
    CHECK_INT(export_render(EXPORT_HTML, "N", NULL, text, strlen(text), &o), 0);
    CHECK(strstr(o.data, "<p>Overview<br>\nCreated for &lt;you&gt;</p>\n") != NULL);
    CHECK(strstr(o.data, "<li>item<br>\nmore</li>") != NULL);
    /* the document's language as <html lang>, escaped as any attribute */
    buf_reset(&o);
    CHECK_INT(export_render(EXPORT_HTML, "N", "zh-Hans", "x", 1, &o), 0);
    CHECK(strstr(o.data, "<html lang=\"zh-Hans\">") != NULL);
    buf_reset(&o);
    CHECK_INT(export_render(EXPORT_HTML, "N", "a\"<", "x", 1, &o), 0);
    CHECK(strstr(o.data, "<html lang=\"a&quot;&lt;\">") != NULL);
    buf_free(&o);
}

int main(void)
{
    test_markdown();
    test_disposition();
    test_formats();
    export_shutdown();
    TEST_DONE();
}
