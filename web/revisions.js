// revisions.js — the revisions panel of a record's page (API.md §16): the list, newest
// first (number, what made it, when), ten at a time with "Show older revisions". For a
// document, one revision is shown as its text or as its changes against the current
// text (a word diff, diff.js); for an image, each revision is a thumbnail. Any revision
// but the current one can be restored (a new revision with its content).
import {api, SOURCES} from './api.js';
import {add, fill, h, nextId, timeEl, toast} from './ui.js';
import {diffCounts, diffParagraphs, diffWords} from './diff.js';
import {renderMarkdown} from './markdown.js';

// opts: {current: the record's text (documents), thumb(rev) -> img (images), restored(record)}
export function revisionsPanel(kind, rec, opts) {
  const titleId = nextId('h');
  const list = h('ol', {class: kind === 'images' ? 'revs gallery' : 'revs'});
  const more = h('button', {type: 'button', class: 'btn small', text: 'Show older revisions', hidden: true});
  const viewer = h('div', {class: 'rev-view', hidden: true});
  const status = h('p', {class: 'muted small', role: 'status'});
  const panel = h('section', {class: 'panel revisions', 'aria-labelledby': titleId},
    h('h2', {id: titleId, text: 'Revisions'}), status, list, more, viewer);
  let page = 0;

  async function restore(rev, button) {
    button.disabled = true;
    try {
      const {data} = await api('POST', `/${kind}/${rec.id}/revisions/${rev.number}/restore`);
      toast(`Revision ${rev.number} restored as revision ${data.revision}.`);
      opts.restored(data);
      // the page was drawn again without the button: the focus goes to its heading, not <body>
      if (!document.activeElement || document.activeElement === document.body) {
        const h1 = document.querySelector('#main h1');
        if (h1) { h1.tabIndex = -1; h1.focus(); }
      }
    } catch (err) {
      if (err.status !== 401) toast(err.message);
      button.disabled = false;
    }
  }
  const restoreButton = (rev) => rev.number === rec.revision ? h('span', {class: 'badge', text: 'Current'})
    : h('button', {type: 'button', class: 'btn small', 'data-write': '', text: 'Restore', 'aria-label': `Restore revision ${rev.number}`,
      onclick: (e) => restore(rev, e.currentTarget)});
  const label = (rev) => [h('strong', {text: `Revision ${rev.number}`}), ' · ', made(rev), ' · ', timeEl(rev.created_at)];

  // a document's revision: its text, or its changes against the current text
  function show(rev, button) {
    for (const b of list.querySelectorAll('[aria-expanded=true]')) b.setAttribute('aria-expanded', 'false');
    button.setAttribute('aria-expanded', 'true');
    const id = nextId('h');
    const body = h('div', {class: 'rev-body'});
    const mode = (m) => {
      for (const b of tabs.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.m === m));
      if (m === 'text') return fill(body, h('div', {class: 'doc-text md', tabindex: '0', 'aria-label': `Text of revision ${rev.number}`}, renderMarkdown(rev.result || '')));
      fill(body, diffView(rev.result || '', opts.current, rev.number));
    };
    const tabs = h('div', {class: 'actions', role: 'group', 'aria-label': 'Show'},
      h('button', {type: 'button', class: 'btn small', 'data-m': 'diff', text: 'Changes to the current text', onclick: () => mode('diff')}),
      h('button', {type: 'button', class: 'btn small', 'data-m': 'text', text: 'Its text', onclick: () => mode('text')}),
      restoreButton(rev));
    fill(viewer, h('h3', {id, tabindex: '-1'}, label(rev)),
      h('p', {class: 'muted small', text: [rev.tone, rev.language, rev.length].filter(Boolean).join(' · ') + ` · ${rev.words} words`}),
      rev.truncated ? h('p', {class: 'alert warn', role: 'note', text: 'This revision was cut short: the model stopped at its output limit.'}) : null,
      tabs, body);
    viewer.setAttribute('aria-labelledby', id);
    viewer.hidden = false;
    mode(rev.number === rec.revision ? 'text' : 'diff');
    viewer.querySelector('h3').focus();
  }

  function item(rev) {
    if (kind === 'images') {
      return h('li', {class: 'tile rev'}, opts.thumb(rev),
        h('div', {class: 'cap small'}, h('span', {}, label(rev)), restoreButton(rev)));
    }
    return h('li', {class: 'rev'}, h('span', {}, label(rev), ` · ${rev.words} words`),
      h('button', {type: 'button', class: 'btn small', text: 'Show', 'aria-expanded': 'false',
        'aria-label': `Show revision ${rev.number}`, onclick: (e) => show(rev, e.currentTarget)}));
  }

  async function load() {
    more.disabled = true;
    try {
      const r = await api('GET', `/${kind}/${rec.id}/revisions`, {query: {page: page + 1, per_page: 10}});
      page = r.meta.current_page;
      add(list, r.data.map(item));
      status.textContent = `${r.meta.total} revision${r.meta.total === 1 ? '' : 's'}, newest first.`;
      more.hidden = page >= r.meta.last_page;
    } catch (err) {
      if (err.status !== 401) status.textContent = err.message;
    } finally { more.disabled = false; }
  }
  more.addEventListener('click', load);
  load();
  return panel;
}

// what made a revision, with the action named: "Rewritten: Shorten"
const ACTIONS = {improve: 'Improve', shorten: 'Shorten', expand: 'Expand', continue: 'Continue', rephrase: 'Rephrase',
  simplify: 'Simplify', fix_grammar: 'Fix grammar', grammar: 'Fix grammar', change_tone: 'Change tone', tone: 'Change tone', translate: 'Translate'};
export function made(rev) {
  const src = SOURCES[rev.source] || rev.source;
  if (rev.source !== 'action' || !rev.action) return src;
  const name = ACTIONS[rev.action] || rev.action.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
  return `${src}: ${name}`;
}

// revision -> current, side by side, paragraph by paragraph (the revision on the left,
// the current text on the right); in a changed paragraph the removed words struck
// through on the left and the added ones underlined on the right; on a phone the two
// sides of a paragraph stack
function diffView(from, to, n) {
  const rows = diffParagraphs(from, to);
  const words = diffWords(from, to);
  if (!rows || !words) return h('p', {class: 'alert info', text: 'These texts differ too much to compare word by word. Show its text instead.'});
  const {added, removed} = diffCounts(words);
  if (!added && !removed) return h('p', {class: 'muted', text: 'Same text as the current one.'});
  const side = (parts, keep) => parts.filter(([op]) => op === '=' || op === keep)
    .map(([op, t]) => op === '=' ? t : h(op === '+' ? 'ins' : 'del', {text: t}));
  const cell = (label, content, cls) => h('td', {class: cls, 'data-label': label}, content);
  const left = `Revision ${n}`, right = 'Current text';
  const tr = (r) => {
    if (r.op === '=') return h('tr', {class: 'same'}, cell(left, r.a), cell(right, r.b));
    if (r.op === '-') return h('tr', {class: 'gone'}, cell(left, h('del', {text: r.a})), cell(right, h('span', {class: 'sr', text: '(removed)'}), 'empty'));
    if (r.op === '+') return h('tr', {class: 'come'}, cell(left, h('span', {class: 'sr', text: '(added)'}), 'empty'), cell(right, h('ins', {text: r.b})));
    if (!r.parts) return h('tr', {class: 'changed'}, cell(left, h('del', {text: r.a})), cell(right, h('ins', {text: r.b})));
    return h('tr', {class: 'changed'}, cell(left, side(r.parts, '-')), cell(right, side(r.parts, '+')));
  };
  return h('div', {},
    h('p', {class: 'small muted', text: `From revision ${n} to the current text: ${added} word${added === 1 ? '' : 's'} added (underlined), ${removed} removed (struck through).`}),
    h('div', {class: 'diff sbs-wrap', tabindex: '0', role: 'region', 'aria-label': `Changes from revision ${n} to the current text`},
      h('table', {class: 'sbs'},
        h('thead', {}, h('tr', {}, h('th', {scope: 'col', text: left}), h('th', {scope: 'col', text: right}))),
        h('tbody', {}, rows.map(tr)))));
}
