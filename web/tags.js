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

// A record's tags: the chips and, for a session that may write, "Edit tags" (an input of
// comma-separated tags, Save with PATCH, Escape or Cancel to leave). saved(record) after.
export function tagsEditor(rec, kind, saved) {
  const box = h('div', {class: 'tags-edit'});
  const view = () => {
    const edit = h('button', {type: 'button', class: 'btn small', 'data-write': '', text: rec.tags?.length ? 'Edit tags' : 'Add tags',
      'aria-label': `${rec.tags?.length ? 'Edit' : 'Add'} tags of “${rec.name}”`, onclick: open});
    fill(box, h('div', {class: 'tags-line'}, tagChips(rec.tags, kind) || h('span', {class: 'muted small', text: 'No tags.'}), edit));
  };
  function open() {
    const input = h('input', {type: 'text', name: 'tags', value: (rec.tags || []).join(', '), autocomplete: 'off', spellcheck: 'false'});
    const cancel = h('button', {type: 'button', class: 'btn small', text: 'Cancel'});
    const form = h('form', {class: 'tags-form', novalidate: true}, formAlert(),
      field('Tags', input, {name: 'tags', hint: 'Separated by commas, up to 20. Change a spelling here to rename it.'}),
      h('div', {class: 'actions'}, h('button', {type: 'submit', class: 'btn small primary', text: 'Save tags'}), cancel));
    const close = () => { view(); box.querySelector('button').focus(); };
    cancel.addEventListener('click', close);
    form.addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.preventDefault(); close(); } });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearErrors(form);
      try {
        const {data} = await api('PATCH', `/${kind}/${rec.id}`, {body: {tags: splitTags(input.value).join(',')}});
        rec = data;
        toast('Tags saved.');
        view();
        box.querySelector('button').focus();
        saved?.(data);
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
