// signin.test.mjs — people sign in to the web app (API.md §21, issue 34) in Chromium: a
// name and a password (a wrong one said at its field), nothing secret in the page's
// storage, every tab signed in at once (a link opened in a new tab, sign-out in one
// tab reaching the other), the Account page's password change (the other sessions
// end), sign-out everywhere else, the user's own keys (shown once, with Copy; revoked),
// and a read-only session without a single write control — with no axe-core violation
// on the new pages, light and dark, desktop and phone.
import {after, before, describe, test} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import {createRequire} from 'node:module';
import {BIN, launch, meStatus, newPage, Server, shot, signIn, stored, pageRunner} from './lib.mjs';

const require = createRequire(import.meta.url);
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
let srv, browser;

before(async () => {
  srv = await new Server().start();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await srv?.stop();
});

const withPage = pageRunner(() => browser);

// a user with a password (the command line, the password on standard input)
function person(name, password) {
  srv.cli('user', 'create', name);
  execFileSync(BIN, ['user', 'set-password', name, ...srv.storage()], {input: password + '\n', stdio: ['pipe', 'pipe', 'pipe']});
}

async function signInWithPassword(page, name, password) {
  await page.goto(srv.base + '/#/signin');
  await page.fill('input[name=name]', name);
  await page.fill('input[name=password]', password);
  await page.press('input[name=password]', 'Enter');
  await page.waitForSelector('h1:text("Documents")');
}

describe('sign-in with a password', () => {
  test('a wrong password is said at its field; the right one signs in; nothing is stored in the page', () => withPage(async (page) => {
    page.allow(/status of 401/);
    person('ada', 'ada lovelace 1815');
    await page.goto(srv.base + '/');
    await page.waitForSelector('h1:text("Sign in")');
    await page.fill('input[name=name]', 'ada');
    await page.fill('input[name=password]', 'not her password');
    await page.press('input[name=password]', 'Enter');
    const err = page.locator('[data-field=password] .err');
    await err.waitFor();
    assert.match(await err.textContent(), /wrong/);
    await page.fill('input[name=password]', 'ada lovelace 1815');
    await page.press('input[name=password]', 'Enter');
    await page.waitForSelector('h1:text("Documents")');
    assert.equal(await page.textContent('#who'), 'ada');
    assert.equal(await stored(page, 'ada lovelace 1815'), false);
    assert.equal(await page.evaluate(() => localStorage.length + sessionStorage.length), 0, 'nothing in the storage at all');
    assert.doesNotMatch(await page.evaluate(() => document.cookie), /inkwell_session/, 'the session cookie is HttpOnly');
  }));

  test('every tab is signed in: a link opened in a new tab, and sign-out reaches the other tab', () => withPage(async (page) => {
    page.allow(/status of 401/);
    person('bea', 'bea password 1');
    await signInWithPassword(page, 'bea', 'bea password 1');
    const r = await page.evaluate(async () => {
      const t = decodeURIComponent(document.cookie.match(/XSRF-TOKEN=([^;]*)/)[1]);
      const res = await fetch('/api/v1/documents', {method: 'POST', headers: {'X-XSRF-TOKEN': t, 'Content-Type': 'application/x-www-form-urlencoded'},
        body: 'name=Tab+note&prompt=tea'});
      return (await res.json()).data.id;
    });
    const tab = await newPageSameContext();
    try {
      await tab.goto(srv.base + `/#/documents/${r}`);
      await tab.waitForSelector('h1:text("Tab note")');
      await page.click('#signout');
      await page.waitForSelector('h1:text("Sign in")');
      await tab.click('a[data-nav=images]');
      await tab.waitForSelector('h1:text("Sign in")');
      assert.match(tab.url(), /next=/);
    } finally { await tab.close(); }
  }));

  test('the Account page: change the password (other sessions end), sign out elsewhere, own keys shown once', () => withPage(async (page) => {
    person('cy', 'cy first password');
    await signInWithPassword(page, 'cy', 'cy first password');
    // another session of cy's (another browser): it ends with the change
    const other = await srv.api('GET', '/session/csrf');
    const xsrf = other.headers.get('set-cookie').match(/XSRF-TOKEN=([^;]*)/)[1];
    const made = await fetch(srv.base + '/api/v1/session', {method: 'POST', body: 'name=cy&password=cy+first+password',
      headers: {Cookie: `XSRF-TOKEN=${xsrf}`, 'X-XSRF-TOKEN': xsrf, 'Content-Type': 'application/x-www-form-urlencoded'}});
    assert.equal(made.status, 200);
    const otherCookie = made.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const otherMe = () => fetch(srv.base + '/api/v1/me', {headers: {Cookie: otherCookie}}).then((x) => x.status);
    assert.equal(await otherMe(), 200);
    await page.click('a[data-nav=account]');
    await page.waitForSelector('h1:text("Account")');
    await page.waitForSelector('section[aria-labelledby=sess-h] li');
    assert.equal(await page.locator('section[aria-labelledby=sess-h] li').count(), 2);
    await page.fill('input[name=current]', 'cy first password');
    await page.fill('input[name=password]', 'cy second password');
    await page.click('button:text("Change password")');
    await page.waitForSelector('.toast:has-text("Password changed")');
    assert.equal(await otherMe(), 401);
    assert.equal(await meStatus(page), 200, 'this session goes on');
    // a key of one's own: shown once with Copy, then revoked
    await page.fill('input[name=key_name]', 'laptop');
    await page.selectOption('section[aria-labelledby=keys-h] select[name=scope]', 'read');
    await page.click('button:text("Create key")');
    await page.waitForSelector('.new-key input');
    const key = await page.inputValue('.new-key input');
    assert.match(key, /^ink_/);
    assert.ok(await page.isVisible('button:text("Copy")'));
    assert.equal(await stored(page, key), false);
    assert.equal((await srv.api('GET', '/usage', key)).status, 200);
    await shot(page, 'account-keys');
    await page.click(`button[aria-label="Revoke key ${key.slice(0, 10)}"]`);
    await page.click('dialog button:text("Revoke")');
    await page.waitForSelector('td:text("Revoked")');
    assert.equal((await srv.api('GET', '/usage', key)).status, 401);
  }));

  test('a read-only session shows no write control', () => withPage(async (page) => {
    srv.cli('user', 'create', 'dee');
    const writer = srv.key('dee');
    const d = (await srv.api('POST', '/documents', writer, {name: 'Readable', prompt: 'tea'})).json.data;
    const reader = srv.cli('key', 'create', '--user', 'dee', '--scope', 'read').trim();
    await signIn(page, srv, reader);
    await page.waitForSelector('.card');
    assert.equal(await page.locator('[data-write]:visible').count(), 0, 'list');
    await page.goto(srv.base + `/#/documents/${d.id}`);
    await page.waitForSelector('h1:text("Readable")');
    assert.equal(await page.locator('[data-write]:visible').count(), 0, 'document');
    assert.ok(await page.isVisible('button:text("Copy text")'), 'reading is still offered');
    for (const b of ['Delete', 'Edit', 'Regenerate', 'Actions…']) assert.equal(await page.locator(`button:text-is("${b}"):visible`).count(), 0, b);
    await page.goto(srv.base + '/#/documents/new');
    await page.waitForURL(/#\/documents$/);
    await page.goto(srv.base + '/#/images');
    await page.waitForSelector('h1:text("Images")');
    assert.equal(await page.locator('[data-write]:visible').count(), 0, 'images');
  }));

  test('an admin sets a user\'s password on the Administration page; the user signs in with it', () => withPage(async (page) => {
    const admin = srv.cli('key', 'create', '--user', 'boss', '--scope', 'admin').trim();
    srv.cli('user', 'create', 'fay');
    const uid = (await srv.api('GET', '/admin/users?per_page=100', admin)).json.data.find((u) => u.name === 'fay').id;
    await page.goto(srv.base + '/#key=' + encodeURIComponent(admin));
    await page.waitForSelector('h1:text("Administration")');
    await page.goto(srv.base + `/#/admin/users/${uid}`);
    await page.waitForSelector('h1:text("fay")');
    assert.equal(await page.inputValue('form[aria-labelledby=r-h] select[name=role]'), 'member');
    await page.fill('form[aria-labelledby=r-h] input[name=password]', 'fay new password');
    await page.click('button:text("Save role and password")');
    await page.waitForSelector('.toast:has-text("Role and password saved.")');
    await page.click('#signout');
    await page.waitForSelector('h1:text("Sign in")');
    await signInWithPassword(page, 'fay', 'fay new password');
    assert.equal(await page.textContent('#who'), 'fay');
  }));

  test('no axe-core violation on the sign-in and Account pages, light and dark, desktop and phone', () => withPage(async (page) => {
    person('eve', 'eve password 1');
    const found = [];
    for (const [scheme, vp] of [['light', {width: 1280, height: 800}], ['dark', {width: 1280, height: 800}], ['light', {width: 390, height: 844}], ['dark', {width: 390, height: 844}]]) {
      await page.emulateMedia({colorScheme: scheme});
      await page.setViewportSize(vp);
      const form = vp.width < 600 ? 'phone' : 'desktop';
      await browser.ctx.clearCookies();
      for (const [name, hash] of [['signin-password', '#/signin'], ['account-signed-in', '#/account']]) {
        if (name === 'account-signed-in') await signInWithPassword(page, 'eve', 'eve password 1');
        await page.goto(srv.base + '/' + hash);
        await page.waitForSelector('#main h1');
        await page.waitForFunction(() => !document.querySelector('[aria-busy=true]'));
        if (name === 'account-signed-in') await page.waitForSelector('section[aria-labelledby=keys-h]');
        if (!await page.evaluate(() => typeof window.axe === 'object')) await page.evaluate(AXE);
        const r = await page.evaluate(() => window.axe.run(document, {resultTypes: ['violations']}));
        for (const v of r.violations) found.push(`${name} ${scheme} ${vp.width}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
        await shot(page, `${name}-${form}-${scheme}`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `${name} ${form}: ${overflow}px wider than the screen`);
      }
    }
    assert.deepEqual(found, []);
  }));
});

// A second tab of the same browser (its cookies: the same session).
async function newPageSameContext() {
  const tab = await browser.ctx.newPage();
  tab.setDefaultTimeout(30000);
  return tab;
}
