// tags.js — tags on documents and images (API.md §23): chips that lead to the list
// filtered by that tag, an editor for a record's tags (comma-separated; a tag renamed by
// editing its spelling), the user's tags in use (GET /tags) for the list's filter, and the
// bulk actions of a list (POST /{kind}/bulk: delete, favourite, tag, untag, and for
// documents a ZIP export), all-or-nothing, their errors shown where they were asked.
import {api, apiPostFile, EXPORT_FORMATS} from './api.js';
import {clearErrors, confirmDialog, field, fill, formAlert, h, nextId, select, showErrors, toast} from './ui.js';
import {hashFor} from './nav.js';

// the tags of a record as links to its list filtered by each
export function tagChips(tags, kind) {
  if (!tags || !tags.length) return null;
  return h('ul', {class: 'chips', 'aria-label': 'Tags'}, tags.map((t) =>
    h('li', {}, h('a', {class: 'chip', href: hashFor(`/${kind}`, {tag: t}), text: t, 'aria-label': `Tag: ${t}`}))));
}

// the user's tags in use (GET /tags), those of kind ('documents' or 'images')
export async function tagsInUse(kind) {
  const {data} = await api('GET', '/tags');
  return data.filter((t) => t[kind] > 0);
}

// fills a list's Tag filter with the user's tags of kind once they arrive (the one in
// the address kept even when no record carries it any more)
export function tagFilter(root, route, kind) {
  tagsInUse(kind).then((tags) => {
    const sel = root.querySelector('select[name="tag"]');
    if (!sel) return;
    const want = route.params.get('tag') || sel.value;
    const names = tags.map((t) => t.name);
    if (want && !names.some((n) => n.toLowerCase() === want.toLowerCase())) names.push(want);
    for (const n of names) sel.append(h('option', {value: n, text: n}));
    sel.value = names.find((n) => n.toLowerCase() === want.toLowerCase()) || want;
  }).catch(() => {});
}

const splitTags = (s) => s.split(',').map((t) => t.trim()).filter(Boolean);

// folded as the server compares tags (§15/§23: case and Unicode form), to dedupe here
const fold = (t) => t.normalize('NFKC').toLowerCase();

// A record's tags on its page: the chips (links to the list of each tag), each with a
// Remove button (×), an "Add a tag" field (Enter adds; several with commas; Backspace in
// the empty field goes to the last chip's Remove), and "Edit tags" (all of them in one
// comma-separated field, where changing a spelling renames that tag on this record;
// Escape or Cancel leaves). Each change is one PATCH (§23); the server's answer is shown,
// its 422s under the field. Controls that write are data-write (hidden from a read-only
// session). saved(record) after each change.
export function tagsEditor(rec, kind, saved) {
  const box = h('div', {class: 'tags-edit'});
  const tags = () => rec.tags || [];
  async function save(list, form) {
    clearErrors(form);
    const {data} = await api('PATCH', `/${kind}/${rec.id}`, {body: {tags: list.join(',')}});
    rec = data;
    saved?.(data);
    return data;
  }
  const view = () => {
    const addInput = h('input', {type: 'text', name: 'add_tags', autocomplete: 'off', spellcheck: 'false', enterkeyhint: 'done'});
    const chips = tags().length ? h('ul', {class: 'chips', 'aria-label': 'Tags'}, tags().map((t, i) =>
      h('li', {class: 'chip-item'},
        h('a', {class: 'chip', href: hashFor(`/${kind}`, {tag: t}), text: t, 'aria-label': `Tag: ${t}`}),
        h('button', {type: 'button', class: 'chip-x', 'data-write': '', 'aria-label': `Remove tag ${t}`, title: `Remove tag ${t}`,
          onclick: (e) => remove(i, e.currentTarget)}, h('span', {'aria-hidden': 'true', text: '×'})))))
      : h('span', {class: 'muted small', text: 'No tags.'});
    const edit = h('button', {type: 'button', class: 'btn small', 'data-write': '', text: 'Edit tags',
      'aria-label': `Edit tags of “${rec.name}”`, onclick: open, hidden: !tags().length});
    // the field by hand (not field()): the Add button sits beside the input, the hint under both
    const fid = addInput.id = nextId('f');
    addInput.setAttribute('aria-describedby', fid + '-hint');
    // its alert said when shown, without role=alert: the record's page keeps that role for its own errors
    const addForm = h('form', {class: 'tags-add', novalidate: true, 'data-write': ''},
      h('div', {class: 'alert form-alert', 'aria-live': 'assertive', tabindex: '-1', hidden: true}),
      h('div', {class: 'field', 'data-field': 'tags'}, h('label', {for: fid, text: 'Add a tag'}),
        h('div', {class: 'tags-add-row'}, addInput, h('button', {type: 'submit', class: 'btn small', text: 'Add', 'aria-label': 'Add the tag'})),
        h('p', {class: 'hint', id: fid + '-hint', text: 'Enter adds it; commas separate several.'}),
        h('p', {class: 'err', id: fid + '-err', hidden: true})));
    addInput.addEventListener('keydown', (e) => {
      if (e.key === 'Backspace' && !addInput.value && tags().length) { e.preventDefault(); [...box.querySelectorAll('.chip-x')].at(-1)?.focus(); }
    });
    addForm.addEventListener('submit', async (e) => {
      e.preventDefault();
      const more = splitTags(addInput.value);
      if (!more.length) return showErrors(addForm, {fields: {tags: ['Enter a tag (or several, separated by commas).']}});
      const seen = new Set(tags().map(fold));
      const list = [...tags(), ...more.filter((t) => !seen.has(fold(t)) && seen.add(fold(t)))];
      try {
        await save(list, addForm);
        toast(more.length === 1 ? `Tag “${more[0]}” added.` : 'Tags added.');
        view();
        box.querySelector('input[name=add_tags]').focus();
      } catch (err) { if (err.status !== 401) showErrors(addForm, err); }
    });
    fill(box, h('div', {class: 'tags-line'}, chips, edit), addForm);
  };
  async function remove(i, button) {
    const gone = tags()[i];
    button.setAttribute('aria-busy', 'true');
    try {
      await save(tags().filter((_, j) => j !== i), box);
      toast(`Tag “${gone}” removed.`);
      view();
      // the focus to the Remove of the chip now at this place (or the one before), else the field
      const xs = box.querySelectorAll('.chip-x');
      (xs[Math.min(i, xs.length - 1)] || box.querySelector('input[name=add_tags]')).focus();
    } catch (err) {
      button.removeAttribute('aria-busy');
      if (err.status !== 401) toast(err.message);
    }
  }
  function open() {
    const input = h('input', {type: 'text', name: 'tags', value: tags().join(', '), autocomplete: 'off', spellcheck: 'false'});
    const cancel = h('button', {type: 'button', class: 'btn small', text: 'Cancel'});
    const form = h('form', {class: 'tags-form', novalidate: true}, formAlert(),
      field('Tags', input, {name: 'tags', hint: 'Separated by commas, up to 20. Change a spelling here to rename it.'}),
      h('div', {class: 'actions'}, h('button', {type: 'submit', class: 'btn small primary', text: 'Save tags'}), cancel));
    const close = () => { view(); (box.querySelector('.tags-line button:not([hidden]):not(.chip-x)') || box.querySelector('input[name=add_tags]')).focus(); };
    cancel.addEventListener('click', close);
    form.addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.preventDefault(); close(); } });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try {
        await save(splitTags(input.value), form);
        toast('Tags saved.');
        close();
      } catch (err) { if (err.status !== 401) showErrors(form, err); }
    });
    fill(box, form);
    input.focus();
  }
  view();
  return box;
}

// The bar of a list's selection: what is selected and what to do with it. ids() gives
// the selected ids; done() reloads the list.
export function bulkBar(kind, noun, ids, names, done) {
  const status = h('p', {class: 'bulk-count', role: 'status'});
  // said when shown, without role=alert: a list page keeps one alert role for its own errors
  const alert = h('div', {class: 'alert form-alert', 'aria-live': 'assertive', tabindex: '-1', hidden: true});
  const tagInput = h('input', {type: 'text', name: 'bulk_tags', autocomplete: 'off', spellcheck: 'false'});
  const fmt = select('bulk_format', EXPORT_FORMATS, 'md');
  const run = async (action, extra = {}, button) => {
    const chosen = ids();
    if (!chosen.length) return;
    clearErrors(bar);
    button.disabled = true;
    try {
      const {data} = await api('POST', `/${kind}/bulk`, {body: {ids: chosen.join(','), action, ...extra}});
      const n = data.done.length;
      const what = {delete: 'deleted', favorite: 'added to favourites', unfavorite: 'removed from favourites', tag: 'tagged', untag: 'untagged'}[action];
      toast(`${n} ${n === 1 ? noun.replace(/s$/, '') : noun} ${what}.`);
      if (data.missing.length) showErrors(bar, {message: `${data.missing.length} of them ${data.missing.length === 1 ? 'was' : 'were'} not found (deleted meanwhile?): nothing was done to ${data.missing.length === 1 ? 'it' : 'them'}.`});
      await done(action === 'delete');
    } catch (err) {
      if (err.status !== 401) showErrors(bar, err);
    } finally { button.disabled = false; }
  };
  const btn = (text, onclick, write = true) => h('button', {type: 'button', class: 'btn small', 'data-write': write ? '' : null, text, onclick});
  const tagOk = (e, action) => {
    const t = splitTags(tagInput.value);
    if (!t.length) return showErrors(bar, {fields: {tags: ['Enter a tag (or several, separated by commas).']}});
    run(action, {tags: t.join(',')}, e.currentTarget).then(() => { tagInput.value = ''; });
  };
  const labelId = nextId('bulk');
  const bar = h('div', {class: 'bulk panel', role: 'group', 'aria-labelledby': labelId, hidden: true},
    h('h2', {class: 'sr', id: labelId, text: `Selected ${noun}`}), status, alert,
    h('div', {class: 'bulk-actions'},
      btn('Favourite', (e) => run('favorite', {}, e.currentTarget)),
      btn('Unfavourite', (e) => run('unfavorite', {}, e.currentTarget)),
      h('div', {class: 'bulk-tag', 'data-write': ''},
        field('Tag', tagInput, {name: 'tags'}),
        btn('Add tag', (e) => tagOk(e, 'tag')), btn('Remove tag', (e) => tagOk(e, 'untag'))),
      kind === 'documents' ? h('div', {class: 'bulk-export'}, field('Export as', fmt, {name: 'format'}),
        btn('Download ZIP', (e) => exportZip(e.currentTarget), false)) : null,
      h('button', {type: 'button', class: 'btn small danger', 'data-write': '', text: 'Delete', onclick: async (e) => {
        const n = ids().length;
        const b = e.currentTarget;
        if (!await confirmDialog(`Delete ${n} ${n === 1 ? noun.replace(/s$/, '') : noun}?`,
          n === 1 ? `“${names()[0]}” is deleted for good.` : `These ${n} ${noun} are deleted for good.`, 'Delete')) return;
        run('delete', {}, b);
      }})));
  async function exportZip(button) {
    clearErrors(bar);
    button.disabled = true;
    try {
      const res = await apiPostFile(`/${kind}/bulk`, {ids: ids().join(','), action: 'export', format: fmt.value});
      const url = URL.createObjectURL(await res.blob());
      const a = h('a', {href: url, download: 'documents.zip', hidden: true});
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (err) {
      if (err.status !== 401) showErrors(bar, err);
    } finally { button.disabled = false; }
  }
  bar.update = (n) => {
    bar.hidden = n === 0;
    status.textContent = `${n} ${n === 1 ? noun.replace(/s$/, '') : noun} selected`;
  };
  return bar;
}
