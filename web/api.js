// api.js — the only way the app talks to the server: inkwell's public API (/api/v1),
// signed in by the session cookie (API.md §21: HttpOnly, so no script reads it; every
// tab of the browser shares it). Nothing secret is kept in the page's storage: a change
// sends the XSRF-TOKEN cookie's value back in X-XSRF-TOKEN, as the server asks. Errors
// become ApiError with words for people; a 401 signs the user out (the session ended,
// or the key it was made from was revoked). Streaming (§10) reads the body of a fetch
// as Server-Sent Events; a server that answers JSON instead is handled the same way.

// The session's CSRF token, read at each change (another tab may have signed in again).
function xsrf() {
  const m = document.cookie.match(/(?:^|;\s*)(?:__Host-)?XSRF-TOKEN=([^;]*)/);
  return m ? decodeURIComponent(m[1]) : '';
}

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
  if (status === 401) return new ApiError(401, typeof msg === 'string' && msg !== 'Unauthenticated.' ? msg
    : 'You are signed out: your session ended, or the key it was made from was revoked. Sign in again.');
  if (status === 419) return new ApiError(419, 'This page was signed in by another tab or has expired: reload it and try again.');
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

function request(method, path, {body, query, headers = {}, signal, keepalive} = {}) {
  const h = {Accept: 'application/json', ...headers};
  if (method !== 'GET' && method !== 'HEAD') h['X-XSRF-TOKEN'] = xsrf();
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
  return fetch(url, {method, headers: h, body: payload, signal, keepalive, cache: 'no-store', credentials: 'same-origin'}).catch((e) => {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'Cannot reach the inkwell server. Check that it is running and try again.');
  });
}

async function check(res) {
  if (res.ok) return res;
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  const err = errorFrom(res.status, body, res.headers);
  if (res.status === 401) forgetMe();
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

// A POST whose answer is a file (§23's ZIP export): the Response, or an ApiError.
export async function apiPostFile(path, body) {
  return check(await request('POST', path, {body, headers: {Accept: '*/*'}}));
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
export const forgetTemplates = () => { templatesCache = null; forgetMe(); };
export const dropTemplates = () => { templatesCache = null; };

// Who is signed in (GET /me): {role, name, scope, auth, prefix, me} — role 'admin' for a
// session whose scope is admin only (a session made from an admin key: §19's admin
// pages only), else 'user'; admin true for an admin's own session (both). Asked once
// per page load and sign-in; nothing of it is stored.
let me = null, meTag = '';
export function forgetMe() { me = null; }
export function keyRole() {
  // a sign-in in another tab (or page) is a new session with a new token: ask again
  if (xsrf() !== meTag) { me = null; meTag = xsrf(); }
  me ||= api('GET', '/me').then(({data}) => ({
    role: data.scope === 'admin' && data.key ? 'admin' : 'user',
    admin: data.role === 'admin' && !data.key,
    name: data.user.name, scope: data.scope, auth: data.auth,
    prefix: data.key ? data.key.prefix : null, me: data,
  })).catch((e) => { me = null; throw e; });
  return me;
}
export const whoAmI = keyRole;

// Sign-in (API.md §21): the XSRF-TOKEN cookie first, then POST /session with it; the
// key (of a #key= link) or the password is forgotten as soon as this returns.
export async function signIn(fields) {
  const pre = await fetch('/api/v1/session/csrf', {cache: 'no-store', credentials: 'same-origin'}).catch(() => null);
  if (!pre) throw new ApiError(0, 'Cannot reach the inkwell server. Check that it is running and try again.');
  forgetMe();
  const res = await request('POST', '/session', {body: fields});
  if (!res.ok) {
    let body = null;
    try { body = await res.json(); } catch { /* not JSON */ }
    throw errorFrom(res.status, body, res.headers);
  }
  return res.json();
}

export async function signOut() {
  forgetMe();
  templatesCache = null;
  await fetch('/api/v1/session', {method: 'DELETE', cache: 'no-store', credentials: 'same-origin'}).catch(() => {});
}

export const CREATIVITY = [[0, 'Repetitive'], [0.25, 'Deterministic'], [0.5, 'Original'], [0.75, 'Creative'], [1, 'Imaginative']];
export const RESOLUTIONS = [['1024x1024', 'Square (1024×1024)'], ['1792x1024', 'Landscape (1792×1024)'], ['1024x1792', 'Portrait (1024×1792)']];
// §12 export formats, as download buttons on a completed document.
// §17 writing options
export const TONES = ['neutral', 'friendly', 'professional', 'casual', 'persuasive', 'witty', 'formal', 'empathetic'].map((t) => [t, t[0].toUpperCase() + t.slice(1)]);
export const LENGTHS = [['short', 'Short'], ['medium', 'Medium'], ['long', 'Long']];
export const SOURCES = {generation: 'Generated', regeneration: 'Regenerated', action: 'Rewritten', edit: 'Edited', restore: 'Restored'};
export const EXPORT_FORMATS = [['md', 'Markdown'], ['txt', 'Text'], ['html', 'HTML'], ['docx', 'Word'], ['pdf', 'PDF']];
