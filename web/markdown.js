// markdown.js — a document's text (Markdown, API.md §17) as elements: marked (vendored,
// web/vendor/) turns it into HTML in which any raw HTML of the text is escaped, shown as
// the characters it is; DOMPurify then keeps only the elements and attributes of
// Markdown (no script, style, image, form, event attribute or javascript: link) and
// hands back a DOM fragment, so the app itself never parses HTML. Headings move down
// (the page's own h1 is the document's name): the text's highest is an h2.
import {Marked} from './vendor/marked.esm.js';
import DOMPurify from './vendor/purify.es.mjs';

const esc = (s) => s.replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]);

const md = new Marked({
  gfm: true, breaks: true, async: false,
  renderer: {
    html(t) { return esc(t.text); },
    // pictures are not shown (img-src 'self': another host's would be refused); their
    // text and address are
    image(t) { return esc(`[${t.text}](${t.href})`); },
  },
});

const TAGS = ['p', 'br', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'em', 'strong', 'del', 'code', 'pre',
  'blockquote', 'hr', 'a', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'input'];
const ATTRS = ['href', 'title', 'start', 'type', 'checked', 'disabled'];

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') { node.setAttribute('rel', 'noopener noreferrer nofollow'); node.setAttribute('target', '_blank'); }
  // task-list boxes only: any other input is removed
  if (node.tagName === 'INPUT' && node.getAttribute('type') !== 'checkbox') node.remove();
  else if (node.tagName === 'INPUT') { node.setAttribute('disabled', ''); node.setAttribute('aria-label', 'Done'); }
});

const sanitize = (html) => DOMPurify.sanitize(html, {ALLOWED_TAGS: TAGS, ALLOWED_ATTR: ATTRS,
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#|\/)/i, RETURN_DOM_FRAGMENT: true});

// Headings move down so that the text's highest one is an h2 (under the page's h1): "#"
// is h2, and a text whose headings start at "##" has them as h2 too, not h3 — a level is
// never skipped after the page's h1 (axe-core's heading-order).
function shiftHeadings(tokens) {
  let top = 7;
  md.walkTokens(tokens, (t) => { if (t.type === 'heading') top = Math.min(top, t.depth); });
  if (top < 7) md.walkTokens(tokens, (t) => { if (t.type === 'heading') t.depth = Math.min(6, t.depth - top + 2); });
  return tokens;
}

// The Markdown text as a DocumentFragment of safe elements.
export function renderMarkdown(text) {
  return sanitize(md.parser(shiftHeadings(md.lexer(text || ''))));
}

// The same, each top-level block rendered apart and marked with where its source is in
// the text (data-src="start,end", UTF-16 indexes): actions.js maps a selection of the
// rendered text back to the Markdown with it. A text the lexer does not give back whole
// (it turns "\r\n" into "\n") is rendered without the marks.
export function renderMarkdownMapped(text) {
  text = text || '';
  const tokens = md.lexer(text);
  if (tokens.map((t) => t.raw).join('') !== text) return renderMarkdown(text);
  shiftHeadings(tokens);
  const out = document.createDocumentFragment();
  let at = 0;
  for (const t of tokens) {
    const one = Object.assign([t], {links: tokens.links});
    const frag = sanitize(md.parser(one));
    for (const el of frag.children) el.dataset.src = `${at},${at + t.raw.length}`;
    at += t.raw.length;
    out.append(frag);
  }
  return out;
}
