// pickers.js — the new-document form's pickers (issue 35 item 5): the templates grouped
// (the user's own first, then Freestyle, blog, ads, social, web pages, email, other; a
// search box hides what does not match and the groups left empty), and the languages
// offered for the Language field (a datalist: common languages, any BCP 47 tag typed).
import {clear, field, fill, h, nextId} from './ui.js';

// the 52 builtins by id (API.md §14's list)
const GROUPS = [
  ['Blog', [4, 5, 6, 7, 8, 9, 10, 11, 12, 44, 46]],
  ['Ads and sales', [3, 13, 18, 24, 31, 35, 48, 49]],
  ['Social media and video', [17, 27, 28, 33, 34, 36, 37, 38, 39]],
  ['Web pages', [2, 16, 19, 20, 21, 22, 32, 40, 41, 52]],
  ['Email and notifications', [23, 42, 43]],
];

// The radio buttons of every template, in labelled groups. want: the id checked.
export function templateGroups(all, want) {
  const placed = new Set(GROUPS.flatMap(([, ids]) => ids));
  const byId = new Map(all.map((t) => [t.id, t]));
  const sections = [
    ['Your templates', all.filter((t) => t.custom)],
    ['Start', all.filter((t) => t.id === 1)],
    ...GROUPS.map(([name, ids]) => [name, ids.map((id) => byId.get(id)).filter(Boolean)]),
    ['Other', all.filter((t) => !t.custom && t.id !== 1 && !placed.has(t.id))],
  ];
  return sections.filter(([, ts]) => ts.length).map(([name, ts]) => {
    const id = nextId('tg');
    return h('div', {class: 'tgroup', role: 'group', 'aria-labelledby': id},
      h('p', {class: 'tgroup-name', id, text: name}),
      ts.map((t) => h('label', {'data-search': `${t.name} ${t.description || ''}`.toLowerCase()},
        h('input', {type: 'radio', name: 'template_id', value: String(t.id), checked: t.id === want}),
        h('span', {}, h('span', {class: 'tname', text: t.custom ? `${t.name} (yours)` : t.name}), h('span', {class: 'tdesc', text: t.description || ''})))));
  });
}

// after a search: a group with no visible template is hidden
export function hideEmptyGroups(list) {
  for (const g of list.querySelectorAll('.tgroup')) g.hidden = !g.querySelector('label:not([hidden])');
}

// The template picker (the new-document form, and Regenerate): a box that filters by name
// or description, the count, and the grouped radios (name template_id) in a fieldset
// whose 422s land under it. set(all, want) fills it (want: the id checked, or none).
export function templatePicker(legend = 'Template') {
  const filter = h('input', {type: 'search', placeholder: 'Filter templates by name or description', autocomplete: 'off'});
  const list = h('div', {class: 'picker-list', role: 'radiogroup', 'aria-label': 'Templates'}, h('p', {class: 'muted small', text: 'Loading templates…'}));
  const count = h('p', {class: 'hint', 'aria-live': 'polite'});
  const pickerId = nextId('tpl');
  const picker = h('fieldset', {'data-field': 'template_id', 'aria-describedby': pickerId + '-err'},
    h('legend', {text: legend}), field('Find a template', filter), count, list,
    h('p', {class: 'err', id: pickerId + '-err', hidden: true}));
  filter.addEventListener('input', () => {
    const q = filter.value.trim().toLowerCase();
    let n = 0;
    for (const l of list.querySelectorAll('label')) {
      const on = !q || l.dataset.search.includes(q);
      l.hidden = !on;
      n += on;
    }
    hideEmptyGroups(list);
    count.textContent = q ? `${n} matching template${n === 1 ? '' : 's'}` : `${n} templates`;
  });
  filter.addEventListener('keydown', (e) => { if (e.key === 'Enter') e.preventDefault(); });
  return {picker, list,
    set(all, want) {
      clear(list);
      list.append(...templateGroups(all, want));
      count.textContent = `${all.length} templates`;
    },
    failed(message) { fill(list, h('p', {class: 'alert', text: message})); },
    value: () => list.querySelector('input[name=template_id]:checked')?.value ?? null};
}

const LANGUAGES = [['en', 'English'], ['en-GB', 'English (UK)'], ['en-US', 'English (US)'], ['es', 'Spanish'], ['fr', 'French'],
  ['de', 'German'], ['it', 'Italian'], ['pt', 'Portuguese'], ['pt-BR', 'Portuguese (Brazil)'], ['nl', 'Dutch'], ['sv', 'Swedish'],
  ['da', 'Danish'], ['nb', 'Norwegian'], ['fi', 'Finnish'], ['pl', 'Polish'], ['cs', 'Czech'], ['ro', 'Romanian'], ['hu', 'Hungarian'],
  ['el', 'Greek'], ['tr', 'Turkish'], ['ru', 'Russian'], ['uk', 'Ukrainian'], ['ar', 'Arabic'], ['he', 'Hebrew'], ['fa', 'Persian'],
  ['hi', 'Hindi'], ['bn', 'Bengali'], ['ur', 'Urdu'], ['id', 'Indonesian'], ['ms', 'Malay'], ['vi', 'Vietnamese'], ['th', 'Thai'],
  ['zh-Hans', 'Chinese (Simplified)'], ['zh-Hant', 'Chinese (Traditional)'], ['ja', 'Japanese'], ['ko', 'Korean'], ['sw', 'Swahili']];

// The Language field: a text input (any tag) with the common languages offered.
export function languageInput(value) {
  const id = nextId('langs');
  const input = h('input', {type: 'text', name: 'language', value: value || 'en', maxlength: '35', list: id,
    autocomplete: 'off', spellcheck: 'false', required: true});
  return [input, h('datalist', {id}, LANGUAGES.map(([v, l]) => h('option', {value: v, label: `${l} (${v})`})))];
}
