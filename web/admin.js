// admin.js — the pages of an admin key (API.md §19; such a key may use /admin only):
// users with their monthly quotas (create, change, delete), a user's keys (create with a
// scope and an expiry — the new key is shown once, on the page only, never in the address
// — and revoke) and everyone's usage for a month, as a table and as a bar chart of the
// same rows (the table is the accessible source; the chart is hidden from assistive
// technology). Pages are in the address
// (#/admin?page=2&period=2026-11, #/admin/users/7).
import {api} from './api.js';
import {clearErrors, confirmDialog, field, fill, formAlert, h, nextId, pager, select, showErrors, summary,
  timeEl, toast} from './ui.js';
import {hashFor, navigate} from './nav.js';

const SCOPES = [['write', 'Write (documents and images)'], ['read', 'Read only'], ['admin', 'Admin (this page only)']];
const num = (n) => (n === null || n === undefined ? 'No limit' : Number(n).toLocaleString('en'));
const month = () => new Date().toISOString().slice(0, 7);

// a table that scrolls sideways on a narrow screen (focusable, so the keyboard can too)
function table(label, head, rows) {
  return h('div', {class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': label},
    h('table', {}, h('thead', {}, h('tr', {}, head.map((t) => h('th', {scope: 'col', text: t})))),
      h('tbody', {}, rows)));
}

const quotaInputs = (u = {}) => [
  field('Words a month', h('input', {type: 'number', name: 'quota_words', min: '0', step: '1', value: u.quota_words ?? '', inputmode: 'numeric'}), {hint: 'Empty: no limit.'}),
  field('Images a month', h('input', {type: 'number', name: 'quota_images', min: '0', step: '1', value: u.quota_images ?? '', inputmode: 'numeric'}), {hint: 'Empty: no limit.'})];
const quotaBody = (form) => ({quota_words: form.elements.quota_words.value.trim(), quota_images: form.elements.quota_images.value.trim()});

// the usage rows as horizontal bars, one per user for words and one for images, each
// scaled to the largest use on the page, the number beside it ("N of L" with a quota, and
// a mark at the quota when it falls inside the scale); widths set through the CSSOM (the
// CSP forbids style attributes). Hidden from assistive technology: the table says it all.
function usageChart(period, rows) {
  const val = (x) => Number(x?.used ?? x) || 0;
  const lim = (x) => (x?.limit === null || x?.limit === undefined ? null : Number(x.limit));
  const group = (metric, label) => {
    const max = Math.max(1, ...rows.map((u) => val(u[metric])));
    const pct = (n) => `${Math.min(100, (n / max) * 100).toFixed(2)}%`;
    return h('div', {class: 'chart-group', 'data-metric': metric}, h('h3', {text: label}),
      rows.map((u) => {
        const used = val(u[metric]);
        const limit = lim(u[metric]);
        const bar = h('div', {class: 'bar' + (limit !== null && used >= limit ? ' over' : '') + (used > 0 ? ' some' : '')});
        bar.style.width = pct(used);
        const track = h('div', {class: 'bar-track'}, bar);
        if (limit !== null && limit <= max) {
          const mark = h('div', {class: 'bar-limit', title: `Quota ${num(limit)}`});
          mark.style.left = pct(limit);
          track.append(mark);
        }
        return h('div', {class: 'bar-row', 'data-user': u.user_id},
          h('span', {class: 'bar-name', text: u.name}),
          h('span', {class: 'bar-num', text: limit === null ? num(used) : `${num(used)} of ${num(limit)}`}), track);
      }));
  };
  return h('figure', {class: 'usage-chart', 'aria-hidden': 'true'},
    h('figcaption', {text: `Usage in ${period} as bars (the same numbers as the table)`}),
    group('words', 'Words'), group('images', 'Images'));
}

// async loader into a section: a message on error
async function into(sec, fn) {
  sec.setAttribute('aria-busy', 'true');
  try { await fn(); } catch (err) {
    if (err.status !== 401) fill(sec, h('div', {class: 'alert', role: 'alert', text: err.message}));
  } finally { sec.setAttribute('aria-busy', 'false'); }
}

export function adminView(root, route) {
  const page = Number(route.params.get('page')) || 1;
  const upage = Number(route.params.get('upage')) || 1;
  const period = /^\d{4}-\d{2}$/.test(route.params.get('period') || '') ? route.params.get('period') : month();
  const here = (p) => hashFor('/admin', {page: p.page ?? (page > 1 ? page : ''), upage: p.upage ?? (upage > 1 ? upage : ''), period: p.period ?? (period === month() ? '' : period)});
  const users = h('div', {'aria-live': 'polite'});
  const usage = h('div', {'aria-live': 'polite'});
  const name = h('input', {type: 'text', name: 'name', maxlength: '100', required: true, autocomplete: 'off'});
  const create = h('form', {class: 'panel block', novalidate: true, 'aria-labelledby': 'new-user'},
    h('h2', {id: 'new-user', text: 'New user'}), formAlert(), field('Name', name),
    h('div', {class: 'options'}, quotaInputs()),
    h('div', {class: 'actions'}, h('button', {type: 'submit', class: 'btn primary', text: 'Create user'})));
  const pick = h('input', {type: 'month', name: 'period', value: period, max: month()});
  root.append(h('h1', {text: 'Administration'}),
    h('p', {class: 'muted', text: 'You are signed in with an admin key: it manages users, quotas and keys, and sees no documents or images.'}),
    h('section', {class: 'panel block', 'aria-labelledby': 'users-h'}, h('h2', {id: 'users-h', text: 'Users'}), users));
  // New user and Usage go below the list once it is in, so that its rows, filling in,
  // push nothing down (Lighthouse's layout shift: 0.14 on a phone); Usage is last, so it
  // may fill in where it is
  const below = [create, h('section', {class: 'panel block', 'aria-labelledby': 'usage-h'}, h('h2', {id: 'usage-h', text: 'Usage'}),
    h('form', {class: 'inline', role: 'search', 'aria-label': 'Month'}, field('Month (UTC)', pick)), usage)];
  pick.addEventListener('change', () => { if (/^\d{4}-\d{2}$/.test(pick.value)) navigate(here({period: pick.value, upage: ''})); });

  into(users, async () => {
    const r = await api('GET', '/admin/users', {query: {page, per_page: 25}});
    fill(users, h('p', {class: 'summary', text: summary(r.meta, 'users') || 'No users yet.'}),
      r.data.length ? table('List of users', ['Name', 'Words a month', 'Images a month', 'Created'], r.data.map((u) => h('tr', {},
        h('td', {}, h('a', {href: `#/admin/users/${u.id}`, text: u.name})), h('td', {text: num(u.quota_words)}),
        h('td', {text: num(u.quota_images)}), h('td', {}, timeEl(u.created_at))))) : null,
      r.meta.last_page > 1 ? pager(r.meta, (p) => here({page: p})) : null);
  }).then(() => { if (users.isConnected) root.append(...below); });
  into(usage, async () => {
    const r = await api('GET', '/admin/usage', {query: {period, page: upage, per_page: 25}});
    const used = (u) => (u?.limit === null || u?.limit === undefined ? num(u?.used ?? u) : `${num(u.used)} of ${num(u.limit)}`);
    fill(usage, h('p', {class: 'summary', text: `${period}: ${summary(r.meta, 'users') || 'nobody yet.'}`}),
      r.data.length ? table(`Usage in ${period}`, ['User', 'Words', 'Images', 'Tokens (prompt / completion)'], r.data.map((u) => h('tr', {},
        h('td', {}, h('a', {href: `#/admin/users/${u.user_id}`, text: u.name})), h('td', {text: used(u.words)}), h('td', {text: used(u.images)}),
        h('td', {text: `${num(u.tokens?.prompt || 0)} / ${num(u.tokens?.completion || 0)}`})))) : null,
      r.data.length ? usageChart(period, r.data) : null,
      r.meta.last_page > 1 ? pager(r.meta, (p) => here({upage: p})) : null);
  });
  create.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors(create);
    try {
      const {data} = await api('POST', '/admin/users', {body: {name: name.value.trim(), ...quotaBody(create)}});
      toast(`User “${data.name}” created.`);
      navigate(`#/admin/users/${data.id}`);
    } catch (err) { if (err.status !== 401) showErrors(create, err); }
  });
  return {};
}

export function adminUserView(root, route) {
  const id = route.id;
  const back = h('p', {class: 'small'}, h('a', {href: '#/admin', text: '← All users'}));
  // the link back above the title from the start, as once the user is in (layout shift)
  const box = h('div', {'aria-busy': 'true'}, back, h('h1', {text: 'User'}));
  root.append(box);

  async function load() {
    await into(box, async () => {
      const [{data: u}, keys] = await Promise.all([api('GET', `/admin/users/${id}`), api('GET', `/admin/users/${id}/keys`, {query: {per_page: 100}})]);
      show(u, keys.data);
    });
  }

  function show(u, keys) {
    document.title = `${u.name} — inkwell`;
    const quota = h('form', {class: 'panel block', novalidate: true, 'aria-labelledby': 'q-h'},
      h('h2', {id: 'q-h', text: 'Monthly quotas'}), formAlert(), h('div', {class: 'options'}, quotaInputs(u)),
      h('div', {class: 'actions'}, h('button', {type: 'submit', class: 'btn primary', text: 'Save quotas'})));
    quota.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearErrors(quota);
      try {
        await api('PATCH', `/admin/users/${u.id}`, {body: quotaBody(quota)});
        // (the view is not drawn again: that would reset what was typed in the other
        // forms meanwhile — a key's scope chosen while the save was on its way)
        toast('Quotas saved.');
      } catch (err) { if (err.status !== 401) showErrors(quota, err); }
    });
    // role and password (API.md §21): a new password ends every session of the user
    const role = select('role', [['member', 'Member'], ['admin', 'Admin (may hold admin keys; signs in to both)']], u.role || 'member');
    const password = h('input', {type: 'password', name: 'password', autocomplete: 'new-password', minlength: '8'});
    const sign = h('form', {class: 'panel block', novalidate: true, 'aria-labelledby': 'r-h'},
      h('h2', {id: 'r-h', text: 'Role and password'}), formAlert(),
      h('div', {class: 'options'}, field('Role', role, {name: 'role'}),
        field('New password', password, {name: 'password', hint: '8 characters or more; empty: unchanged. Every session of the user ends.'})),
      h('div', {class: 'actions'}, h('button', {type: 'submit', class: 'btn primary', text: 'Save role and password'})));
    sign.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearErrors(sign);
      try {
        await api('PATCH', `/admin/users/${u.id}`, {body: {role: role.value, password: password.value || undefined}});
        password.value = '';
        toast('Role and password saved.');
      } catch (err) { if (err.status !== 401) showErrors(sign, err); }
    });
    const now = Date.now();
    const stateOf = (k) => (k.revoked ? 'Revoked' : k.expires_at && Date.parse(k.expires_at) <= now ? 'Expired' : 'Active');
    const keyTable = (ks) => (ks.length ? table('List of keys', ['Key', 'Scope', 'Expires', 'State', 'Created', 'Revoke'], ks.map((k) => h('tr', {},
      h('td', {}, h('code', {text: k.prefix + '…'})), h('td', {text: k.scope}),
      h('td', {}, k.expires_at ? timeEl(k.expires_at) : 'Never'), h('td', {text: stateOf(k)}), h('td', {}, timeEl(k.created_at)),
      h('td', {}, stateOf(k) === 'Active' ? h('button', {type: 'button', class: 'btn small danger', text: 'Revoke',
        'aria-label': `Revoke key ${k.prefix}`, onclick: () => revoke(k)}) : '—'))))
      : h('p', {class: 'muted', text: 'No keys yet.'}));
    const keysBox = h('div', {}, keyTable(keys));
    const scope = select('scope', SCOPES, 'write');
    const expires = h('input', {type: 'datetime-local', name: 'expires_at'});
    const made = h('div', {'aria-live': 'polite'});
    const newKey = h('form', {class: 'panel block', novalidate: true, 'aria-labelledby': 'k-h'},
      h('h2', {id: 'k-h', text: 'New key'}), formAlert(),
      h('div', {class: 'options'}, field('Scope', scope), field('Expires', expires, {hint: 'Your local time. Empty: never.'})),
      h('div', {class: 'actions'}, h('button', {type: 'submit', class: 'btn primary', text: 'Create key'})), made);
    newKey.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearErrors(newKey);
      let when = '';
      if (expires.value) {
        const d = new Date(expires.value);
        if (isNaN(d)) return showErrors(newKey, {fields: {expires_at: ['Enter a date and time.']}});
        when = d.toISOString();
      }
      try {
        const {data} = await api('POST', `/admin/users/${u.id}/keys`, {body: {scope: scope.value, expires_at: when || undefined}});
        // the key is shown here, once; it is in no address, history entry or storage
        const out = h('input', {type: 'text', readonly: true, value: data.key, class: 'mono', spellcheck: 'false'});
        const copy = h('button', {type: 'button', class: 'btn', text: 'Copy key', onclick: async () => {
          try { await navigator.clipboard.writeText(data.key); toast('Key copied.'); } catch { out.select(); toast('Select the key and copy it by hand.'); }
        }});
        fill(made, h('div', {class: 'alert warn new-key', role: 'status'},
          h('p', {}, h('strong', {text: 'The new key, shown this once: '}), 'copy it now and give it to the user; it cannot be shown again.'),
          field(`Key ${data.prefix}… (${data.scope})`, out), copy));
        const fresh = await api('GET', `/admin/users/${u.id}/keys`, {query: {per_page: 100}});
        fill(keysBox, keyTable(fresh.data));
      } catch (err) { if (err.status !== 401) showErrors(newKey, err); }
    });
    fill(box, back, h('h1', {text: u.name, tabindex: '-1'}),
      h('p', {class: 'muted'}, `User ${u.id}, created `, timeEl(u.created_at), '.'),
      quota, sign,
      h('section', {class: 'panel block', 'aria-labelledby': 'keys-h'}, h('h2', {id: 'keys-h', text: 'Keys'}), keysBox),
      newKey,
      h('section', {class: 'panel block', 'aria-labelledby': 'del-h'}, h('h2', {id: 'del-h', text: 'Delete this user'}),
        h('p', {class: 'muted', text: 'Removes the user with every key, document, image and picture. This cannot be undone.'}),
        h('button', {type: 'button', class: 'btn danger', text: 'Delete user', onclick: () => remove(u)})));
  }

  async function revoke(k) {
    if (!await confirmDialog('Revoke this key?', `The key ${k.prefix}… stops working at once, everywhere.`, 'Revoke')) return;
    try {
      await api('DELETE', `/admin/keys/${k.id}`);
      toast(`Key ${k.prefix}… revoked.`);
      load();
    } catch (err) { if (err.status !== 401) toast(err.message); }
  }

  async function remove(u) {
    if (!await confirmDialog('Delete this user?', `“${u.name}” and all their keys, documents and images will be deleted for good.`, 'Delete')) return;
    try {
      await api('DELETE', `/admin/users/${u.id}`);
      toast(`User “${u.name}” deleted.`);
      navigate('#/admin');
    } catch (err) { if (err.status !== 401) toast(err.message); }
  }

  load();
  return {};
}
