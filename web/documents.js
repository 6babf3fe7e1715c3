// documents.js — the document pages: the list, one document (watch it being written,
// regenerate or try again with the new text streaming in, its revisions, edit, favourite,
// copy, download, delete) and "write a new document" (with tone, language and length)
// with the text appearing as it streams.
import {api, ApiError, apiFile, CREATIVITY, EXPORT_FORMATS, LENGTHS, stream, templates, TONES} from './api.js';
import {add, clearErrors, field, fill, formAlert, h, nextId, select, setTitle, showErrors, starButton,
  stateBadge, timeEl, toast} from './ui.js';
import {revisionsPanel} from './revisions.js';
import {actionsForm} from './actions.js';
import {refreshMeter} from './account.js';
import {FAVS, listView} from './list.js';
import {navigate, setGuard} from './nav.js';
import {renderMarkdown, renderMarkdownMapped} from './markdown.js';
import {backLink, focusHeading, recordPage, removeRecord} from './record.js';
import {editScreen, loadEditor} from './edit.js';
import {countWords} from './words.js';
import {tagChips, tagFilter, tagsEditor} from './tags.js';
import {languageInput, templatePicker} from './pickers.js';

const favorite = (id, fav) => api('PATCH', `/documents/${id}`, {body: {favorite: fav ? '1' : '0'}});
// the start of a text for the list, without Markdown's marks (headings, bullets, emphasis)
const excerpt = (s) => (s || '').slice(0, 400).replace(/^\s{0,3}(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s?)/gm, '')
  .replace(/(\*\*|__|\*|`)/g, '').replace(/\s+/g, ' ').trim().slice(0, 240);

export function docList(root, route) {
  const tplOptions = [['', 'All templates']];
  const view = listView(root, route, {
    path: '/documents', title: 'Documents', noun: 'documents', newLabel: '+ New document', bulk: 'documents',
    filters: [
      {name: 'search', label: 'Search', class: 'grow', placeholder: 'Words in the name or text'},
      {name: 'search_by', label: 'Search in', options: [['name', 'Name'], ['result', 'Text']], def: 'name'},
      {name: 'template_id', label: 'Template', options: tplOptions, class: 'wide'},
      {name: 'favorite', label: 'Favourites', options: FAVS},
      {name: 'tag', label: 'Tag', options: [['', 'All tags']]},
    ],
    render: (data) => h('ul', {class: 'cards'}, data.data.map((d) => h('li', {class: 'card', 'data-id': d.id, 'data-name': d.name},
      h('div', {class: 'body'},
        h('a', {class: 'title', href: `#/documents/${d.id}`, text: d.name}),
        h('ul', {class: 'meta'},
          h('li', {text: d.template}), d.state === 'completed' ? h('li', {text: `${d.words} words`}) : null,
          h('li', {}, timeEl(d.created_at)), stateBadge(d) ? h('li', {}, stateBadge(d)) : null),
        d.state === 'failed' ? h('p', {class: 'excerpt', text: d.error || ''}) : d.result ? h('p', {class: 'excerpt', text: excerpt(d.result)}) : null,
        tagChips(d.tags, 'documents')),
      starButton(d, (fav) => favorite(d.id, fav))))),
  });
  tagFilter(root, route, 'documents');
  // the template filter's options arrive with the template list
  templates().then((list) => {
    const sel = root.querySelector('select[name="template_id"]');
    if (!sel) return;
    const want = route.params.get('template_id') || sel.value;
    for (const t of list) sel.append(h('option', {value: String(t.id), text: t.name}));
    sel.value = want;
  }).catch(() => {});
  return view;
}

// §17's writing options as form fields (their names are the API's, so a 422 lands at
// its field): tone and length from their sets, language a BCP 47 tag, "en" by default.
function writingOptions(d = {}) {
  const [lang, langs] = languageInput(d.language);
  return h('div', {class: 'options'},
    field('Tone', select('tone', TONES, d.tone || 'neutral')),
    field('Language', lang, {hint: 'Pick one, or type any language tag: en, en-GB, de, pt-BR…'}),
    field('Length', select('length', LENGTHS, d.length || 'medium')), langs);
}
const optionValues = (form) => Object.fromEntries(['tone', 'language', 'length'].map((n) => [n, form.querySelector(`[name=${n}]`).value.trim()]));
const cap = (s) => (s ? s[0].toUpperCase() + s.slice(1) : '—');

export function docView(root, route) {
  let ctrl = null, editing = null;
  const {box, load} = recordPage(root, 'documents', route.id, (d) => show(d));
  const stop = () => { ctrl?.abort(); ctrl = null; };

  function show(d) {
    stop();
    setGuard(null);
    setTitle(d.name);
    // a finished text is shown as Markdown (markdown.js); one being written as it comes
    const done = d.state === 'completed' || d.state === 'failed';
    const text = done
      ? h('div', {class: 'doc-text md', tabindex: '0', 'aria-label': 'Text of the document'}, renderMarkdownMapped(d.result || ''))
      : h('div', {class: 'doc-text', tabindex: '0', 'aria-label': 'Text of the document'}, d.result || '');
    const words = h('dd', {text: String(d.words)});
    const state = h('dd', {}, d.state === 'completed' ? 'Completed' : stateBadge(d));
    const actions = h('div', {class: 'actions'});
    const facts = h('dl', {class: 'facts'},
      h('dt', {text: 'Template'}), h('dd', {text: d.template}),
      h('dt', {text: 'Creativity'}), h('dd', {text: d.creativity_label}),
      h('dt', {text: 'Tone'}), h('dd', {text: cap(d.tone)}),
      h('dt', {text: 'Language'}), h('dd', {text: d.language || '—'}),
      h('dt', {text: 'Length'}), h('dd', {text: cap(d.length)}),
      h('dt', {text: 'Words'}), words,
      h('dt', {text: 'Revision'}), h('dd', {class: 'revision', text: d.revision ? String(d.revision) : 'None yet'}),
      h('dt', {text: 'State'}), state,
      h('dt', {text: 'Created'}), h('dd', {}, timeEl(d.created_at)),
      h('dt', {text: 'Updated'}), h('dd', {}, timeEl(d.updated_at)));
    const watching = h('div', {class: 'live status', hidden: true});
    const regen = h('div', {class: 'regen', hidden: true});
    const acts = h('div', {class: 'regen acts', hidden: true});
    fill(box, 
      backLink('documents'),
      h('div', {class: 'head'}, h('h1', {text: d.name, tabindex: '-1'}), starButton(d, (fav) => favorite(d.id, fav))),
      d.state === 'failed' ? h('div', {class: 'alert', role: 'alert', text: `Generation failed: ${d.error || 'no reason given.'}`}) : null,
      d.state !== 'failed' && d.error ? h('div', {class: 'alert', role: 'alert', text: `The last regeneration failed: ${d.error} The text below is the latest revision.`}) : null,
      regen, acts,
      d.truncated ? h('div', {class: 'alert warn', role: 'note', text: 'This text was cut short: the model stopped at its output limit, so it may end mid-sentence.'}) : null,
      h('div', {class: 'layout'},
        h('section', {class: 'panel', 'aria-label': 'Text'}, watching, text,
          d.state === 'failed' && !d.result ? h('p', {class: 'muted', text: 'No text was written.'}) : null),
        h('aside', {class: 'panel', 'aria-label': 'Details'}, facts,
          h('details', {}, h('summary', {text: 'Prompt'}), h('p', {class: 'doc-text small', text: d.prompt})), actions,
          // the tags (tags.js): editable on a finished text, as chips on a failed one
          d.state === 'completed' ? tagsEditor(d, 'documents', (r) => { d.tags = r.tags; }) : tagChips(d.tags, 'documents'))),
      d.revision ? revisionsPanel('documents', d, {current: d.result || '', restored: (r) => show(r)}) : null);
    focusHeading(box);
    const again = (label) => h('button', {type: 'button', class: 'btn', text: label, 'data-write': '',
      'aria-expanded': 'false', onclick: (e) => regenerate(d, e.currentTarget, regen, text, words, state, watching)});

    if (d.state === 'failed') add(actions, again('Try again'));
    if (d.state === 'completed') {
      add(actions, again('Regenerate'),
        h('button', {type: 'button', class: 'btn', text: 'Actions…', 'data-write': '', 'aria-expanded': 'false', onclick: (e) => actionsForm(d, acts, e.currentTarget, text,
          (body, part, fail) => rewrite(d.id, 'actions', body, {regen: acts, text, words, state, watching, part, d, fail,
            label: part ? 'Rewriting the selected text… the new text appears as it comes.' : 'Rewriting the text… the new text appears as it comes.',
            done: (r) => `${part ? 'The selection was' : 'The text was'} rewritten: revision ${r.revision}.`}))}),
        h('button', {type: 'button', class: 'btn', text: 'Edit', 'data-write': '', onclick: () => edit(d),
          onpointerenter: () => loadEditor().catch(() => {}), onfocus: () => loadEditor().catch(() => {})}),
        h('button', {type: 'button', class: 'btn', text: 'Copy text', onclick: () => copy(d.result || '')}),
        EXPORT_FORMATS.length ? downloads(d) : null);
    }
    add(actions, h('button', {type: 'button', class: 'btn danger', text: 'Delete', 'data-write': '', onclick: () => remove(d)}));

    if (d.state === 'queued' || d.state === 'generating') watch(d, text, words, state, watching);
  }

  // a document still being written: its text as it streams (or polls), until it ends
  // the text being written, with "Stop watching" (the server goes on writing)
  function live(text, watching, label) {
    const stopBtn = h('button', {type: 'button', class: 'btn', text: 'Stop watching'});
    fill(watching, h('span', {class: 'spinner', 'aria-hidden': 'true'}), h('span', {text: label}), stopBtn);
    watching.hidden = false;
    text.textContent = '';
    text.classList.remove('md');
    text.classList.add('caret');
    stopBtn.addEventListener('click', () => {
      stop();
      setGuard(null);
      fill(watching, h('span', {text: 'Stopped watching. The document is still being written on the server; '}),
        h('a', {href: '#', text: 'reload it', onclick: (e) => { e.preventDefault(); load(); }}), '.');
      text.classList.remove('caret');
    });
  }

  async function watch(d, text, words, state, watching) {
    ctrl = new AbortController();
    const mine = ctrl;
    live(text, watching, 'Being written… the text appears as it comes.');
    try {
      const final = await stream('GET', `/documents/${d.id}`, {signal: mine.signal,
        record: (r) => { if (r.result !== null && r.result !== undefined && !text.textContent) text.textContent = r.result; },
        delta: (piece) => { text.append(piece); words.textContent = String(countWords(text.textContent)); }});
      if (mine === ctrl) show(final);
    } catch (err) {
      if (err.name === 'AbortError' || err.status === 401) return;
      if (mine === ctrl) load();
    }
  }

  // Regenerate (Try again on a failed one): the prompt and the writing options, changed
  // or not, then the new text as it streams. The text on screen stays the record's until
  // the new one starts (§16: nothing is lost; the old text stays as a revision).
  function regenerate(d, button, regen, text, words, state, watching) {
    const close = () => { regen.hidden = true; button.setAttribute('aria-expanded', 'false'); button.focus(); };
    if (!regen.hidden) return close();
    const failed = d.state === 'failed';
    const prompt = h('textarea', {name: 'prompt', value: d.prompt, required: true});
    const submit = h('button', {type: 'submit', class: 'btn primary', text: failed ? 'Try again' : 'Regenerate'});
    // the template: folded away under "choose another" while it exists; shown open, with
    // none chosen, when it was deleted (§18: regenerating without another one is a 422)
    const tplBox = h('div', {class: 'tpl-box'});
    let tp = null, tplGone = false;
    templates().then((all) => {
      tp = templatePicker();
      tplGone = !all.some((t) => t.id === d.template_id);
      tp.set(all, tplGone ? null : d.template_id);
      fill(tplBox, tplGone
        ? [h('p', {class: 'alert warn', role: 'note', text: `The template “${d.template}” of this document was deleted: choose another to write it again.`}), tp.picker]
        : h('details', {class: 'tpl-change'}, h('summary', {text: `Template: ${d.template} — choose another`}), tp.picker));
    }).catch(() => {});
    const titleId = nextId('h');
    const form = h('form', {class: 'panel', novalidate: true, 'aria-labelledby': titleId},
      h('h2', {id: titleId, text: failed ? 'Try again' : 'Regenerate the text'}),
      h('p', {class: 'muted small', text: failed ? 'Change the prompt or the options if you like, then try again.'
        : 'Change the prompt or the options if you like. The current text is kept as a revision: you can restore it.'}),
      formAlert(), field('Prompt', prompt), tplBox, writingOptions(d),
      h('div', {class: 'actions'}, submit, h('button', {type: 'button', class: 'btn', text: 'Cancel', onclick: close})));
    form.addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.preventDefault(); close(); } });
    fill(regen, form);
    regen.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    prompt.focus();
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      clearErrors(form);
      const tplOpen = () => { const det = tplBox.querySelector('details'); if (det) det.open = true; };
      const tid = tp?.value();
      if (tplGone && !tid) { showErrors(form, {fields: {template_id: ['Choose a template: this document’s own was deleted.']}}); return; }
      submit.disabled = true;
      rewrite(d.id, 'regenerate', {prompt: prompt.value, ...optionValues(form), ...(tid ? {template_id: tid} : {})}, {regen, text, words, state, watching,
        label: 'Being written again… the new text appears as it comes.', done: (r) => `Written again: revision ${r.revision}.`,
        fail: (err) => { submit.disabled = false; if (err.fields?.template_id) tplOpen(); showErrors(form, err); }});
    });
  }

  // A regeneration or an action (§16, §17) streamed: the new text appears where the old
  // one was (for a selection, between the parts kept), then the record is shown again.
  async function rewrite(id, route, body, {regen, text, words, state, watching, label, done, fail, part, d}) {
    stop();
    ctrl = new AbortController();
    const mine = ctrl;
    let started = false, sink = text;
    setGuard(() => (mine === ctrl && !mine.signal.aborted ? 'The document is being written again. If you leave, it goes on on the server.' : ''));
    try {
      const final = await stream('POST', `/documents/${id}/${route}`, {body, signal: mine.signal,
        record: () => {
          if (started) return;
          started = true;
          regen.hidden = true;
          for (const b of box.querySelectorAll('aside .actions button')) b.disabled = true; // until show()
          fill(state, stateBadge({state: 'generating'}));
          live(text, watching, label);
          if (part) {
            // the rewritten part between the text before it and after it (continue: after it)
            const r = d.result, cut = body.action === 'continue' ? part.i + part.str.length : part.i;
            sink = h('mark', {class: 'new'});
            add(text, r.slice(0, cut), sink, r.slice(body.action === 'continue' ? cut : part.i + part.str.length));
          }
        },
        delta: (piece) => { sink.append(piece); words.textContent = String(countWords(text.textContent)); }});
      setGuard(null);
      if (mine !== ctrl) return;
      toast(done(final));
      refreshMeter();
      show(final);
    } catch (err) {
      if (err.name === 'AbortError') return;
      setGuard(null);
      if (err.status === 401) return;
      if (!started) return fail(err);
      toast(err.message);
      if (mine === ctrl) load();
    }
  }

  // Edit: the text in place, in the editor (edit.js: live preview, drafts, rewriting a
  // selection); show(record) when it closes
  function edit(d) {
    stop();
    editing = editScreen(box, d, (r) => { editing = null; show(r); });
  }

  const remove = (d) => removeRecord('documents', d, 'Delete this document?', `“${d.name}” will be deleted for good.`);

  load();
  return {unmount: () => { stop(); editing?.unmount(); setGuard(null); }};
}

// Copy: the text as the page shows it, rich (text/html, from the same Markdown
// rendering) and plain (text/plain, without Markdown's marks), so "#" and "**" do not
// land in an email; a browser without ClipboardItem gets the plain text only.
export function plainText(node) {
  const out = [];
  const walk = (n, prefix) => {
    for (const c of n.childNodes) {
      if (c.nodeType === 3) {
        // the line breaks between the HTML's elements are not text; inside a paragraph a
        // source line break (without <br>) is a space, as the page shows it
        if (!/^\s*\n\s*$/.test(c.data)) out.push(c.data.replace(/\s*\n\s*/g, ' '));
        continue;
      }
      if (c.nodeType !== 1) continue;
      const tag = c.tagName.toLowerCase();
      if (tag === 'br') { out.push('\n'); continue; }
      if (tag === 'hr') { out.push('\n\n'); continue; }
      if (tag === 'pre') { out.push(c.textContent.replace(/\n$/, ''), '\n\n'); continue; }
      if (tag === 'li') {
        const ol = c.parentElement?.tagName === 'OL';
        const i = [...c.parentElement.children].indexOf(c) + Number(c.parentElement.getAttribute('start') || 1);
        out.push(prefix + (ol ? `${i}. ` : '• '));
        walk(c, prefix + '  ');
        out.push('\n');
        continue;
      }
      walk(c, prefix);
      if (/^(p|h[1-6]|blockquote|table)$/.test(tag)) out.push('\n\n');
      else if (/^(ul|ol)$/.test(tag) && c.parentElement?.tagName !== 'LI') out.push('\n');
      else if (tag === 'tr') out.push('\n');
      else if (tag === 'td' || tag === 'th') out.push('\t');
    }
  };
  walk(node, '');
  return out.join('').replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}

// the rendered (sanitised) elements as HTML text, written out here (the app parses no
// HTML and reads none back from the DOM)
const escHtml = (x) => x.replace(/[&<>"]/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'})[c]);
function toHtml(node) {
  let out = '';
  for (const c of node.childNodes) {
    if (c.nodeType === 3) out += escHtml(c.data);
    else if (c.nodeType === 1) {
      const tag = c.tagName.toLowerCase();
      out += `<${tag}${[...c.attributes].filter((a) => !a.name.startsWith('data-')).map((a) => ` ${a.name}="${escHtml(a.value)}"`).join('')}>`;
      if (!/^(br|hr|input)$/.test(tag)) out += `${toHtml(c)}</${tag}>`;
    }
  }
  return out;
}

async function copy(markdown) {
  const box = h('div', {}, renderMarkdown(markdown));
  const html = toHtml(box), plain = plainText(box);
  try {
    if (typeof ClipboardItem === 'function' && navigator.clipboard.write) {
      await navigator.clipboard.write([new ClipboardItem({
        'text/html': new Blob([html], {type: 'text/html'}), 'text/plain': new Blob([plain], {type: 'text/plain'})})]);
    } else {
      await navigator.clipboard.writeText(plain);
    }
    toast('Text copied.');
  } catch {
    toast('The browser did not allow copying; select the text and copy it by hand.');
  }
}

// §12 export: fetched with the key (an <a href> cannot carry it), saved as a file.
// §12: the document as a file, fetched with the key (a plain link cannot carry it).
function downloads(d) {
  const id = nextId('dl');
  return h('div', {class: 'downloads', role: 'group', 'aria-labelledby': id},
    h('span', {class: 'label', id, text: 'Download'}),
    EXPORT_FORMATS.map(([fmt, label]) => h('button', {type: 'button', class: 'btn small', text: label,
      'aria-label': `Download as ${label}`, onclick: (e) => download(d, fmt, e.currentTarget)})));
}

async function download(d, fmt, button) {
  button.disabled = true;
  try {
    const res = await apiFile(`/documents/${d.id}/export`, {format: fmt});
    // the UTF-8 name (RFC 5987 filename*) when given, else the plain one
    const cd = res.headers.get('Content-Disposition') || '';
    const star = cd.match(/filename\*=UTF-8''([^;\s]+)/i), plain = cd.match(/filename="([^"]+)"/);
    let name = `document.${fmt}`;
    try { name = star ? decodeURIComponent(star[1]) : plain ? plain[1] : name; } catch { /* keep the plain name */ }
    const url = URL.createObjectURL(await res.blob());
    const a = h('a', {href: url, download: name, hidden: true});
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } catch (err) {
    if (err.status !== 401) toast(err.message);
  } finally { button.disabled = false; }
}

// "Write a new document": name, prompt, the template picker (52, searchable, with
// their descriptions), the creativity levels; the text shown live as it is written.
export function docNew(root, route) {
  let ctrl = null;
  const name = h('input', {type: 'text', name: 'name', maxlength: '255', required: true, autocomplete: 'off'});
  const prompt = h('textarea', {name: 'prompt', required: true, placeholder: 'What should the document be about?'});
  const {picker, list, set, failed} = templatePicker();
  const levels = h('fieldset', {'data-field': 'creativity'}, h('legend', {text: 'Creativity'}),
    h('div', {class: 'levels'}, CREATIVITY.map(([v, label]) => h('label', {},
      h('input', {type: 'radio', name: 'creativity', value: String(v), checked: v === 0.5}), label))),
    h('p', {class: 'err', id: nextId('cr') + '-err', hidden: true}));
  const submit = h('button', {type: 'submit', class: 'btn primary', text: 'Write it'});
  const form = h('form', {class: 'panel', novalidate: true},
    formAlert(), field('Name', name), field('Prompt', prompt, {hint: 'Up to 16,384 characters.'}),
    picker, levels, writingOptions(), h('div', {class: 'actions'}, submit));
  const live = h('section', {class: 'panel live writing', hidden: true, 'aria-label': 'The new document'});
  root.append(backLink('documents'),
    h('h1', {text: 'New document'}), form, live);

  templates().then((all) => {
    const want = all.some((t) => t.id === Number(route?.params.get('template_id'))) ? Number(route.params.get('template_id')) : 1;
    set(all, want);
    if (want !== 1) list.querySelector('input:checked')?.scrollIntoView({block: 'nearest'});
  }).catch((err) => { if (err.status !== 401) failed(err.message); });

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors(form);
    const body = {name: name.value, prompt: prompt.value,
      template_id: form.querySelector('input[name=template_id]:checked')?.value ?? '1',
      creativity: form.querySelector('input[name=creativity]:checked')?.value ?? '0.5', ...optionValues(form)};
    submit.disabled = true;
    ctrl = new AbortController();
    const mine = ctrl;
    let id = null, made = false;
    const out = h('div', {class: 'doc-text caret', 'aria-label': 'Text so far'});
    const status = h('div', {class: 'status', role: 'status'});
    const stopBtn = h('button', {type: 'button', class: 'btn', text: 'Stop watching'});
    const heading = h('h2', {text: body.name});
    const busy = [h('span', {class: 'spinner', 'aria-hidden': 'true'}), h('span', {text: 'Writing…'}), stopBtn];
    fill(status, ...busy);
    fill(live, heading, status, out);
    live.hidden = false;
    live.scrollIntoView({block: 'start'});
    setGuard(() => (mine === ctrl && !mine.signal.aborted ? 'The document is still being written. If you leave, it goes on being written on the server and appears in the list when it is done.' : ''));
    stopBtn.addEventListener('click', () => {
      setGuard(null);
      mine.abort();
      out.classList.remove('caret');
      fill(status, h('span', {text: 'Stopped watching: the document is still being written on the server. '}),
        id ? h('a', {href: `#/documents/${id}`, text: 'Open it'}) : null);
      submit.disabled = false;
    });
    try {
      const final = await stream('POST', '/documents', {body, signal: mine.signal,
        record: (r) => { id = r.id; live.setAttribute('aria-busy', 'true'); },
        delta: (piece) => out.append(piece)});
      setGuard(null);
      toast(`“${final.name}” is written.`);
      navigate(`#/documents/${final.id}`);
    } catch (err) {
      if (err.name === 'AbortError') return;
      setGuard(null);
      if (id !== null && (!(err instanceof ApiError) || err.status === 0)) {
        // the document exists (the stream had begun) and the connection was lost: a link
        // to it; "Write it" stays off (a second click would make a second document)
        made = true;
        out.classList.remove('caret');
        fill(status, h('span', {text: 'The connection to the server was lost while the document was being written. '}),
          h('a', {href: `#/documents/${id}`, text: 'Open the document'}), h('span', {text: ' to see how far it got.'}));
        status.querySelector('a').focus();
        return;
      }
      live.hidden = true;
      if (err.status !== 401) showErrors(form, err instanceof ApiError ? err : new ApiError(0, String(err.message || err)));
    } finally {
      if (mine === ctrl && !made) submit.disabled = false;
      live.setAttribute('aria-busy', 'false');
    }
  });
  return {unmount: () => ctrl?.abort()};
}
