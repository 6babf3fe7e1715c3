// api.js — the only way the app talks to the server: inkwell's public API (/api/v1),
// with the key of the session. Errors become ApiError with words for people; a 401
// signs the user out (the key is wrong or was revoked). Streaming (§10) reads the
// body of a fetch as Server-Sent Events; a server that answers JSON instead is
// handled the same way (the plain path).

const KEY = 'inkwell.key';
const ROLE = 'inkwell.role'; // {role, name} of GET /me once known (keyRole), with the key's last characters
export const getKey = () => sessionStorage.getItem(KEY);
export const setKey = (k) => { sessionStorage.setItem(KEY, k); sessionStorage.removeItem(ROLE); };
export const dropKey = () => { sessionStorage.removeItem(KEY); sessionStorage.removeItem(ROLE); };

export class ApiError extends Error {
  constructor(status, message, fields, retryAfter) {
    super(message);
    this.status = status;
    this.fields = fields || null;
    this.retryAfter = retryAfter ?? null;
  }
}

// Fired on a 401 from any call: the app goes back to sign-in.
export const events = new EventTarget();

function errorFrom(status, body, headers) {
  const msg = body && body.message;
  if (status === 401) return new ApiError(401, 'Your API key was not accepted: it is wrong or has been revoked. Sign in again with a valid key.');
  if (status === 422 && msg && typeof msg === 'object') {
    const all = Object.values(msg).flat().join(' ');
    return new ApiError(422, all || 'Some fields are not valid.', msg);
  }
  if (status === 429) {
    const wait = parseInt(headers.get('Retry-After') || '', 10);
    const when = Number.isFinite(wait) ? `in ${wait} second${wait === 1 ? '' : 's'}` : 'in a moment';
    // near a monthly quota, a create waits for the user's other generations (§19): the
    // server's own words say so; any other 429 is the rate limit
    const quota = typeof msg === 'string' && /quota/.test(msg);
    return new ApiError(429, quota ? msg : `Too many requests: the server's rate limit was reached. Try again ${when}.`, null, Number.isFinite(wait) ? wait : null);
  }
  if (status === 404) return new ApiError(404, 'Not found: it may have been deleted.');
  if (status === 409) return new ApiError(409, typeof msg === 'string' ? msg : 'That cannot be done right now.');
  if (status === 502) return new ApiError(502, `Generation failed: ${typeof msg === 'string' ? msg : 'the generator did not answer.'}`);
  if (status === 503) return new ApiError(503, 'The server is unavailable for the moment (storage or generator). Try again shortly.');
  if (status >= 500) return new ApiError(status, `The server had a problem (error ${status}). Nothing was changed; try again.`);
  return new ApiError(status, typeof msg === 'string' ? msg : `The request was refused (error ${status}).`);
}

function request(method, path, {body, query, headers = {}, signal} = {}) {
  const key = getKey();
  const h = {Accept: 'application/json', ...headers};
  if (key) h.Authorization = `Bearer ${key}`;
  let url = '/api/v1' + path;
  if (query) {
    const q = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== ''));
    if ([...q].length) url += '?' + q;
  }
  let payload;
  if (body) {
    payload = new URLSearchParams(Object.entries(body).filter(([, v]) => v !== undefined && v !== null));
    h['Content-Type'] = 'application/x-www-form-urlencoded';
  }
  return fetch(url, {method, headers: h, body: payload, signal, cache: 'no-store'}).catch((e) => {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'Cannot reach the inkwell server. Check that it is running and try again.');
  });
}

async function check(res) {
  if (res.ok) return res;
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  const err = errorFrom(res.status, body, res.headers);
  if (res.status === 401) events.dispatchEvent(new CustomEvent('unauthenticated', {detail: err.message}));
  throw err;
}

export async function api(method, path, opts) {
  const res = await check(await request(method, path, opts));
  return res.json();
}

// A GET whose answer is a file (§12 export): the Response, or an ApiError.
export async function apiFile(path, query) {
  return check(await request('GET', path, {query, headers: {Accept: '*/*'}}));
}

// Generation as it happens (§10). handlers: record(rec), delta(text, offset),
// done(rec). Resolves with the final record; rejects with ApiError (502 on an error
// event). When the server answers JSON (no streaming), record/done are called with the
// record as it is; a queued/generating one is then polled until it ends.
export async function stream(method, path, {body, signal, ...handlers} = {}) {
  const headers = {Accept: 'text/event-stream'};
  const res = await check(await request(method, path, {body, headers, signal}));
  const type = res.headers.get('Content-Type') || '';
  if (!type.startsWith('text/event-stream')) {
    let rec = (await res.json()).data;
    handlers.record?.(rec);
    while (rec.state === 'queued' || rec.state === 'generating') {
      await sleep(700, signal);
      rec = (await api('GET', `/${path.split('/')[1]}/${rec.id}`, {signal})).data;
      handlers.record?.(rec);
    }
    if (rec.state === 'failed') throw new ApiError(502, `Generation failed: ${rec.error || 'no reason given.'}`);
    handlers.done?.(rec);
    return rec;
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '', event = '', data = [], id = null, final = null;
  const dispatch = () => {
    const name = event || 'message', text = data.join('\n');
    event = ''; data = [];
    if (!text && name === 'message') return;
    const obj = JSON.parse(text);
    if (name === 'record') handlers.record?.(obj);
    else if (name === 'delta') handlers.delta?.(obj.text, id === null ? null : Number(id));
    else if (name === 'done') { final = obj; handlers.done?.(obj); }
    else if (name === 'error') throw new ApiError(obj.status || 502, `Generation failed: ${obj.message}`);
  };
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buf += value;
    let nl;
    while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') { dispatch(); continue; }
      if (line.startsWith(':')) continue;
      const c = line.indexOf(':');
      const fieldName = c < 0 ? line : line.slice(0, c);
      let val = c < 0 ? '' : line.slice(c + 1);
      if (val.startsWith(' ')) val = val.slice(1);
      if (fieldName === 'event') event = val;
      else if (fieldName === 'data') data.push(val);
      else if (fieldName === 'id') id = val;
    }
  }
  if (!final) throw new ApiError(0, 'The connection ended before the generation finished. It goes on on the server: open the record to see it.');
  return final;
}

export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); reject(new DOMException('Aborted', 'AbortError')); }, {once: true});
  });
}

let templatesCache = null;
export async function templates() {
  templatesCache ||= api('GET', '/templates').then((r) => r.data).catch((e) => { templatesCache = null; throw e; });
  return templatesCache;
}
export const forgetTemplates = () => { templatesCache = null; role = null; };
export const dropTemplates = () => { templatesCache = null; };

// Who the key is (GET /me, any scope: docs/design.md): {role, name} — role 'admin' for an
// admin key (§19: every route but /admin answers it 403, so the app shows the admin
// pages instead), else 'user'; name is its user's. Asked once per key.
let role = null, roleTag = '';
export function keyRole() {
  const tag = ':' + (getKey() || '').slice(-8);
  const known = sessionStorage.getItem(ROLE);
  if (known?.endsWith(tag)) {
    try { return Promise.resolve(JSON.parse(known.slice(0, -tag.length))); } catch { /* asked again below */ }
  }
  if (roleTag !== tag) { role = null; roleTag = tag; }
  role ||= api('GET', '/me').then(({data}) => ({role: data.key.scope === 'admin' ? 'admin' : 'user', name: data.user.name}))
    .then((r) => { if (getKey()) sessionStorage.setItem(ROLE, JSON.stringify(r) + tag); return r; })
    .catch((e) => { role = null; throw e; });
  return role;
}

export const CREATIVITY = [[0, 'Repetitive'], [0.25, 'Deterministic'], [0.5, 'Original'], [0.75, 'Creative'], [1, 'Imaginative']];
export const RESOLUTIONS = [['1024x1024', 'Square (1024×1024)'], ['1792x1024', 'Landscape (1792×1024)'], ['1024x1792', 'Portrait (1024×1792)']];
// §12 export formats, as download buttons on a completed document.
// §17 writing options
export const TONES = ['neutral', 'friendly', 'professional', 'casual', 'persuasive', 'witty', 'formal', 'empathetic'].map((t) => [t, t[0].toUpperCase() + t.slice(1)]);
export const LENGTHS = [['short', 'Short'], ['medium', 'Medium'], ['long', 'Long']];
export const SOURCES = {generation: 'Generated', regeneration: 'Regenerated', action: 'Rewritten', edit: 'Edited', restore: 'Restored'};
export const EXPORT_FORMATS = [['md', 'Markdown'], ['txt', 'Text'], ['html', 'HTML'], ['docx', 'Word'], ['pdf', 'PDF']];
