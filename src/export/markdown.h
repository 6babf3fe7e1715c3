/* markdown.h — the small Markdown subset every structured export format reads.
 *
 * md_parse() turns a document's text into blocks (paragraphs, headings, bullet and
 * numbered list items) made of inline runs (plain, bold, italic). It is the only code
 * that reads Markdown: the HTML, DOCX and PDF writers walk the blocks and never look
 * at the source text. Recognised:
 *   - "# ".."###### " headings (a closing run of '#' is dropped);
 *   - "- ", "* ", "+ " bullets and "1. " / "1) " numbered items, indented by two
 *     spaces (or a tab) per nesting level; a following non-blank line that starts no
 *     block continues the item;
 *   - paragraphs: runs of non-blank lines, joined with a space;
 *   - **bold** and *italic* (***both***); a marker without a partner, or a '*'
 *     opening before a space, is literal text; a backslash before punctuation makes
 *     that character literal.
 * Control characters other than tab and those line breaks become U+FFFD (XML cannot carry them); tabs become
 * spaces. Memory is one copy of the text plus one small record per block and run. */
#ifndef INK_EXPORT_MARKDOWN_H
#define INK_EXPORT_MARKDOWN_H

#include <stddef.h>
#include <stdint.h>

typedef enum { MD_PARA, MD_HEADING, MD_BULLET, MD_ORDERED } md_kind_t;

enum { MD_BOLD = 1, MD_ITALIC = 2 };

#define MD_MAX_DEPTH 8 /* list nesting levels 0..MD_MAX_DEPTH-1 */

typedef struct {
    uint32_t off, len; /* bytes in md_doc_t.text */
    uint8_t style;     /* MD_BOLD | MD_ITALIC */
} md_run_t;

typedef struct {
    md_kind_t kind;
    int level;   /* headings: 1..6; list items: nesting depth from 0; paragraphs: 0 */
    long number; /* MD_ORDERED: the number written in the text */
    size_t run, nruns; /* its runs: md_doc_t.runs[run .. run+nruns) */
} md_block_t;

typedef struct {
    char *text; /* the blocks' text, markers removed, each run contiguous */
    size_t text_len;
    md_block_t *blocks;
    size_t nblocks;
    md_run_t *runs;
    size_t nruns;
    size_t cap_text, cap_blocks, cap_runs;
} md_doc_t;

/* Parses len bytes of UTF-8 text into d (which md_free releases). Never fails. */
void md_parse(md_doc_t *d, const char *src, size_t len);
void md_free(md_doc_t *d);

/* The text of a block's runs joined, into a caller's buffer: not needed by writers
 * that walk runs; used by tests. Returns the bytes written (NUL-terminated). */
size_t md_block_text(const md_doc_t *d, const md_block_t *b, char *out, size_t outlen);

#endif
