// actions.js — a completed document's "Actions" (§17): improve, shorten, expand, continue,
// rephrase, simplify, fix grammar, change tone (asks the tone), translate (asks the
// language), on the whole text or on the text selected in the rendered document. The
// rendered Markdown cannot be mapped back to the source in general, so a selection is
// used only when the selected string occurs exactly once in `result`; otherwise the
// action runs on the whole text and the form says so.
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
    sel = locate(d.result || '', s.toString());
    showScope();
  }
  const s = document.getSelection();
  if (s && !s.isCollapsed && text.contains(s.anchorNode) && text.contains(s.focusNode)) sel = locate(d.result || '', s.toString());
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
