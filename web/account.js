// account.js — who is signed in and this month's usage (API.md §19, GET /usage): the
// header's meter (words and images used of the month's quota, refreshed on each page)
// and the Account page with both meters and the tokens the provider reported.
import {api, getKey, keyRole} from './api.js';
import {fill, h} from './ui.js';

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

export function accountView(root) {
  const box = h('div', {'aria-busy': 'true'});
  const key = getKey() || '';
  root.append(h('h1', {text: 'Account'}),
    h('section', {class: 'panel block', 'aria-label': 'Signed in'},
      h('p', {}, 'Signed in', h('span', {class: 'me'}), ' with the API key ', h('code', {text: key.slice(0, 10) + '…'}),
        ' (its first characters, as ', h('code', {text: 'inkwell key list'}), ' shows them).')), box);
  keyRole().then((me) => { const el = root.querySelector('.me'); if (el && me?.name) el.textContent = ` as ${me.name}`; }).catch(() => {});
  refreshMeter().then((u) => {
    if (!u) return fill(box, h('div', {class: 'alert', role: 'alert', text: 'The usage could not be loaded. Try again later.'}));
    fill(box, h('section', {class: 'panel block', 'aria-label': 'Usage'},
      h('p', {class: 'muted', text: `This month (${u.period}, UTC): what you generated counts against your quotas.`}),
      h('div', {class: 'usage'}, meter('Words', u.words, u.period), meter('Images', u.images, u.period)),
      h('p', {class: 'small muted', text: `Tokens reported by the AI provider: ${num(u.tokens?.prompt || 0)} in prompts, ${num(u.tokens?.completion || 0)} in completions.`})));
  }).finally(() => box.setAttribute('aria-busy', 'false'));
  return {};
}
