// actions.js — a completed document's "Actions" (§17): improve, shorten, expand, continue,
// rephrase, simplify, fix grammar, change tone (asks the tone), translate (asks the
// language), on the whole text or on the text selected in the rendered document: the
// selection is mapped back to the Markdown through the blocks' source positions
// (mapSelection); when that fails, a selected string that occurs exactly once in
// `result` is used, and otherwise the action runs on the whole text and the form says so.
import {TONES} from './api.js';
import {clearErrors, field, fill, formAlert, h, nextId, select, showErrors} from './ui.js';

export const ACTIONS = [['improve', 'Improve'], ['shorten', 'Shorten'], ['expand', 'Expand'], ['continue', 'Continue'],
  ['rephrase', 'Rephrase'], ['simplify', 'Simplify'], ['fix_grammar', 'Fix grammar'], ['change_tone', 'Change tone'],
  ['translate', 'Translate']];

// Where str is in result: {str, count} (count 0, 1 or 2 for "more than once"), and for a
// single occurrence its code-point offsets start/end and its UTF-16 index i.
export function locate(result, str) {
  str = (str || '').trim();
  if (!str) return null;
  const i = result.indexOf(str);
  if (i < 0 || result.indexOf(str, i + 1) >= 0) return {str, count: i < 0 ? 0 : 2};
  const start = [...result.slice(0, i)].length;
  return {str, count: 1, i, start, end: start + [...str].length};
}

// Where a selection of the rendered text (documents.js renders each block with
// renderMarkdownMapped: data-src="start,end" of its Markdown) is in result: the same
// shape as locate() with count 1, whatever the selection crosses (marks, blocks) and
// however often its words occur. Inside a block, the rendered characters are matched in
// order against the block's Markdown (marks, link targets and entities skipped; white
// space matched only against white space). The letters and digits of the range found
// must be those of the selection, else locate() decides (nothing runs on a wrong part).
export function mapSelection(result, root, range) {
  const str = range.toString();
  const point = (node, offset, isEnd) => {
    if (node === root) {
      const kid = root.childNodes[offset];
      const b = kid?.nodeType === 1 && kid.dataset.src;
      return b ? Number(b.split(',')[0]) : offset >= root.childNodes.length ? result.length : null;
    }
    const block = (node.nodeType === 1 ? node : node.parentElement)?.closest('[data-src]');
    if (!block || !root.contains(block)) return null;
    const [a, b] = block.dataset.src.split(',').map(Number);
    const r = document.createRange();
    r.setStart(block, 0);
    r.setEnd(node, offset);
    const shown = block.textContent, n = r.toString().length, src = result.slice(a, b);
    let i = 0;
    // start: where the first selected character is (marks before it skipped); end: just
    // after the last one (marks after it left out)
    for (let k = 0; k < (isEnd ? n : n + 1) && k < shown.length; k++) {
      const c = shown[k], space = /\s/.test(c);
      if (space) { if (i < src.length && /\s/.test(src[i]) && k < n) i++; continue; }
      while (i < src.length && src[i] !== c) i++;
      if (k < n) i++;
    }
    return a + Math.min(i, src.length);
  };
  let start = point(range.startContainer, range.startOffset, false), end = point(range.endContainer, range.endOffset, true);
  if (start === null || end === null || end <= start) return locate(result, str);
  while (start < end && /\s/.test(result[start])) start++;
  while (end > start && /\s/.test(result[end - 1])) end--;
  // the check: the selection's letters and digits, in order, within the part's (which may
  // hold more: a link's target, an entity's name), starting and ending with the same
  const letters = (x) => [...x.replace(/[^\p{L}\p{N}]/gu, '')];
  const part = result.slice(start, end), S = letters(str), L = letters(part);
  let j = 0;
  for (const c of L) if (j < S.length && c === S[j]) j++;
  if (!S.length || j < S.length || L[0] !== S[0] || L.at(-1) !== S.at(-1)) return locate(result, str);
  const cp = [...result.slice(0, start)].length;
  return {str: part, count: 1, i: start, start: cp, end: cp + [...part].length};
}

const quote = (s) => `“${s.length > 60 ? s.slice(0, 57) + '…' : s}”`;

// The form, in slot. d: the record; text: the rendered text (the selection is read from
// it); run(body, form, submit, sel): starts the action (documents.js streams it).
export function actionsForm(d, slot, button, text, run) {
  if (!slot.hidden) return slot.close();
  let sel = null;
  const close = slot.close = () => { document.removeEventListener('selectionchange', track); slot.hidden = true; button.setAttribute('aria-expanded', 'false'); button.focus(); };
  const action = select('action', ACTIONS, 'improve');
  const tone = field('Tone', select('tone', TONES, d.tone || 'neutral'));
  const language = field('Language', h('input', {type: 'text', name: 'language', value: '', maxlength: '35', autocomplete: 'off', spellcheck: 'false', placeholder: 'de, fr, pt-BR…'}), {hint: 'The language to translate into, a tag: de, fr, pt-BR…'});
  const scope = h('fieldset', {class: 'scope'}, h('legend', {text: 'Apply to'}));
  const submit = h('button', {type: 'submit', class: 'btn primary', text: 'Run'});
  const titleId = nextId('h');
  const form = h('form', {class: 'panel', novalidate: true, 'aria-labelledby': titleId},
    h('h2', {id: titleId, text: 'Rewrite with an action'}),
    h('p', {class: 'muted small', text: 'Select a passage of the text first to rewrite only that part. The current text is kept as a revision: you can restore it.'}),
    formAlert(), h('div', {class: 'options'}, field('Action', action), tone, language), scope,
    h('div', {class: 'actions'}, submit, h('button', {type: 'button', class: 'btn', text: 'Cancel', onclick: close})));
  const kind = () => { tone.hidden = action.value !== 'change_tone'; language.hidden = action.value !== 'translate'; };
  action.addEventListener('change', kind);
  kind();

  // the selection: read when the form opens and whenever it changes inside the text
  function showScope() {
    const one = sel && sel.count === 1;
    const radio = (value, label, checked, disabled) => h('label', {},
      h('input', {type: 'radio', name: 'scope', value, checked, disabled}), label);
    fill(scope, h('legend', {text: 'Apply to'}),
      one ? radio('selection', `The selected text: ${quote(sel.str)}`, true, false) : null,
      radio('all', 'The whole text', !one, false),
      sel && !one ? h('p', {class: 'hint', role: 'status', text: `The selected text ${quote(sel.str)} ${sel.count ? 'occurs more than once' : 'is not found as such'} in the document's Markdown, so the action runs on the whole text.`})
        : !sel ? h('p', {class: 'hint', text: 'No text is selected: the action runs on the whole text.'}) : null);
  }
  function track() {
    if (!form.isConnected) return document.removeEventListener('selectionchange', track);
    const s = document.getSelection();
    if (!s || !s.rangeCount || !text.contains(s.anchorNode)) return;
    if (s.isCollapsed) { if (sel) { sel = null; showScope(); } return; }
    if (!text.contains(s.focusNode)) return;
    sel = mapSelection(d.result || '', text, s.getRangeAt(0));
    showScope();
  }
  const s = document.getSelection();
  if (s && !s.isCollapsed && text.contains(s.anchorNode) && text.contains(s.focusNode)) sel = mapSelection(d.result || '', text, s.getRangeAt(0));
  showScope();
  document.addEventListener('selectionchange', track);

  form.addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.preventDefault(); close(); } });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const body = {action: action.value};
    if (action.value === 'change_tone') body.tone = tone.querySelector('select').value;
    if (action.value === 'translate') body.language = language.querySelector('input').value.trim();
    const part = sel && sel.count === 1 && form.querySelector('input[name=scope]:checked')?.value === 'selection' ? sel : null;
    if (part) Object.assign(body, {selection_start: String(part.start), selection_end: String(part.end)});
    document.removeEventListener('selectionchange', track);
    submit.disabled = true;
    run(body, part, (err) => { submit.disabled = false; document.addEventListener('selectionchange', track); showErrors(form, err); });
  });
  fill(slot, form);
  slot.hidden = false;
  button.setAttribute('aria-expanded', 'true');
  action.focus({preventScroll: true});
}
