// oidc.test.mjs — single sign-on in Chromium (API.md §21, issue 34): against a real
// OpenID provider (oidc-provider from the npm registry, tests/oidc/provider.mjs, on
// 127.0.0.1), a person clicks "Sign in with …" on inkwell's sign-in page, fills the
// provider's own sign-in page and lands in the web app signed in as the user an admin
// linked to that subject; the sign-in page of a server without single sign-on shows no
// such button.
import {after, before, test} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync, spawn} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import {freePort, launch, meStatus, newPage, ROOT, Server, shot} from './lib.mjs';

const OIDC = path.join(ROOT, 'tests/oidc');
const CLIENT_ID = 'inkwell-test', CLIENT_SECRET = 'oidc-web-test-client-secret-8e2f';
let provider, srv, plain, browser, issuer;

// oidc-provider on a free port, accepting srv's callback; resolves when it listens
async function startProvider(callback) {
  if (!fs.existsSync(path.join(OIDC, 'node_modules/oidc-provider/package.json')))
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {cwd: OIDC});
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  const p = spawn('node', [path.join(OIDC, 'provider.mjs')], {stdio: ['ignore', 'pipe', 'inherit'],
    env: {...process.env, OIDC_PORT: String(port), OIDC_CLIENT_ID: CLIENT_ID,
      OIDC_CLIENT_SECRET: CLIENT_SECRET, OIDC_REDIRECT_URIS: callback}});
  const lines = readline.createInterface({input: p.stdout});
  await new Promise((resolve, reject) => {
    lines.on('line', (l) => { if (l.startsWith('ready ')) resolve(); });
    p.on('exit', (code) => reject(new Error(`oidc-provider exited (${code})`)));
  });
  return p;
}

before(async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  provider = await startProvider(`${base}/auth/oidc/callback`);
  srv = new Server('--oidc-issuer', issuer, '--oidc-client-id', CLIENT_ID, '--public-url', base);
  process.env.INKWELL_OIDC_CLIENT_SECRET = CLIENT_SECRET; // by the environment, as documented
  await srv.start(port);
  delete process.env.INKWELL_OIDC_CLIENT_SECRET;
  plain = await new Server().start();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await srv?.stop();
  await plain?.stop();
  provider?.kill();
  for (const s of [srv, plain]) if (s) assert.ok(!fs.readFileSync(s.logPath, 'utf8').includes(CLIENT_SECRET));
});

test('"Sign in with …" goes through the provider\'s own page and lands signed in', async () => {
  srv.cli('user', 'create', 'wendy');
  const admin = srv.cli('key', 'create', '--user', 'root', '--scope', 'admin').trim();
  const users = await (await fetch(`${srv.base}/api/v1/admin/users?per_page=100`,
    {headers: {Authorization: `Bearer ${admin}`}})).json();
  const wendy = users.data.find((u) => u.name === 'wendy');
  const r = await fetch(`${srv.base}/api/v1/admin/users/${wendy.id}`, {method: 'PATCH',
    headers: {Authorization: `Bearer ${admin}`, 'Content-Type': 'application/x-www-form-urlencoded'},
    body: 'oidc_subject=wendy-at-idp'});
  assert.equal(r.status, 200);

  const page = await newPage(browser.ctx);
  try {
    await page.goto(srv.base + '/#/signin');
    const link = page.getByRole('link', {name: 'Sign in with 127.0.0.1'});
    await link.waitFor();
    await shot(page, 'oidc-signin');
    await link.click();
    // the provider's own sign-in page (devInteractions)
    await page.waitForURL((u) => u.href.startsWith(issuer));
    await page.fill('input[name=login]', 'wendy-at-idp');
    await page.fill('input[name=password]', 'any password at all');
    await page.click('button[type=submit]');
    // back in the web app, signed in
    await page.waitForURL((u) => u.href.startsWith(srv.base) && !u.hash.startsWith('#/signin'));
    await page.waitForSelector('h1:text("Documents")');
    assert.equal(await meStatus(page), 200);
    const me = await page.evaluate(() => fetch('/api/v1/me').then((x) => x.json()));
    assert.equal(me.data.user.name, 'wendy');
    assert.equal(me.data.auth, 'session');
    const cookies = await browser.ctx.cookies(srv.base);
    assert.ok(cookies.some((c) => c.name === 'inkwell_session' && c.httpOnly));
    assert.ok(!cookies.some((c) => c.name === 'inkwell_oidc'), 'the flow cookie outlived the callback');
    await shot(page, 'oidc-signed-in');
  } finally {
    await page.close();
  }
});

test('a person linked to no user gets the page that says why, and no session', async () => {
  const page = await newPage(browser.ctx);
  try {
    await page.goto(srv.base + '/#/signin');
    await page.getByRole('link', {name: 'Sign in with 127.0.0.1'}).click();
    await page.waitForURL((u) => u.href.startsWith(issuer));
    await page.fill('input[name=login]', 'nobody-here');
    await page.fill('input[name=password]', 'whatever it is');
    await page.click('button[type=submit]');
    await page.waitForSelector('h1:text("Sign-in failed")');
    assert.match(await page.textContent('#why'), /not allowed/);
    await shot(page, 'oidc-refused');
    await page.click('text=Back to sign-in'); // (the page itself may fetch nothing: its CSP)
    await page.waitForSelector('h1:text("Sign in")');
    assert.equal(await meStatus(page), 401);
  } finally {
    await page.close();
  }
});

test('without single sign-on the sign-in page has no such button', async () => {
  const page = await newPage(browser.ctx);
  try {
    await page.goto(plain.base + '/#/signin');
    await page.waitForSelector('h1:text("Sign in")');
    // the page asked /auth/oidc (a 404 here) before it could show a button
    await page.waitForLoadState('networkidle');
    assert.equal(await page.getByRole('link', {name: /^Sign in with/}).count(), 0);
  } finally {
    await page.close();
  }
});
