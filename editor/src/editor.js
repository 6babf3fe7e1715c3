// The web app's in-place editor: CodeMirror 6 on the stored Markdown with a live preview
// (headings large, emphasis and strong shown as such, links underlined, all by styling
// the source: no conversion). Markdown's inline marks — "#" of a heading, "*"/"_" of
// emphasis, "~~", "`" of inline code, a link's brackets and address — are hidden except
// on the lines the cursor or the selection is on (where they are shown, dimmed, to be
// edited), and everywhere while the editor has no focus: the text reads as it will look.
// List bullets, quote marks and code fences stay (dimmed). Hiding is a decoration only:
// the document is never changed by it. The document *is* the stored text:
// lines are split on "\n" only, so a "\r" stays a character and opening then saving
// without a change gives back the same bytes (tests/web/editor.test.mjs checks it).
import {EditorState, Compartment, StateEffect, StateField, Transaction} from '@codemirror/state';
import {Decoration, EditorView, ViewPlugin, keymap, drawSelection, highlightSpecialChars, placeholder} from '@codemirror/view';
import {defaultKeymap, history, historyKeymap, undo, redo} from '@codemirror/commands';
import {HighlightStyle, Language, defineLanguageFacet, syntaxHighlighting, syntaxTree} from '@codemirror/language';
import {parser, GFM} from '@lezer/markdown';
import {tags as t} from '@lezer/highlight';

// Markdown (CommonMark and GFM) from @lezer/markdown, whose parser carries its own
// highlighting tags (the lang-markdown package would bring HTML, CSS and JS parsers too).
const mdLanguage = new Language(defineLanguageFacet({}), parser.configure(GFM), [], 'markdown');

const preview = HighlightStyle.define([
  {tag: t.heading1, class: 'md-h md-h1'},
  {tag: t.heading2, class: 'md-h md-h2'},
  {tag: t.heading3, class: 'md-h md-h3'},
  {tag: [t.heading4, t.heading5, t.heading6], class: 'md-h md-h4'},
  {tag: t.emphasis, class: 'md-em'},
  {tag: t.strong, class: 'md-strong'},
  {tag: t.strikethrough, class: 'md-del'},
  {tag: t.link, class: 'md-link'},
  {tag: t.url, class: 'md-url'},
  {tag: t.monospace, class: 'md-code'},
  {tag: t.quote, class: 'md-quote'},
  {tag: [t.processingInstruction, t.contentSeparator], class: 'md-mark'}, // list marks are processingInstruction: a list's text is not dimmed
]);

// The live preview's hidden marks: inline marks (and a link's address) of the visible
// lines the selection is not on.
const HIDE = {HeaderMark: /^ATXHeading/, EmphasisMark: /^(Emphasis|StrongEmphasis)$/, StrikethroughMark: /^Strikethrough$/,
  CodeMark: /^InlineCode$/, LinkMark: /^Link$/, URL: /^Link$/, LinkTitle: /^Link$/};
const hide = Decoration.replace({});
function hiddenMarks(view) {
  const {state} = view, doc = state.doc, out = [];
  const active = new Set();
  if (view.hasFocus) {
    for (const r of state.selection.ranges) {
      for (let n = doc.lineAt(r.from).number, end = doc.lineAt(r.to).number; n <= end; n++) active.add(n);
    }
  }
  const tree = syntaxTree(state);
  for (const {from, to} of view.visibleRanges) {
    tree.iterate({from, to, enter(node) {
      const parent = HIDE[node.name];
      if (!parent || !parent.test(node.node.parent?.name || '')) return;
      let a = node.from, b = node.to;
      if (active.has(doc.lineAt(a).number) || active.has(doc.lineAt(b).number)) return;
      // "# " at a heading's start: its space too; " ##" closing one: the space before it
      if (node.name === 'HeaderMark') {
        if (a === doc.lineAt(a).from) { if (doc.sliceString(b, b + 1) === ' ') b++; }
        else if (doc.sliceString(a - 1, a) === ' ') a--;
      }
      if (b > a) out.push(hide.range(a, b));
    }});
  }
  return Decoration.set(out, true);
}
const livePreview = ViewPlugin.fromClass(class {
  constructor(view) { this.decorations = hiddenMarks(view); }
  update(u) {
    if (u.docChanged || u.selectionSet || u.viewportChanged || u.focusChanged || syntaxTree(u.startState) !== syntaxTree(u.state)) {
      this.decorations = hiddenMarks(u.view);
    }
  }
}, {decorations: (v) => v.decorations});

// A code-point offset of a UTF-16 index of s, and back.
export function cpOffset(s, i) { let n = 0; for (let k = 0; k < i; k++) { const c = s.charCodeAt(k); if (c < 0xd800 || c > 0xdbff || k + 1 >= i) n++; else { n++; k++; } } return n; }
export function utf16Index(s, cp) { let k = 0; for (let n = 0; n < cp && k < s.length; n++) { const c = s.charCodeAt(k); k += c >= 0xd800 && c <= 0xdbff && k + 1 < s.length ? 2 : 1; } return k; }

// The part an action rewrote, marked until the next edit.
const markEffect = StateEffect.define();
const rewritten = StateField.define({
  create: () => Decoration.none,
  update(marks, tr) {
    for (const e of tr.effects) if (e.is(markEffect)) return e.value;
    return tr.docChanged ? Decoration.none : marks;
  },
  provide: (f) => EditorView.decorations.from(f),
});
const markDeco = Decoration.mark({class: 'cm-rewritten'});

// opts: parent, doc, label (the accessible name), onChange(text), onSelection(view),
// keys: [{key, run}] (Mod-s, Mod-Enter…), placeholder.
export function createEditor(opts) {
  const editable = new Compartment();
  const state = EditorState.create({
    doc: opts.doc || '',
    extensions: [
      EditorState.lineSeparator.of('\n'),
      rewritten,
      history(),
      drawSelection(),
      highlightSpecialChars(),
      EditorView.lineWrapping,
      mdLanguage.extension,
      syntaxHighlighting(preview),
      livePreview,
      keymap.of([...(opts.keys || []), ...defaultKeymap, ...historyKeymap]),
      editable.of(EditorView.editable.of(true)),
      EditorView.contentAttributes.of({'aria-label': opts.label || 'Text', 'aria-multiline': 'true', spellcheck: 'true'}),
      opts.placeholder ? placeholder(opts.placeholder) : [],
      EditorView.updateListener.of((u) => {
        if (u.docChanged && opts.onChange) opts.onChange(u.state.doc.toString());
        if ((u.selectionSet || u.docChanged || u.focusChanged) && opts.onSelection) opts.onSelection(u.view);
      }),
    ],
  });
  const view = new EditorView({state, parent: opts.parent});
  view.setEditable = (on) => view.dispatch({effects: editable.reconfigure(EditorView.editable.of(on))});
  return view;
}

// Replace the whole text by text, changing only what differs (the common start and end
// stay), as one undoable change (history: false for the server's text: a rewrite, a
// restore). mark: the changed part is marked. Returns the changed range [from, to].
export function setText(view, text, {history = true, mark = false} = {}) {
  const old = view.state.doc.toString();
  let a = 0;
  while (a < old.length && a < text.length && old.charCodeAt(a) === text.charCodeAt(a)) a++;
  let b = 0;
  while (b < old.length - a && b < text.length - a && old.charCodeAt(old.length - 1 - b) === text.charCodeAt(text.length - 1 - b)) b++;
  const to = text.length - b;
  const spec = {annotations: history ? [] : [Transaction.addToHistory.of(false)]};
  if (old !== text) spec.changes = {from: a, to: old.length - b, insert: text.slice(a, to)};
  if (mark) spec.effects = markEffect.of(to > a ? Decoration.set([markDeco.range(a, to)]) : Decoration.none);
  view.dispatch(spec);
  return [a, to];
}

// Insert text at pos without an undo step (the text of a rewrite as it streams).
export function insertAt(view, pos, text, removeTo = pos) {
  view.dispatch({changes: {from: pos, to: removeTo, insert: text}, annotations: Transaction.addToHistory.of(false)});
  return pos + text.length;
}

export {EditorView, undo, redo};
