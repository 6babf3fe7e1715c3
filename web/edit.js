// edit.js — a document's text edited in place (issue 35): the stored Markdown in a
// CodeMirror 6 editor with a live preview (web/vendor/editor.min.js, built from editor/,
// imported the first time it is needed, so the documents pages load without it). The
// editor's document is the stored text itself: opening and saving without a change
// sends the same bytes back.
// - Never lose a word: each pause in typing (and leaving the page) keeps the text as the
//   document's draft (API.md §24, PUT /documents/{id}/draft), which comes back on Edit
//   in any tab or browser; a stale draft (the document changed since) is shown beside
//   the new text, to take or drop. Ctrl/Cmd+S saves and stays, Ctrl/Cmd+Enter saves and
//   closes, Escape leaves (asking first when something would be lost).
// - Live counts: words as the server counts them (words.js), characters, reading time.
// - Rewrite any selection: selecting text shows a toolbar of the nine actions (§17) at
//   the selection; the selection is already an offset range of the stored Markdown
//   (turned into code points), whatever it crosses. The new text streams in where the
//   selection was, is marked, and one click on Undo restores the revision before (§16).
import {api, stream, TONES} from './api.js';
import {clearErrors, confirmDialog, field, fill, formAlert, h, nextId, select, setTitle, showErrors, timeEl, toast} from './ui.js';
import {setGuard} from './nav.js';
import {refreshMeter} from './account.js';
import {backLink} from './record.js';
import {textStats} from './words.js';
import {ACTIONS} from './actions.js';

let bundle = null;
// the editor's module, fetched once
export const loadEditor = () => (bundle ||= import('./vendor/editor.min.js').catch((e) => { bundle = null; throw e; }));

const DRAFT_PAUSE = 800; // ms without typing before the draft is kept
const PENDING = 'inkwell-unsaved-'; // sessionStorage: a draft the server refused with a 401

// box: the page's box; d: the record; show(record): back to the document view.
export function editScreen(box, d, show) {
  let view = null, ed = null, saving = false, draftTimer = 0, draftSent = null, alive = true, busy = false;
  let inflight = Promise.resolve(); // the draft being sent: a save or a drop waits for it
  let onServer = false; // a draft of this document is kept on the server
  const name = h('input', {type: 'text', name: 'name', value: d.name, maxlength: '255', required: true});
  const host = h('div', {class: 'editor-host', 'data-field': 'result'}, h('p', {class: 'muted small', text: 'Loading the editor…'}));
  const stats = h('p', {class: 'stats small', 'aria-live': 'off'});
  const draftState = h('span', {class: 'draft-state muted small', role: 'status'});
  const note = h('div', {class: 'draft-note', hidden: true});
  const beside = h('aside', {class: 'draft-beside panel', hidden: true, 'aria-label': 'Your draft'});
  const undoBar = h('div', {class: 'undo-bar', role: 'status', hidden: true});
  const save = h('button', {type: 'submit', class: 'btn primary', text: 'Save'});
  const tool = selectionToolbar();
  const textLabel = nextId('lbl');
  const form = h('form', {class: 'panel editing', novalidate: true},
    formAlert(), field('Name', name), note, undoBar,
    h('div', {class: 'editor-row'},
      h('div', {class: 'editor-col'},
        h('span', {class: 'label', id: textLabel, text: 'Text'}),
        host, tool.el,
        h('p', {class: 'hint', id: textLabel + '-err', text: 'Markdown, shown as you write it. Select text to rewrite it. Ctrl+B bold, Ctrl+I italic, Ctrl+S saves, Ctrl+Enter saves and closes, Escape leaves. Your text is kept as a draft as you type.'}),
        h('p', {class: 'err', id: 'result-err', hidden: true})),
      beside),
    h('div', {class: 'status-row'}, stats, draftState),
    h('div', {class: 'actions'}, save, h('button', {type: 'button', class: 'btn', text: 'Cancel', onclick: () => cancel()})));
  fill(box, backLink('documents'), h('h1', {text: `Edit “${d.name}”`, tabindex: '-1'}), form);
  setTitle(`Edit ${d.name}`);
  form.setAttribute('aria-labelledby', box.querySelector('h1').id = nextId('h'));
  name.focus();

  const text = () => (view ? view.state.doc.toString() : d.result || '');
  const dirty = () => name.value !== d.name || text() !== (d.result || '');
  const textDirty = () => text() !== (d.result || '');
  setGuard(() => saving ? 'Your changes are being saved. If you leave now, they may not be saved.'
    : dirty() ? 'Your changes to this document are not saved. Leave and lose them?' : '');

  // ---- the draft (§24)
  function draftLater() {
    clearTimeout(draftTimer);
    if (!textDirty() && !onServer) { draftState.textContent = ''; return; }
    draftState.textContent = 'Not saved yet';
    draftTimer = setTimeout(keepDraft, DRAFT_PAUSE);
  }
  function keepDraft(opts = {}) {
    inflight = inflight.then(() => sendDraft(opts));
    return inflight;
  }
  async function sendDraft(opts) {
    clearTimeout(draftTimer);
    const t = text();
    if (!view || busy || t === draftSent) return;
    try {
      if (t === (d.result || '')) {
        if (onServer) await api('DELETE', `/documents/${d.id}/draft`, opts).catch((e) => { if (e.status !== 404) throw e; });
        draftSent = null;
        onServer = false;
        if (alive) draftState.textContent = '';
        return;
      }
      const {data} = await api('PUT', `/documents/${d.id}/draft`, {body: {result: t, base_revision: String(d.revision)}, ...opts});
      draftSent = t;
      onServer = true;
      if (alive && t === text()) fill(draftState, 'Draft kept ', timeEl(data.updated_at));
    } catch (err) {
      // the session ended: the text waits in this tab's storage until the next sign-in
      // (sent as the draft when the document is edited again), never lost
      if (err.status === 401) { try { sessionStorage.setItem(PENDING + d.id, JSON.stringify({result: t, base_revision: d.revision})); } catch { /* full */ } }
      else if (alive) draftState.textContent = `The draft could not be kept: ${err.message}`;
    }
  }
  // leaving the page (closing the tab, another site, the phone putting it away)
  const flush = () => { if (view && textDirty() && text() !== draftSent) sendDraft({keepalive: true}); };
  const onHide = () => { if (document.visibilityState === 'hidden') flush(); };
  window.addEventListener('pagehide', flush);
  document.addEventListener('visibilitychange', onHide);

  function showDraft(dr) {
    const when = timeEl(dr.updated_at);
    if (!dr.stale) {
      ed.setText(view, dr.result, {history: false});
      draftSent = dr.result;
      fill(note, h('p', {}, 'Your draft of ', when, ' is back: it is not saved in the document yet. '),
        h('button', {type: 'button', class: 'btn small', text: 'Discard the draft', onclick: () => dropDraft(true)}));
      note.hidden = false;
      return;
    }
    // stale: the document changed since the draft was written; both are shown
    fill(beside, h('h2', {text: 'Your draft'}),
      h('p', {class: 'small'}, `Written on revision ${dr.base_revision}, `, when, `. The document is now at revision ${d.revision}: its text is in the editor.`),
      h('div', {class: 'doc-text draft-text', tabindex: '0', 'aria-label': 'Text of the draft', text: dr.result}),
      h('div', {class: 'actions'},
        h('button', {type: 'button', class: 'btn', text: 'Use the draft', onclick: () => { ed.setText(view, dr.result); beside.hidden = true; view.focus(); }}),
        h('button', {type: 'button', class: 'btn', text: 'Discard the draft', onclick: () => dropDraft(false)})));
    beside.hidden = false;
    form.classList.add('with-draft');
  }
  async function dropDraft(reset) {
    clearTimeout(draftTimer);
    await inflight;
    try { await api('DELETE', `/documents/${d.id}/draft`); } catch (err) { if (err.status !== 404) return toast(err.message); }
    draftSent = null;
    onServer = false;
    if (reset) ed.setText(view, d.result || '', {history: false});
    note.hidden = true; beside.hidden = true; form.classList.remove('with-draft');
    draftState.textContent = '';
    toast('The draft was discarded.');
  }

  // ---- saving
  async function saveNow(close) {
    if (saving || busy) return;
    clearErrors(form);
    clearTimeout(draftTimer);
    save.disabled = true;
    saving = true;
    try {
      await inflight;
      const {data} = await api('PATCH', `/documents/${d.id}`, {body: {name: name.value, result: text()}});
      saving = false;
      draftSent = null;
      onServer = false; // a saved text drops the draft (§24)
      d = data;
      note.hidden = true;
      toast('Saved.');
      if (close) return leave();
      draftState.textContent = `Saved: revision ${d.revision}`;
    } catch (err) {
      if (err.status !== 401) showErrors(form, err);
    } finally { save.disabled = false; saving = false; }
  }
  function leave() {
    cleanup();
    show(d);
    box.querySelector('h1')?.focus();
  }
  async function cancel() {
    if (saving || busy) return;
    if (dirty() && !await confirmDialog('Discard your changes?', 'What you changed in this document will be lost (its draft too).', 'Discard')) return;
    clearTimeout(draftTimer);
    if (onServer) inflight.then(() => api('DELETE', `/documents/${d.id}/draft`)).catch(() => {});
    onServer = false;
    draftSent = null;
    leave();
  }
  form.addEventListener('submit', (e) => { e.preventDefault(); saveNow(true); });
  form.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !e.defaultPrevented) { e.preventDefault(); tool.hide() || cancel(); }
    else if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 's' && !e.defaultPrevented) { e.preventDefault(); saveNow(false); }
  });

  // ---- the editor
  loadEditor().then(async (mod) => {
    if (!alive || !box.contains(host)) return;
    ed = mod;
    host.replaceChildren();
    view = ed.createEditor({parent: host, doc: d.result || '', label: 'Text',
      keys: [{key: 'Mod-Enter', run: () => { saveNow(true); return true; }}, // Mod-s: the form's keydown
        {key: 'Mod-b', run: (v) => wrap(v, '**')}, {key: 'Mod-i', run: (v) => wrap(v, '*')}],
      onChange: () => { stats.textContent = textStats(text()); tool.hide(); if (!busy) draftLater(); },
      onSelection: (v) => tool.track(v)});
    view.contentDOM.setAttribute('aria-describedby', textLabel + '-err');
    host.editorView = view;
    stats.textContent = textStats(text());
    // a text kept in this tab when the session ended becomes the draft now
    const pending = sessionStorage.getItem(PENDING + d.id);
    if (pending) {
      try {
        const p = JSON.parse(pending);
        await api('PUT', `/documents/${d.id}/draft`, {body: {result: p.result, base_revision: String(p.base_revision)}});
        sessionStorage.removeItem(PENDING + d.id);
        d.has_draft = true;
      } catch (err) { if (err.status !== 401) sessionStorage.removeItem(PENDING + d.id); }
    }
    if (d.has_draft !== false) {
      try {
        const {data} = await api('GET', `/documents/${d.id}/draft`);
        onServer = true;
        if (alive && !textDirty()) showDraft(data);
      } catch (err) { if (err.status !== 404 && err.status !== 401) toast(err.message); }
    }
    host.dataset.ready = 'true';
  }).catch(() => fill(host, h('p', {class: 'alert', role: 'alert', text: 'The editor could not be loaded: reload the page to try again.'})));

  // Ctrl+B, Ctrl+I: the selection between Markdown's marks, or out of them again
  function wrap(v, mark) {
    const {from, to} = v.state.selection.main, n = mark.length, doc = v.state.doc;
    const around = from >= n && doc.sliceString(from - n, from) === mark && doc.sliceString(to, to + n) === mark
      && (n === 2 || doc.sliceString(from - 2, from) !== '**' || doc.sliceString(from - 3, from) === '***');
    if (around) v.dispatch({changes: [{from: from - n, to: from}, {from: to, to: to + n}], selection: {anchor: from - n, head: to - n}});
    else v.dispatch({changes: [{from, insert: mark}, {from: to, insert: mark}], selection: {anchor: from + n, head: to + n}});
    return true;
  }

  // ---- rewriting the selection (§17 on code-point offsets of the stored text)
  function selectionToolbar() {
    const el = h('div', {class: 'seltool', role: 'toolbar', 'aria-label': 'Rewrite the selected text', hidden: true});
    const tone = select('tone', TONES, d.tone || 'neutral', {'aria-label': 'Tone'});
    const lang = h('input', {type: 'text', name: 'language', maxlength: '35', autocomplete: 'off', spellcheck: 'false', placeholder: 'de, fr…', 'aria-label': 'Language to translate into'});
    const extra = h('div', {class: 'seltool-extra', hidden: true});
    const status = h('span', {class: 'seltool-status small', hidden: true});
    let range = null;
    const btn = (act, label) => h('button', {type: 'button', class: 'btn small', 'data-action': act, text: label,
      onmousedown: (e) => e.preventDefault(), // keeps the selection in the editor
      onclick: () => {
        if (act === 'change_tone') return more(act, tone, 'Change the tone');
        if (act === 'translate') return more(act, lang, 'Translate');
        run({action: act});
      }});
    function more(act, control, label) {
      fill(extra, control, h('button', {type: 'button', class: 'btn small primary', text: label, onmousedown: (e) => e.preventDefault(),
        onclick: () => run(act === 'change_tone' ? {action: act, tone: tone.value} : {action: act, language: lang.value.trim()})}));
      extra.hidden = false;
      control.focus();
      place();
    }
    fill(el, h('span', {class: 'seltool-title small', text: 'Rewrite'}),
      ACTIONS.map(([a, l]) => btn(a, a === 'change_tone' ? 'Tone…' : a === 'translate' ? 'Translate…' : l)), extra, status);
    el.addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); hide(); view?.focus(); } });

    function place() {
      if (!range || !view || el.hidden) return;
      // where the selection's moving end (the finger, the mouse) is, inside the viewport
      const c = view.coordsAtPos(range.head) || view.coordsAtPos(range.to);
      if (!c) return;
      const w = el.offsetWidth, ht = el.offsetHeight, vw = document.documentElement.clientWidth, vh = window.innerHeight;
      let top = c.bottom + 8;
      if (top + ht > vh - 8) top = c.top - ht - 8;
      top = Math.max(8, Math.min(top, vh - ht - 8));
      el.style.top = `${Math.round(top)}px`;
      el.style.left = `${Math.round(Math.max(8, Math.min(c.left - w / 2, vw - w - 8)))}px`;
    }
    function hide() {
      if (el.hidden || busy) return false;
      el.hidden = true; extra.hidden = true; range = null;
      return true;
    }
    function track(v) {
      if (busy) return;
      const s = v.state.selection.main;
      if (s.empty || !v.hasFocus && !el.contains(document.activeElement)) { if (s.empty) hide(); return; }
      range = {from: s.from, to: s.to, head: s.head};
      if (el.hidden) { el.hidden = false; extra.hidden = true; status.hidden = true; }
      place();
    }
    window.addEventListener('scroll', place, {passive: true});
    window.addEventListener('resize', place);
    const off = () => { window.removeEventListener('scroll', place); window.removeEventListener('resize', place); };

    async function run(body) {
      if (!range || busy || saving) return;
      const {from, to} = range;
      busy = true;
      for (const b of el.querySelectorAll('button')) b.disabled = true;
      status.hidden = false;
      status.textContent = 'Rewriting…';
      clearTimeout(draftTimer);
      view.setEditable(false);
      const before = text();
      try {
        await inflight;
        // the action runs on the stored text: unsaved changes are saved first
        if (before !== (d.result || '')) {
          const {data} = await api('PATCH', `/documents/${d.id}`, {body: {result: before}});
          d = data;
          draftSent = null;
          onServer = false;
        }
        const prev = d.revision;
        body.selection_start = String(ed.cpOffset(before, from));
        body.selection_end = String(ed.cpOffset(before, to));
        let at = body.action === 'continue' ? to : from, first = true;
        const final = await stream('POST', `/documents/${d.id}/actions`, {body,
          delta: (piece) => {
            at = first && body.action !== 'continue' ? ed.insertAt(view, at, piece, to) : ed.insertAt(view, at, piece);
            first = false;
          }});
        // the final text, with the part that changed (against the text before) marked
        ed.setText(view, before, {history: false});
        const changed = ed.setText(view, final.result || '', {history: false, mark: true});
        d = final;
        refreshMeter();
        const label = ACTIONS.find(([a]) => a === body.action)?.[1] || 'Rewritten';
        if (final.revision === prev) {
          fill(undoBar, h('span', {text: `${label}: the text came back unchanged, so no revision was made.`}));
        } else {
          const undo = h('button', {type: 'button', class: 'btn small', text: 'Undo', onclick: () => undoTo(prev, undo)});
          fill(undoBar, h('span', {text: `${label}: the selected part was rewritten (revision ${final.revision}). `}), undo);
        }
        undoBar.hidden = false;
        el.hidden = true; range = null;
        view.dispatch({selection: {anchor: changed[1]}, scrollIntoView: true});
      } catch (err) {
        if (err.status === 401) return;
        ed.setText(view, before, {history: false});
        toast(err.message);
      } finally {
        busy = false;
        if (view) view.setEditable(true);
        for (const b of el.querySelectorAll('button')) b.disabled = false;
        status.hidden = true;
        stats.textContent = textStats(text());
      }
    }
    async function undoTo(prev, button) {
      button.disabled = true;
      try {
        const {data} = await api('POST', `/documents/${d.id}/revisions/${prev}/restore`);
        d = data;
        ed.setText(view, data.result || '', {history: false});
        fill(undoBar, h('span', {text: `Undone: revision ${prev} is back (as revision ${data.revision}).`}));
        stats.textContent = textStats(text());
        view.focus();
      } catch (err) {
        button.disabled = false;
        if (err.status !== 401) toast(err.message);
      }
    }
    return {el, track, hide, place, off};
  }

  function cleanup() {
    if (!alive) return;
    alive = false;
    clearTimeout(draftTimer);
    window.removeEventListener('pagehide', flush);
    document.removeEventListener('visibilitychange', onHide);
    tool.off();
    view?.destroy();
  }
  // another page: what was typed is kept as the draft first
  return {unmount() { if (alive) flush(); cleanup(); }};
}
