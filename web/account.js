// account.js — who is signed in and this month's usage (API.md §19, GET /usage): the
// header's meter (words and images used of the month's quota, refreshed on each page)
// and the Account page with both meters and the tokens the provider reported, the
// password, the user's sessions ("sign out everywhere else") and own keys (API.md §21).
import {api, keyRole} from './api.js';
import {confirmDialog, field, fill, formAlert, h, select, showErrors, timeEl, toast} from './ui.js';

const num = (n) => Number(n).toLocaleString('en');
const part = (u) => (u.limit === null || u.limit === undefined ? `${num(u.used)} (no limit)` : `${num(u.used)} of ${num(u.limit)}`);

// the header's summary: "Words 1,234 of 10,000 · Images 3 (no limit)"
export async function refreshMeter() {
  const el = document.getElementById('meter');
  try {
    const {data} = await api('GET', '/usage');
    el.textContent = `Words ${part(data.words)} · Images ${part(data.images)}`;
    el.title = `Used in ${data.period} (UTC month)`;
    return data;
  } catch { el.textContent = ''; return null; }
}

function meter(label, u, period) {
  const row = h('div', {class: 'usage-row'}, h('h2', {text: label}));
  if (u.limit === null || u.limit === undefined) {
    row.append(h('p', {class: 'big', text: `${num(u.used)} used`}), h('p', {class: 'muted small', text: `No monthly limit.`}));
    return row;
  }
  const full = u.used >= u.limit;
  const m = h('meter', {min: '0', max: String(Math.max(u.limit, 1)), low: String(u.limit * 0.8), high: String(u.limit * 0.95),
    optimum: '0', value: String(Math.min(u.used, u.limit)), 'aria-label': `${label} used in ${period}`});
  row.append(h('p', {class: 'big', text: `${num(u.used)} of ${num(u.limit)}`}), m,
    h('p', {class: full ? 'err' : 'muted small', text: full ? `The ${label.toLowerCase()} quota of this month is used up: new ones are refused until next month.`
      : `${num(u.limit - u.used)} left this month.`}));
  return row;
}

// The page is drawn top down, each part once its data is in: the usage (the box), then the
// password, sessions and keys together, appended below it only when the usage and both
// lists are loaded — so nothing on screen is pushed down by a part filling in above it
// (Lighthouse's layout shift: the page moved by 0.40 on a phone when the usage came in
// above the sessions and keys).
export function accountView(root) {
  const box = h('div', {'aria-busy': 'true'});
  const who = h('p', {}, 'Signed in', h('span', {class: 'me'}));
  root.append(h('h1', {text: 'Account'}), h('section', {class: 'panel block', 'aria-label': 'Signed in'}, who), box);
  const more = h('div');
  let usageIn;
  keyRole().then((me) => {
    who.querySelector('.me').textContent = me?.name ? ` as ${me.name}` : '';
    if (me?.prefix) who.append(' with the API key ', h('code', {text: me.prefix + '…'}),
      ' (its first characters, as ', h('code', {text: 'inkwell key list'}), ' shows them).');
    else who.append('.');
    if (me && me.role !== 'admin') {
      const sessions = sessionsPanel();
      const keys = keysPanel(me);
      fill(more, passwordPanel(() => sessions.reload()), sessions, keys);
      Promise.allSettled([usageIn, sessions.loaded, keys.loaded]).then(() => { if (box.isConnected) root.append(more); });
    }
  }).catch(() => {});
  usageIn = refreshMeter().then((u) => {
    if (!u) return fill(box, h('div', {class: 'alert', role: 'alert', text: 'The usage could not be loaded. Try again later.'}));
    fill(box, h('section', {class: 'panel block', 'aria-label': 'Usage'},
      h('p', {class: 'muted', text: `This month (${u.period}, UTC): what you generated counts against your quotas.`}),
      h('div', {class: 'usage'}, meter('Words', u.words, u.period), meter('Images', u.images, u.period)),
      h('p', {class: 'small muted', text: `Tokens reported by the AI provider: ${num(u.tokens?.prompt || 0)} in prompts, ${num(u.tokens?.completion || 0)} in completions.`})));
  }).finally(() => box.setAttribute('aria-busy', 'false'));
  return {};
}

// The password (PUT /me/password): every other session ends.
function passwordPanel(changed) {
  const current = h('input', {type: 'password', name: 'current', autocomplete: 'current-password', required: true});
  const next = h('input', {type: 'password', name: 'password', autocomplete: 'new-password', required: true, minlength: '8'});
  const btn = h('button', {type: 'submit', class: 'btn primary', text: 'Change password', 'data-write': ''});
  const form = h('form', {class: 'panel block', novalidate: true, 'aria-labelledby': 'pw-h'},
    h('h2', {id: 'pw-h', text: 'Password'}), formAlert(),
    field('Current password', current, {name: 'current'}),
    field('New password', next, {name: 'password', hint: '8 characters or more. Every other session of yours ends.'}),
    h('div', {class: 'actions'}, btn));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    btn.disabled = true;
    try {
      await api('PUT', '/me/password', {body: {current: current.value, password: next.value}});
      current.value = next.value = '';
      toast('Password changed. Your other sessions are signed out.');
      changed();
    } catch (err) { showErrors(form, err); } finally { btn.disabled = false; }
  });
  return form;
}

// The user's sessions (GET /me/sessions) and "sign out everywhere else".
function sessionsPanel() {
  const list = h('ul', {class: 'plain'});
  const btn = h('button', {type: 'button', class: 'btn', text: 'Sign out everywhere else', 'data-write': ''});
  const sec = h('section', {class: 'panel block', 'aria-labelledby': 'sess-h'},
    h('h2', {id: 'sess-h', text: 'Where you are signed in'}), list, h('div', {class: 'actions'}, btn));
  const load = () => api('GET', '/me/sessions', {query: {per_page: 100}}).then(({data}) => {
    fill(list, data.map((s) => h('li', {}, s.user_agent || 'Unknown browser', ' — since ', timeEl(s.created_at),
      s.current ? h('strong', {text: ' (this one)'}) : '')));
  }).catch(() => {});
  btn.addEventListener('click', async () => {
    if (!await confirmDialog('Sign out everywhere else?', 'Every other browser signed in as you is signed out.', 'Sign out')) return;
    try {
      const {data} = await api('DELETE', '/me/sessions');
      toast(`${data.ended} other session${data.ended === 1 ? '' : 's'} signed out.`);
      load();
    } catch (err) { toast(err.message); }
  });
  sec.loaded = load();
  sec.reload = load;
  return sec;
}

// The user's own keys (GET/POST /keys, DELETE /keys/{id}): a new key is shown once, with
// Copy; nothing of it is stored by the page.
function keysPanel(me) {
  const rows = h('tbody');
  const name = h('input', {type: 'text', name: 'key_name', maxlength: '100'});
  const scope = select('scope', [['write', 'Write (everything you do)'], ['read', 'Read only']], 'write');
  const btn = h('button', {type: 'submit', class: 'btn', text: 'Create key', 'data-write': ''});
  const shown = h('div', {class: 'new-key', hidden: true});
  const form = h('form', {novalidate: true, 'aria-label': 'New key'}, formAlert(),
    field('Name (for you)', name, {name: 'name'}), field('Scope', scope, {name: 'scope'}), h('div', {class: 'actions'}, btn));
  const sec = h('section', {class: 'panel block', 'aria-labelledby': 'keys-h'},
    h('h2', {id: 'keys-h', text: 'My API keys'}),
    h('p', {class: 'muted small', text: 'Keys let programs use inkwell as you. A key is shown once, when it is made.'}),
    h('div', {class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Key list'},
      h('table', {}, h('thead', {}, h('tr', {}, ['Name', 'Key', 'Scope', 'Made', 'State', 'Revoke'].map((t) => h('th', {scope: 'col', text: t})))), rows)),
    shown, form);
  const load = () => api('GET', '/keys', {query: {per_page: 100}}).then(({data}) => {
    fill(rows, data.map((k) => h('tr', {}, h('td', {text: k.name || '—'}), h('td', {}, h('code', {text: k.prefix + '…'})), h('td', {text: k.scope}),
      h('td', {}, timeEl(k.created_at)), h('td', {text: k.revoked ? 'Revoked' : 'Active'}),
      h('td', {}, k.revoked ? '' : h('button', {type: 'button', class: 'link', text: 'Revoke', 'data-write': '',
        'aria-label': `Revoke key ${k.prefix}`, onclick: async () => {
          if (!await confirmDialog('Revoke this key?', `Programs using ${k.prefix}… stop working at once.`, 'Revoke')) return;
          try { await api('DELETE', `/keys/${k.id}`); toast('Key revoked.'); load(); } catch (err) { toast(err.message); }
        }})))));
  }).catch(() => {});
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    btn.disabled = true;
    try {
      const {data} = await api('POST', '/keys', {body: {scope: scope.value, name: name.value}});
      const out = h('input', {type: 'text', readonly: true, value: data.key, name: 'new_key'});
      const copy = h('button', {type: 'button', class: 'btn', text: 'Copy', onclick: async () => {
        try { await navigator.clipboard.writeText(out.value); toast('Copied.'); } catch { out.select(); }
      }});
      fill(shown, h('div', {class: 'alert warn', role: 'status'},
        h('p', {}, h('strong', {text: 'Your new key, shown this once: '}), 'copy it now; it cannot be shown again.'),
        field(`Key ${data.name ? '“' + data.name + '” ' : ''}${data.prefix}… (${data.scope})`, out), copy));
      shown.hidden = false;
      name.value = '';
      load();
    } catch (err) { showErrors(form, err); } finally { btn.disabled = false; }
  });
  sec.loaded = load();
  return sec;
}
