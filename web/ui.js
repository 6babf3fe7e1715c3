// ui.js — DOM helpers. Every piece of data reaches the page as text (textContent,
// attribute values), never parsed as HTML: the app builds every element itself.

// h('a', {href: '#/x', class: 'btn', onclick: fn}, 'text', child, [more])
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'value') el.value = v;
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el) { el.replaceChildren(); return el; }
// add(el, ...) appends like h() does (null/false skipped, arrays flattened, strings as
// text); fill(el, ...) replaces the children.
export function add(el, ...children) { append(el, children); return el; }
export function fill(el, ...children) { return add(clear(el), ...children); }

let uid = 0;
export const nextId = (p) => `${p}-${++uid}`;

// A labelled control with its error slot: field('Name', input, {hint}) -> div.field
export function field(label, control, opts = {}) {
  control.id ||= nextId('f');
  const err = h('p', {class: 'err', id: control.id + '-err', hidden: true});
  const hint = opts.hint ? h('p', {class: 'hint', id: control.id + '-hint', text: opts.hint}) : null;
  if (hint) control.setAttribute('aria-describedby', hint.id);
  const wrap = h('div', {class: 'field' + (opts.class ? ' ' + opts.class : '')},
    h('label', {for: control.id, text: label}), control, hint, err);
  wrap.dataset.field = opts.name || control.name || '';
  return wrap;
}

// Shows the 422 messages of an ApiError at their fields inside form; the rest (or a
// non-field error) in the form's alert box. Returns the first invalid control.
export function showErrors(form, error) {
  clearErrors(form);
  const alert = form.querySelector('.form-alert');
  let first = null;
  const other = [];
  if (error && error.fields) {
    for (const [name, msgs] of Object.entries(error.fields)) {
      const wrap = form.querySelector(`[data-field="${CSS.escape(name)}"]`);
      const text = [].concat(msgs).join(' ');
      if (!wrap) { other.push(text); continue; }
      const err = wrap.querySelector(':scope > .err');
      const ctl = wrap.querySelector('input, textarea, select');
      err.textContent = text;
      err.hidden = false;
      if (ctl) {
        ctl.setAttribute('aria-invalid', 'true');
        ctl.setAttribute('aria-describedby', [err.id, ctl.getAttribute('aria-describedby')].filter(Boolean).join(' '));
        first ||= ctl;
      }
    }
  } else if (error) {
    other.push(error.message);
  }
  if (alert && other.length) {
    alert.textContent = other.join(' ');
    alert.hidden = false;
  }
  (first || (other.length ? alert : null))?.focus?.();
  return first;
}

export function clearErrors(form) {
  for (const e of form.querySelectorAll('.err')) { e.hidden = true; e.textContent = ''; }
  for (const c of form.querySelectorAll('[aria-invalid]')) {
    c.removeAttribute('aria-invalid');
    const d = (c.getAttribute('aria-describedby') || '').split(' ').filter((x) => !x.endsWith('-err'));
    if (d.length) c.setAttribute('aria-describedby', d.join(' ')); else c.removeAttribute('aria-describedby');
  }
  const alert = form.querySelector('.form-alert');
  if (alert) { alert.hidden = true; alert.textContent = ''; }
}

// The tab's title: "Page — inkwell".
export function setTitle(page) { document.title = page ? `${page} — inkwell` : 'inkwell'; }

export const formAlert = () => h('div', {class: 'alert form-alert', role: 'alert', tabindex: '-1', hidden: true});

export function toast(message) {
  const box = document.getElementById('toasts');
  const t = h('div', {class: 'toast', text: message});
  box.append(t);
  setTimeout(() => t.remove(), 4000);
}

export function option(value, label, selected) {
  return h('option', {value, text: label, selected: String(value) === String(selected)});
}

export function select(name, options, value, extra = {}) {
  return h('select', {name, ...extra}, options.map(([v, l]) => option(v, l, value)));
}

export function stateBadge(rec) {
  if (rec.state === 'completed') return null;
  const words = {queued: 'Queued', generating: 'Generating…', failed: 'Failed'};
  return h('span', {class: 'badge ' + rec.state, text: words[rec.state] || rec.state});
}

export function starButton(rec, onToggle, extraClass = '') {
  const b = h('button', {type: 'button', class: 'btn star ' + extraClass, 'data-write': '',
    'aria-pressed': String(!!rec.favorite), title: rec.favorite ? 'Remove from favourites' : 'Add to favourites'},
  h('span', {'aria-hidden': 'true', text: rec.favorite ? '★' : '☆'}),
  h('span', {class: 'sr', text: `Favourite: ${rec.name}`}));
  // busy, not disabled: a disabled button loses the focus (to <body>)
  b.addEventListener('click', async () => {
    if (b.getAttribute('aria-busy') === 'true') return;
    b.setAttribute('aria-busy', 'true');
    try {
      const fav = b.getAttribute('aria-pressed') !== 'true';
      await onToggle(fav);
      b.setAttribute('aria-pressed', String(fav));
      b.title = fav ? 'Remove from favourites' : 'Add to favourites';
      b.firstChild.textContent = fav ? '★' : '☆';
    } catch (err) {
      toast(err.message); // (a 401 has sent the user to sign-in already)
    } finally { b.removeAttribute('aria-busy'); }
  });
  return b;
}

export function fmtDate(s) {
  if (!s) return '';
  const d = new Date(s);
  return isNaN(d) ? s : d.toLocaleString(undefined, {dateStyle: 'medium', timeStyle: 'short'});
}

export function timeEl(s) { return h('time', {datetime: s, text: fmtDate(s)}); }

// A modal confirmation: resolves true when confirmed.
export function confirmDialog(title, text, confirmLabel) {
  return new Promise((resolve) => {
    const ok = h('button', {type: 'button', class: 'btn danger solid', text: confirmLabel});
    const cancel = h('button', {type: 'button', class: 'btn', text: 'Cancel'});
    const titleId = nextId('dlg');
    const dlg = h('dialog', {'aria-labelledby': titleId},
      h('h2', {id: titleId, text: title}), h('p', {text}), h('div', {class: 'actions'}, cancel, ok));
    const done = (v) => { dlg.close(); dlg.remove(); resolve(v); };
    ok.addEventListener('click', () => done(true));
    cancel.addEventListener('click', () => done(false));
    dlg.addEventListener('cancel', (e) => { e.preventDefault(); done(false); });
    document.body.append(dlg);
    dlg.showModal();
    cancel.focus();
  });
}

// Paging: "Showing 1–10 of 27" and Previous / Page x of y / Next.
export function pager(meta, hrefFor) {
  const cur = meta.current_page, last = meta.last_page;
  const link = (p, label, rel) => {
    const off = p < 1 || p > last || p === cur;
    return h('a', {class: 'btn', href: off ? null : hrefFor(p), rel, 'aria-disabled': off ? 'true' : null, text: label});
  };
  return h('nav', {class: 'pager', 'aria-label': 'Pages'},
    link(cur - 1, '← Previous', 'prev'),
    h('span', {class: 'muted', text: `Page ${cur} of ${last}`}),
    link(cur + 1, 'Next →', 'next'));
}

// "Showing 1–1 of 1 document": the noun without its "s" for one
export function summary(meta, noun) {
  if (!meta.total) return '';
  if (meta.total === 1) noun = noun.replace(/s$/, '');
  if (meta.from === null) return `No ${noun} on this page (${meta.total} in all).`;
  return `Showing ${meta.from}–${meta.to} of ${meta.total} ${noun}`;
}
