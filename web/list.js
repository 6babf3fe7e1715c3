// list.js — a list page (documents or images): the filter bar, the results and the
// pager. Every filter is an API list parameter (§4) kept in the address, so the page
// can be reloaded, bookmarked and walked with back/forward; defaults are left out.
import {api} from './api.js';
import {add, clear, fill, field, h, pager, select, summary} from './ui.js';
import {hashFor, navigate, takeScroll} from './nav.js';
import {bulkBar} from './tags.js';

export const SORTS = [['id:desc', 'Newest'], ['id:asc', 'Oldest'], ['name:asc', 'Name A–Z'], ['name:desc', 'Name Z–A']];
export const FAVS = [['', 'All'], ['1', 'Favourites only'], ['0', 'Not favourites']];
export const PER_PAGE = [['10', '10'], ['25', '25'], ['50', '50'], ['100', '100']];

// cfg: {path: '/documents', title, noun, newLabel, filters: [{name, label, options|search, class}],
//       render(data, refresh) -> node, bulk: 'documents'|'images'}
// With bulk, each rendered li[data-id] (data-name) gets a checkbox, and the selection a
// bar of bulk actions (tags.js); the selection is the page's, cleared when it reloads.
export function listView(root, route, cfg) {
  let params = read(route.params, cfg);
  let seq = 0, timer = 0;
  const controls = {};
  const bar = h('form', {class: 'filters', role: 'search', 'aria-label': `Filter ${cfg.noun}`});
  for (const f of cfg.filters) {
    const ctl = f.options
      ? select(f.name, f.options, params[f.name] ?? '')
      : h('input', {type: 'search', name: f.name, value: params[f.name] || '', placeholder: f.placeholder || ''});
    controls[f.name] = ctl;
    bar.append(field(f.label, ctl, {class: f.class}));
  }
  const sort = select('sort', SORTS, `${params.sort_by || 'id'}:${params.sort || 'desc'}`);
  const per = select('per_page', PER_PAGE, params.per_page || '10');
  bar.append(field('Sort', sort), field('Per page', per));
  bar.append(h('button', {type: 'submit', class: 'sr', text: 'Search'}));

  const results = h('section', {'aria-live': 'polite', 'aria-busy': 'true', 'aria-label': cfg.title});
  // on a phone the filters fold away (open when one is in use); always open on a desktop
  const phone = matchMedia('(max-width: 700px)');
  const folded = phone.matches;
  const unfold = () => { if (!phone.matches) box.open = true; };
  phone.addEventListener('change', unfold);
  const active = cfg.filters.filter((f) => params[f.name] && params[f.name] !== f.def).length;
  const summaryText = h('summary', {text: active ? `Filters and sort (${active} in use)` : 'Filters and sort'});
  const box = h('details', {class: 'filters-box', open: !folded || active > 0}, summaryText, bar);
  const picked = new Map(); // id -> name
  const bulk = cfg.bulk ? bulkBar(cfg.bulk, cfg.noun, () => [...picked.keys()], () => [...picked.values()],
    async (deleted) => { await load(); if (deleted) results.querySelector('.summary, .empty')?.focus?.(); }) : null;
  root.append(
    h('div', {class: 'head'}, h('h1', {text: cfg.title}),
      h('a', {class: 'btn primary', href: `#${cfg.path}/new`, text: cfg.newLabel, 'data-write': ''})),
    box, bulk, results);

  // the checkboxes of the rendered list, and "Select all on this page"
  function selectable(list) {
    const boxes = [];
    const all = h('input', {type: 'checkbox', class: 'pick', name: 'select_all'});
    const sync = () => {
      const n = boxes.filter((b) => b.checked).length;
      all.checked = n > 0 && n === boxes.length;
      all.indeterminate = n > 0 && n < boxes.length;
      bulk.update(picked.size);
    };
    for (const li of list.querySelectorAll('li[data-id]')) {
      const id = Number(li.dataset.id);
      const cb = h('input', {type: 'checkbox', class: 'pick', name: 'select', value: String(id),
        'aria-label': `Select “${li.dataset.name}”`, 'data-write': cfg.bulk === 'images' ? '' : null});
      cb.addEventListener('change', () => { if (cb.checked) picked.set(id, li.dataset.name); else picked.delete(id); sync(); });
      boxes.push(cb);
      li.prepend(cb);
    }
    all.addEventListener('change', () => {
      const on = all.checked; // (each box's change updates all)
      for (const b of boxes) { b.checked = on; b.dispatchEvent(new Event('change')); }
    });
    return h('label', {class: 'pick-all', 'data-write': cfg.bulk === 'images' ? '' : null}, all, 'Select all on this page');
  }

  // the form's values as API parameters (defaults dropped, page back to 1)
  const fromForm = () => {
    const p = {};
    for (const f of cfg.filters) p[f.name] = controls[f.name].value.trim();
    const [sb, so] = sort.value.split(':');
    if (sb !== 'id') p.sort_by = sb;
    if (so !== 'desc') p.sort = so;
    if (per.value !== '10') p.per_page = per.value;
    for (const f of cfg.filters) if (f.def !== undefined && p[f.name] === f.def) delete p[f.name];
    return p;
  };
  const go = (replace) => { clearTimeout(timer); navigate(hashFor(cfg.path, fromForm()), {replace}); };
  bar.addEventListener('change', (e) => { if (e.target.type !== 'search') go(false); });
  bar.addEventListener('submit', (e) => { e.preventDefault(); go(false); });
  bar.addEventListener('input', (e) => {
    if (e.target.type !== 'search') return;
    clearTimeout(timer);
    timer = setTimeout(() => go(true), 400);
  });

  // paged: another page of the list was asked for (Next, Previous): the list is shown
  // from its top and the focus, which was on the link just replaced, goes to the summary
  async function load(paged = false) {
    const mine = ++seq;
    results.setAttribute('aria-busy', 'true');
    picked.clear();
    bulk?.update(0);
    try {
      const data = await api('GET', cfg.path, {query: params});
      if (mine !== seq) return;
      clear(results);
      const p = Number(params.page || 1);
      if (data.meta.last_page < p && data.meta.total > 0) {
        add(results, h('p', {class: 'empty', text: `There is no page ${p}.`}),
          h('p', {class: 'empty'}, h('a', {href: hashFor(cfg.path, {...params, page: data.meta.last_page}), text: 'Go to the last page'})));
      } else if (!data.data.length) {
        const filtered = Object.keys(params).some((k) => !['sort', 'sort_by', 'per_page', 'page'].includes(k));
        add(results, h('p', {class: 'empty', text: filtered ? `No ${cfg.noun} match these filters.` : `No ${cfg.noun} yet.`}));
      } else {
        const list = cfg.render(data, load);
        add(results, h('div', {class: 'summary-line'}, h('p', {class: 'summary', tabindex: '-1', text: summary(data.meta, cfg.noun)}),
          cfg.bulk ? selectable(list) : null), list);
        if (data.meta.last_page > 1) add(results, pager(data.meta, (n) => hashFor(cfg.path, {...params, page: n === 1 ? undefined : n})));
      }
      // back to an entry seen before: where it was; another page: its top
      const y = takeScroll();
      if (y !== null) restore(y);
      else if (paged) window.scrollTo(0, 0);
      if (paged && !root.contains(document.activeElement)) (results.querySelector('.summary') || root.querySelector('h1'))?.focus({preventScroll: true});
    } catch (err) {
      if (mine !== seq || err.status === 401) return;
      const retry = h('button', {type: 'button', class: 'btn', text: 'Try again', onclick: load});
      fill(results, h('div', {class: 'alert', role: 'alert'}, h('p', {text: err.message}), retry));
    } finally {
      if (mine === seq) results.setAttribute('aria-busy', 'false');
    }
  }
  load();

  return {
    update(r) {
      const before = params.page || '1';
      params = read(r.params, cfg);
      for (const f of cfg.filters) {
        const v = params[f.name] ?? '';
        if (!(controls[f.name] === document.activeElement && f.options === undefined)) controls[f.name].value = v;
      }
      const n = cfg.filters.filter((f) => params[f.name] && params[f.name] !== f.def).length;
      summaryText.textContent = n ? `Filters and sort (${n} in use)` : 'Filters and sort';
      sort.value = `${params.sort_by || 'id'}:${params.sort || 'desc'}`;
      per.value = params.per_page || '10';
      load(before !== (params.page || '1'));
    },
    unmount() { clearTimeout(timer); seq++; phone.removeEventListener('change', unfold); },
  };
}

// Scrolls to y; while the page is not yet tall enough (layout still settling), tries
// again on the next frames, for at most a second.
function restore(y, until = performance.now() + 1000) {
  window.scrollTo(0, y);
  if (Math.abs(window.scrollY - y) > 1 && performance.now() < until) requestAnimationFrame(() => restore(y, until));
}

// The address's parameters that this list knows (others are ignored).
function read(sp, cfg) {
  const known = [...cfg.filters.map((f) => f.name), 'sort_by', 'sort', 'per_page', 'page'];
  const p = {};
  for (const k of known) if (sp.get(k)) p[k] = sp.get(k);
  return p;
}
