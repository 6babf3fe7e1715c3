// lib.mjs — what the browser tests share: the real inkwell binary started on a free
// loopback port with a temporary data directory (and, on the PostgreSQL run, a fresh
// database), API calls to it, and Debian's Chromium driven by playwright-core (never a
// downloaded browser), with every console error and page error of a page collected.
import assert from 'node:assert/strict';
import {spawn, execFileSync} from 'node:child_process';
import {randomUUID} from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {chromium} from 'playwright-core';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = process.env.INKWELL_BIN || path.join(ROOT, 'build/inkwell');
export const BACKEND = process.env.INKWELL_TEST_BACKEND || 'sqlite';
export const SHOTS = path.resolve(ROOT, process.env.BUILD || 'build', 'screenshots');
export const WEB_DIR = path.join(ROOT, 'web');
const LOGDIR = process.env.INKWELL_TEST_LOGDIR || os.tmpdir();

// Tests and time (docs/testing.md): no verdict may depend on the machine's speed. SLOW is
// how much slower than a plain build the server may run here (3 for a sanitizer build,
// as in tests/http/harness.py; INKWELL_TEST_SLOW overrides it): test delays that must
// outlast the browser's own steps and the bounds that only catch hangs are scaled by it.
function sanitized(bin) {
  try {
    const data = fs.readFileSync(bin);
    return data.includes('__asan_init') || data.includes('__ubsan_handle');
  } catch { return false; }
}
export const SLOW = Number(process.env.INKWELL_TEST_SLOW) || (sanitized(BIN) ? 3 : 1);
export const slow = (ms) => ms * SLOW;
const CHROMIUM = process.env.INKWELL_TEST_CHROMIUM || '/usr/bin/chromium';

// Every secret a browser test used or was given — keys, passwords, session ids, webhook
// and client secrets — is kept in LOGDIR/secrets-web-PID.txt, as the HTTP harness keeps
// its own: tests/secrets_check.py then greps every server log of the run for each
// (issue 34: no secret in a log). Short values could match ordinary words: left out.
const SECRETS = path.join(LOGDIR, `secrets-web-${process.pid}.txt`);
const SECRET_FIELDS = new Set(['key', 'password', 'new_password', 'current_password', 'old_password',
  'secret', 'client_secret', 'token', 'session']);
const SESSION_COOKIES = new Set(['inkwell_session', '__Host-inkwell_session']);
const secretsSeen = new Set();
export function recordSecret(v) {
  if (typeof v !== 'string' || v.length < 12 || v.includes('\n') || secretsSeen.has(v)) return;
  secretsSeen.add(v);
  fs.appendFileSync(SECRETS, v + '\n');
}
function recordSecretsOf(v) { // the values of secret-named fields anywhere in a JSON value
  if (Array.isArray(v)) v.forEach(recordSecretsOf);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) (SECRET_FIELDS.has(k) && typeof x === 'string' ? recordSecret(x) : recordSecretsOf(x));
  }
}
function recordSecretsOfBody(body) { // a form or JSON request body
  if (!body) return;
  try { recordSecretsOf(JSON.parse(body)); return; } catch { /* a form */ }
  for (const [k, x] of new URLSearchParams(body)) if (SECRET_FIELDS.has(k)) recordSecret(x);
}
function recordSecretsOfHeaders(pairs) { // [[name, value]]: a bearer key, session cookies
  for (const [name, value] of pairs) {
    const n = name.toLowerCase();
    if (n === 'authorization' && value.startsWith('Bearer ')) recordSecret(value.slice(7));
    if (n === 'cookie' || n === 'set-cookie') {
      for (const part of value.split(/[;\n]/)) {
        const [k, ...x] = part.trim().split('=');
        if (SESSION_COOKIES.has(k)) recordSecret(x.join('='));
      }
    }
  }
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const {port} = s.address(); s.close(() => resolve(port)); });
    s.on('error', reject);
  });
}

function pgDatabase() {
  const url = process.env.INKWELL_TEST_PG_URL;
  if (!url) throw new Error('INKWELL_TEST_BACKEND=postgres needs INKWELL_TEST_PG_URL');
  const name = 'w_' + Math.random().toString(16).slice(2, 14);
  execFileSync('psql', [url, '-qAtc', `CREATE DATABASE ${name}`]);
  return url.replace(/\/[^/]*$/, '/' + name);
}

export class Server {
  constructor(...args) {
    this.args = args;
    this.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'inkwell-web-'));
    this.database = BACKEND === 'postgres' ? pgDatabase() : null;
  }

  storage() { return ['--data-dir', this.dataDir, ...(this.database ? ['--database', this.database] : [])]; }

  cli(...args) {
    const out = execFileSync(BIN, [...args, ...this.storage()], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']});
    for (const k of out.match(/ink_[A-Za-z0-9_-]+/g) || []) recordSecret(k);
    return out;
  }

  key(user) { return this.cli('key', 'create', '--user', user).trim(); }

  // the id of the newest key of user (from `inkwell key list`)
  keyId(user) {
    const lines = this.cli('key', 'list').split('\n').filter((l) => l.split(/\s+/).includes(user));
    return lines.at(-1).trim().split(/\s+/)[0];
  }

  // port: one chosen before (a redirect URI names it); else the server binds port 0 and
  // its log says the port the kernel gave it (a port picked here and bound later could be
  // taken in between by another suite's process: tests/run.sh runs suites side by side)
  async start(port) {
    this.port = port || 0;
    this.logPath = path.join(LOGDIR, `web-server-${port || randomUUID().slice(0, 8)}.log`);
    const log = fs.openSync(this.logPath, 'w');
    const given = this.args.indexOf('--oidc-client-secret');
    if (given >= 0) recordSecret(this.args[given + 1]);
    recordSecret(process.env.INKWELL_OIDC_CLIENT_SECRET);
    const args = ['serve', '--listen', `127.0.0.1:${this.port}`, ...this.storage(),
      ...(this.args.includes('--rate-limit') ? [] : ['--rate-limit', '1000000']), ...this.args];
    // leaks inside third-party libraries (fontconfig, cairo) that the sanitizer build
    // would report are suppressed as in the black-box suite (tests/lsan.supp)
    let lsan = process.env.LSAN_OPTIONS || '';
    if (!lsan.includes('suppressions=')) lsan = [lsan, `suppressions=${path.join(ROOT, 'tests/lsan.supp')}`].filter(Boolean).join(':');
    this.proc = spawn(BIN, args, {stdio: ['ignore', log, log], env: {...process.env, LSAN_OPTIONS: lsan}});
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, sig) => resolve(code ?? sig)));
    for (let i = 0; i < 300 * SLOW; i++) {
      if (this.proc.exitCode !== null) throw new Error(`server exited: ${fs.readFileSync(this.logPath, 'utf8').slice(-2000)}`);
      if (!this.port) {
        const m = fs.readFileSync(this.logPath, 'utf8').match(/inkwell listening on .* \(port (\d+)\)/);
        if (m) this.port = Number(m[1]);
      }
      this.base = `http://127.0.0.1:${this.port}`;
      if (this.port) try { if ((await fetch(this.base + '/healthz')).ok) return this; } catch { /* not yet */ }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('server did not start');
  }

  async stop() {
    if (!this.proc || this.proc.exitCode !== null) return;
    this.proc.kill('SIGTERM');
    const code = await this.exited;
    const text = fs.readFileSync(this.logPath, 'utf8');
    if (/ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer/.test(text)) throw new Error(`sanitizer report in ${this.logPath}`);
    if (code !== 0) throw new Error(`server exited with ${code}; see ${this.logPath}`);
  }

  // an API call: {status, headers, json}
  async api(method, p, key, body, headers = {}) {
    const h = {...headers};
    if (key) h.Authorization = `Bearer ${key}`;
    let payload;
    if (body) { payload = new URLSearchParams(body).toString(); h['Content-Type'] = 'application/x-www-form-urlencoded'; }
    recordSecretsOfHeaders(Object.entries(h));
    recordSecretsOfBody(payload);
    const res = await fetch(this.base + '/api/v1' + p, {method, headers: h, body: payload});
    const text = await res.text();
    let json = null;
    try { json = JSON.parse(text); } catch { /* not JSON */ }
    recordSecretsOf(json);
    recordSecretsOfHeaders([...res.headers]);
    return {status: res.status, headers: res.headers, json, text};
  }
}

export async function launch() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inkwell-chromium-'));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM, headless: true, viewport: {width: 1280, height: 800},
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-default-apps', '--no-default-browser-check'],
  });
  return {ctx, close: async () => { await ctx.close(); fs.rmSync(dir, {recursive: true, force: true}); }};
}

// A new page whose console errors, page errors and dialogs are collected. allow(re)
// lets through the errors a test provokes on purpose (a refused key's 401 is logged
// by Chromium as "Failed to load resource ... 401"); check() fails on any other.
// withPage for a test file whose browser is getBrowser()'s (set in its before()): runs
// fn(page) on a new page, then requires that no console error was logged; the page is
// closed either way.
export function pageRunner(getBrowser) {
  return async (fn) => {
    const page = await newPage(getBrowser().ctx);
    try {
      await fn(page);
      assert.deepEqual(page.consoleErrors(), [], 'console errors on the page');
    } finally {
      await page.close();
    }
  };
}

export async function newPage(ctx) {
  await ctx.clearCookies(); // each test starts signed out (a session is the context's: every tab shares it)
  const page = await ctx.newPage();
  page.setDefaultTimeout(slow(30000)); // waits for an event: the bound only catches a hang
  const errors = [], allowed = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('dialog', (d) => { errors.push(`dialog: ${d.type()} ${d.message()}`); d.dismiss().catch(() => {}); });
  // the secrets the page sends and is given (its keys, typed passwords, session cookies,
  // a webhook's secret shown once) for tests/secrets_check.py
  page.on('request', (r) => {
    recordSecretsOfHeaders(Object.entries(r.headers()));
    try { recordSecretsOfBody(r.postData()); } catch { /* a body that is not text */ }
  });
  page.on('response', async (r) => {
    try {
      recordSecretsOfHeaders((await r.headersArray()).map((x) => [x.name, x.value]));
      if ((r.headers()['content-type'] || '').startsWith('application/json')) recordSecretsOf(await r.json());
    } catch { /* a page closed meanwhile, a body already gone */ }
  });
  page.allow = (re) => allowed.push(re);
  page.consoleErrors = () => errors.filter((e) => !allowed.some((re) => re.test(e)));
  return page;
}

export async function signIn(page, srv, key) {
  await page.goto(srv.base + '/#key=' + encodeURIComponent(key));
  await page.waitForSelector('h1:text("Documents")');
}

// A session for key in the page's browser context (API.md §21: the cookie, shared by
// every tab), made by the page itself as the app does; the page must be on the server's
// origin. And its end.
export async function useKey(page, key) {
  const status = await page.evaluate(async (k) => {
    await fetch('/api/v1/session/csrf');
    const t = decodeURIComponent(document.cookie.match(/XSRF-TOKEN=([^;]*)/)[1]);
    const r = await fetch('/api/v1/session', {method: 'POST', body: 'key=' + encodeURIComponent(k),
      headers: {'X-XSRF-TOKEN': t, 'Content-Type': 'application/x-www-form-urlencoded'}});
    return r.status;
  }, key);
  if (status !== 200) throw new Error(`sign-in with a key: ${status}`);
}

export async function useNoSession(page) {
  await page.evaluate(() => fetch('/api/v1/session', {method: 'DELETE'}));
}

// True when the page's storage (local or session) holds secret anywhere.
export async function stored(page, secret) {
  return page.evaluate((x) => [localStorage, sessionStorage].some((st) =>
    Object.keys(st).some((k) => k.includes(x) || (st.getItem(k) || '').includes(x))), secret);
}

// The status of GET /api/v1/me as the page's cookies make it.
export async function meStatus(page) {
  return page.evaluate(() => fetch('/api/v1/me').then((r) => r.status));
}

export async function shot(page, name) {
  fs.mkdirSync(SHOTS, {recursive: true});
  await page.screenshot({path: path.join(SHOTS, name + '.png'), fullPage: false});
}

// The document editor (web/edit.js, CodeMirror 6): its text, and replacing it as typing
// would (the editor must be loaded: .editor-host[data-ready]).
export async function editorText(page) {
  await page.waitForSelector('.editor-host[data-ready] .cm-content');
  return page.evaluate(() => document.querySelector('.editor-host').editorView.state.doc.toString());
}
export async function fillEditor(page, text) {
  await page.waitForSelector('.editor-host[data-ready] .cm-content');
  // the editor's own Select all (a keystroke it handles at once), then the text as typed
  await page.focus('.editor-host .cm-content');
  await page.keyboard.press('Control+a');
  await page.waitForFunction(() => { const v = document.querySelector('.editor-host').editorView; const s = v.state.selection.main; return s.from === 0 && s.to === v.state.doc.length; });
  if (text) await page.keyboard.insertText(text); else await page.keyboard.press('Delete');
  await page.waitForFunction((t) => document.querySelector('.editor-host').editorView.state.doc.toString() === t, text);
}
