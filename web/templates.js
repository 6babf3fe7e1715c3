// templates.js — "My templates" (§18): the user's own templates (GET /templates, those
// with `custom: true`), made, edited in place and deleted (asking first). The new-document
// picker offers them after the 52 (documents.js); "Write with it" opens it chosen there.
import {api, dropTemplates} from './api.js';
import {clearErrors, confirmDialog, field, fill, formAlert, h, nextId, setTitle, showErrors, toast} from './ui.js';

export function tplView(root) {
  setTitle('My templates');
  const list = h('div', {'aria-busy': 'true'});
  const slot = h('div', {class: 'regen', hidden: true});
  const newBtn = h('button', {type: 'button', class: 'btn primary', 'data-write': '', text: '+ New template', 'aria-expanded': 'false'});
  root.append(h('div', {class: 'head'}, h('h1', {text: 'My templates'}), newBtn),
    h('p', {class: 'muted', text: 'Templates of your own: what the model is told to write, beside the 52 built in. Only you see and use them.'}),
    slot, list);

  async function load() {
    list.setAttribute('aria-busy', 'true');
    try {
      const mine = (await api('GET', '/templates')).data.filter((t) => t.custom);
      fill(list, mine.length ? h('ul', {class: 'cards'}, mine.map(card))
        : h('p', {class: 'panel muted', text: 'You have no templates of your own yet. “+ New template” makes one.'}));
    } catch (err) {
      if (err.status !== 401) fill(list, h('div', {class: 'alert', role: 'alert', text: err.message}));
    } finally { list.setAttribute('aria-busy', 'false'); }
  }

  function card(t) {
    const li = h('li', {class: 'card'});
    const view = () => fill(li, h('div', {class: 'body'},
      h('h2', {class: 'title', text: t.name}), h('p', {class: 'tdesc', text: t.description}),
      instructionDetails(t),
      h('div', {class: 'actions'},
        h('a', {class: 'btn small', href: `#/documents/new?template_id=${t.id}`, text: 'Write with it', 'aria-label': `Write with it: “${t.name}”`}),
        h('button', {type: 'button', class: 'btn small', 'data-write': '', text: 'Edit', 'aria-label': `Edit “${t.name}”`, onclick: async () => {
          try { t = await whole(t); } catch (err) { if (err.status !== 401) toast(err.message); return; }
          fill(li, form(t, () => { view(); li.querySelector('button').focus(); }, (r) => { t = r; view(); }));
          li.querySelector('input').focus();
        }}),
        h('button', {type: 'button', class: 'btn small danger', 'data-write': '', text: 'Delete', 'aria-label': `Delete “${t.name}”`, onclick: () => remove(t)}))));
    view();
    return li;
  }

  // the list shows no instruction (§24): a template is read whole when it is needed
  async function whole(t) {
    return t.instruction === undefined ? (await api('GET', `/templates/${t.id}`)).data : t;
  }

  function instructionDetails(t) {
    const text = h('p', {class: 'doc-text small', text: t.instruction || ''});
    const d = h('details', {}, h('summary', {text: 'Instruction'}), text);
    d.addEventListener('toggle', async () => {
      if (!d.open || t.instruction !== undefined) return;
      try { text.textContent = (await whole(t)).instruction; } catch (err) { if (err.status !== 401) text.textContent = err.message; }
    });
    return d;
  }

  // the form of a new template (t null) or of an edit; saved(record) after a 200/201
  function form(t, cancel, saved) {
    const name = h('input', {type: 'text', name: 'name', value: t?.name || '', maxlength: '100', required: true, autocomplete: 'off'});
    const description = h('input', {type: 'text', name: 'description', value: t?.description || '', maxlength: '255', required: true, autocomplete: 'off'});
    const instruction = h('textarea', {name: 'instruction', value: t?.instruction || '', maxlength: '8000', required: true,
      placeholder: 'Write a haiku about the subject of the prompt.'});
    const submit = h('button', {type: 'submit', class: 'btn primary', text: t ? 'Save' : 'Create template'});
    const titleId = nextId('h');
    const f = h('form', {class: 'panel tpl-form', novalidate: true, 'aria-labelledby': titleId},
      h('h2', {id: titleId, text: t ? `Edit “${t.name}”` : 'New template'}), formAlert(),
      field('Name', name), field('Description', description, {hint: 'One sentence on what it writes (shown in the template picker).'}),
      field('Instruction', instruction, {hint: 'What the model is told to write, up to 8,000 characters. Escape cancels.'}),
      h('div', {class: 'actions'}, submit, h('button', {type: 'button', class: 'btn', text: 'Cancel', onclick: cancel})));
    f.addEventListener('keydown', (e) => { if (e.key === 'Escape') { e.preventDefault(); cancel(); } });
    f.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearErrors(f);
      submit.disabled = true;
      try {
        const body = {name: name.value, description: description.value, instruction: instruction.value};
        const {data} = await api(t ? 'PATCH' : 'POST', t ? `/templates/${t.id}` : '/templates', {body});
        dropTemplates();
        toast(t ? 'Saved.' : `Template “${data.name}” created.`);
        saved(data);
      } catch (err) {
        if (err.status !== 401) showErrors(f, err);
      } finally { submit.disabled = false; }
    });
    return f;
  }

  async function remove(t) {
    if (!await confirmDialog('Delete this template?', `“${t.name}” will be deleted for good. Documents written with it stay as they are.`, 'Delete')) return;
    try {
      await api('DELETE', `/templates/${t.id}`);
      dropTemplates();
      toast(`Deleted “${t.name}”.`);
      load();
    } catch (err) {
      if (err.status !== 401) toast(err.message);
    }
  }

  const closeNew = (focus = true) => { fill(slot); slot.hidden = true; newBtn.setAttribute('aria-expanded', 'false'); if (focus) newBtn.focus(); };
  newBtn.addEventListener('click', () => {
    if (!slot.hidden) return closeNew();
    fill(slot, form(null, closeNew, () => { closeNew(false); load(); }));
    slot.hidden = false;
    newBtn.setAttribute('aria-expanded', 'true');
    slot.querySelector('input').focus();
  });
  load();
}
