// writer.test.mjs — the writer tools of the web app in Chromium: tone, language and length
// on a new document (the server's 422s at their fields), Regenerate and Try again with the
// new text streaming in and the record's revision shown, the revisions panel (list, a
// revision's text, the word diff against the current text, restore), an image's
// Regenerate and its revisions as thumbnails, the usage meter and the Account page, and an
// admin key's pages (users, quotas, keys shown once and revoked, the month's usage) —
// with no axe-core violation on the new pages, light and dark, desktop and phone.
import {after, before, describe, test} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {createRequire} from 'node:module';
import {launch, Server, shot, meStatus, signIn, stored, useKey, useNoSession, SLOW, pageRunner} from './lib.mjs';
import {diffWords, tokens} from '../../web/diff.js';

const require = createRequire(import.meta.url);
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
let srv, slow, browser;

before(async () => {
  srv = await new Server('--builtin-fail-pattern', 'FAILNOW').start();
  // each generation sleeps 3 s (scaled by SLOW): the browser's steps fit in it
  slow = await new Server('--builtin-delay-ms', String(3000 * SLOW)).start();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await srv?.stop();
  await slow?.stop();
});

const withPage = pageRunner(() => browser);

const doc = async (s, key, fields) => (await s.api('POST', '/documents', key, {prompt: 'tea and focus', ...fields})).json.data;
const get = async (s, key, p) => (await s.api('GET', p, key)).json.data;
const fact = (page, name) => page.locator(`dl.facts dt:text-is("${name}") + dd`);
const errAt = (page, name) => page.locator(`[data-field="${name}"] > .err`);

describe('writing options', () => {
  test('tone, language and length on a new document, the 422s at their fields', () => withPage(async (page) => {
    page.allow(/status of 422/);
    const key = srv.key('opt');
    await signIn(page, srv, key);
    await page.goto(srv.base + '/#/documents/new');
    await page.waitForSelector('.picker-list label');
    const values = (n) => page.$$eval(`select[name=${n}] option`, (os) => os.map((o) => o.value));
    assert.deepEqual(await values('tone'), ['neutral', 'friendly', 'professional', 'casual', 'persuasive', 'witty', 'formal', 'empathetic']);
    assert.deepEqual(await values('length'), ['short', 'medium', 'long']);
    assert.equal(await page.inputValue('select[name=tone]'), 'neutral');
    assert.equal(await page.inputValue('select[name=length]'), 'medium');
    assert.equal(await page.inputValue('input[name=language]'), 'en');
    await page.fill('input[name=name]', 'Options');
    await page.fill('textarea[name=prompt]', 'green tea');
    // the builtin generator writes English only: the server's words at the field
    await page.fill('input[name=language]', 'de');
    await page.click('button:text("Write it")');
    await errAt(page, 'language').waitFor();
    assert.equal(await errAt(page, 'language').textContent(), 'The builtin generator writes English only.');
    assert.equal(await page.getAttribute('input[name=language]', 'aria-invalid'), 'true');
    // a tone outside the set (a stale page, say): the server's 422 at the tone field
    await page.fill('input[name=language]', 'en-GB');
    await page.evaluate(() => { const s = document.querySelector('select[name=tone]'); s.append(new Option('loud', 'loud')); s.value = 'loud'; });
    await page.click('button:text("Write it")');
    await errAt(page, 'tone').waitFor();
    assert.match(await errAt(page, 'tone').textContent(), /tone/i);
    assert.equal(await page.inputValue('input[name=name]'), 'Options', 'the form is kept');
    await page.selectOption('select[name=tone]', 'witty');
    await page.selectOption('select[name=length]', 'short');
    await page.click('button:text("Write it")');
    await page.waitForURL(/#\/documents\/\d+$/);
    await fact(page, 'Revision').waitFor();
    assert.equal(await fact(page, 'Tone').textContent(), 'Witty');
    assert.equal(await fact(page, 'Language').textContent(), 'en-GB');
    assert.equal(await fact(page, 'Length').textContent(), 'Short');
    assert.equal(await fact(page, 'Revision').textContent(), '1');
    const id = page.url().match(/(\d+)$/)[1];
    const d = await get(srv, key, `/documents/${id}`);
    assert.deepEqual([d.tone, d.language, d.length, d.revision], ['witty', 'en-GB', 'short', 1]);
  }));
});

describe('regenerate', () => {
  test('with other options, the new text streaming in and the revision shown', () => withPage(async (page) => {
    page.allow(/status of 422/);
    const key = slow.key('reg');
    const d = await doc(slow, key, {name: 'Again', template_id: '9', prompt: 'a blog post about green tea'});
    await signIn(page, slow, key);
    await page.goto(slow.base + `/#/documents/${d.id}`);
    await fact(page, 'Revision').waitFor();
    assert.equal(await fact(page, 'Revision').textContent(), '1');
    await page.click('button:text-is("Regenerate")');
    assert.equal(await page.inputValue('.regen textarea[name=prompt]'), 'a blog post about green tea');
    // a language the builtin generator does not write: the 422 at its field, nothing started
    await page.fill('.regen input[name=language]', 'fr');
    await page.click('.regen button[type=submit]');
    await page.locator('.regen [data-field="language"] > .err').waitFor();
    await page.fill('.regen input[name=language]', 'en');
    await page.selectOption('.regen select[name=tone]', 'formal');
    await page.selectOption('.regen select[name=length]', 'long');
    const answer = page.waitForResponse((r) => r.url().endsWith(`/documents/${d.id}/regenerate`));
    await page.click('.regen button[type=submit]');
    const res = await answer;
    assert.equal(res.status(), 200);
    assert.match(res.headers()['content-type'], /^text\/event-stream/);
    // being written again: the status and the text growing, the old text gone from view
    await page.waitForSelector('.live.status:not([hidden]):has-text("Being written again")');
    await page.waitForFunction(() => document.querySelector('.doc-text.caret')?.textContent.length > 0);
    await page.waitForFunction(() => document.querySelector('dd.revision')?.textContent === '2');
    // the usage meter counts the new words without a page change
    const words = (await slow.api('GET', '/usage', key)).json.data.words.used;
    await page.waitForFunction((w) => document.getElementById('meter').textContent.startsWith(`Words ${w.toLocaleString('en')} `), words);
    assert.equal(await fact(page, 'Tone').textContent(), 'Formal');
    assert.equal(await fact(page, 'Length').textContent(), 'Long');
    const now = await get(slow, key, `/documents/${d.id}`);
    assert.deepEqual([now.revision, now.tone, now.length, now.state], [2, 'formal', 'long', 'completed']);
    const revs = (await slow.api('GET', `/documents/${d.id}/revisions`, key)).json.data;
    assert.equal(revs[0].source, 'regeneration');
    assert.equal(await page.locator('.doc-text.md').innerText().then((t) => t.length > 0), true);
  }));

  test('a failed document offers Try again; a failed regeneration keeps the text and says why', () => withPage(async (page) => {
    const key = srv.key('try');
    const r = await srv.api('POST', '/documents', key, {name: 'Broken', prompt: 'FAILNOW please'}, {Prefer: 'respond-async'});
    let rec;
    for (let i = 0; i < 400 && rec?.state !== 'failed'; i++) {
      rec = await get(srv, key, `/documents/${r.json.data.id}`);
      if (rec.state !== 'failed') await new Promise((res) => setTimeout(res, 50));
    }
    assert.equal(rec.state, 'failed');
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/documents/${rec.id}`);
    await page.waitForSelector('#main [role=alert]:has-text("Generation failed")');
    assert.equal(await fact(page, 'Revision').textContent(), 'None yet');
    await page.click('button:text-is("Try again")');
    await page.fill('.regen textarea[name=prompt]', 'green tea please');
    await page.click('.regen button[type=submit]');
    await page.waitForFunction(() => document.querySelector('dd.revision')?.textContent === '1');
    assert.equal(await page.locator('#main [role=alert]').count(), 0, 'no failure shown any more');
    const ok = await get(srv, key, `/documents/${rec.id}`);
    assert.equal(ok.state, 'completed');
    // a regeneration that fails: the text stays, the page says why
    page.allow(/status of 502/);
    await page.click('button:text-is("Regenerate")');
    await page.fill('.regen textarea[name=prompt]', 'FAILNOW again');
    await page.click('.regen button[type=submit]');
    await page.waitForSelector('#main [role=alert]:has-text("The last regeneration failed")');
    assert.equal(await fact(page, 'Revision').textContent(), '1');
    assert.equal((await page.locator('.doc-text.md').innerText()).trim().length > 0, true);
  }));
});

describe('revisions', () => {
  test('the word diff: both texts rebuilt from it, as few changes as a longest common subsequence', () => {
    const lcs = (A, B) => {
      const t = Array.from({length: A.length + 1}, () => new Int32Array(B.length + 1));
      for (let i = A.length - 1; i >= 0; i--) for (let j = B.length - 1; j >= 0; j--) t[i][j] = A[i] === B[j] ? t[i + 1][j + 1] + 1 : Math.max(t[i + 1][j], t[i][j + 1]);
      return t[0][0];
    };
    const W = ['tea', 'green', 'the', 'a', '**calm**', 'Кот', '\n', '  '];
    let seed = 7;
    const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
    for (let i = 0; i < 2000; i++) {
      const mk = () => Array.from({length: rnd(14)}, () => W[rnd(W.length)]).join(rnd(2) ? ' ' : '  ');
      const a = mk(), b = mk(), p = diffWords(a, b);
      assert.equal(p.filter(([o]) => o !== '+').map(([, t]) => t).join(''), a);
      assert.equal(p.filter(([o]) => o !== '-').map(([, t]) => t).join(''), b);
      const same = p.filter(([o]) => o === '=').reduce((n, [, t]) => n + tokens(t).length, 0);
      assert.equal(same, lcs(tokens(a), tokens(b)), `${JSON.stringify(a)} / ${JSON.stringify(b)}`);
    }
    assert.deepEqual(diffWords('the cat sat', 'the dog sat down'), [['=', 'the '], ['-', 'cat'], ['+', 'dog'], ['=', ' sat'], ['+', ' down']]);
    assert.equal(diffWords('a '.repeat(3000), 'b '.repeat(3000), 100), null, 'too different: null, not a slow answer');
  });

  test('listed with their source, shown as text and as changes, restored', () => withPage(async (page) => {
    const key = srv.key('rev');
    const d = await doc(srv, key, {name: 'History'});
    await srv.api('PATCH', `/documents/${d.id}`, key, {result: 'Green tea keeps me calm and focused every morning.'});
    await srv.api('PATCH', `/documents/${d.id}`, key, {result: 'Green tea keeps me awake and focused every single morning.'});
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/documents/${d.id}`);
    const items = page.locator('.revisions li.rev');
    await page.waitForFunction(() => document.querySelectorAll('.revisions li.rev').length === 3);
    assert.match(await items.nth(0).innerText(), /Revision 3 · Edited/);
    assert.match(await items.nth(2).innerText(), /Revision 1 · Generated/);
    assert.match(await page.locator('.revisions [role=status]').textContent(), /3 revisions/);
    // revision 2 against the current text (3): one word out, two in
    await page.click('button[aria-label="Show revision 2"]');
    await page.waitForSelector('.rev-view .diff');
    assert.deepEqual(await page.$$eval('.rev-view .diff del', (es) => es.map((e) => e.textContent)), ['calm']);
    assert.deepEqual(await page.$$eval('.rev-view .diff ins', (es) => es.map((e) => e.textContent)), ['awake', ' single']);
    assert.match(await page.locator('.rev-view').innerText(), /2 words added \(underlined\), 1 removed/);
    await page.click('.rev-view button:text("Its text")');
    assert.equal((await page.locator('.rev-view .doc-text.md').innerText()).trim(), 'Green tea keeps me calm and focused every morning.');
    assert.equal(await page.locator('.rev-view [role=note]').count(), 0);
    // the current one has no Restore
    await page.click('button[aria-label="Show revision 3"]');
    assert.equal(await page.locator('.rev-view button:text("Restore")').count(), 0);
    await page.click('button[aria-label="Show revision 1"]');
    await page.click('.rev-view button[aria-label="Restore revision 1"]');
    await page.waitForFunction(() => document.querySelector('dd.revision')?.textContent === '4');
    const now = await get(srv, key, `/documents/${d.id}`);
    assert.equal(now.result, d.result, 'the text of revision 1 again');
    await page.waitForFunction(() => document.querySelectorAll('.revisions li.rev').length === 4);
    assert.match(await items.nth(0).innerText(), /Revision 4 · Restored/);
  }));

  test('a revision the model cut short says so', () => withPage(async (page) => {
    const key = srv.key('cut');
    const d = await doc(srv, key, {name: 'Cut'});
    await srv.api('PATCH', `/documents/${d.id}`, key, {result: 'Edited.'});
    // the builtin generator never stops at a limit: revision 1 as a model would leave it
    await page.route(`**/api/v1/documents/${d.id}/revisions?*`, async (route) => {
      const res = await route.fetch();
      const j = await res.json();
      for (const r of j.data) r.truncated = r.number === 1;
      await route.fulfill({response: res, json: j});
    });
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/documents/${d.id}`);
    await page.click('button[aria-label="Show revision 2"]');
    assert.equal(await page.locator('.rev-view [role=note]').count(), 0);
    await page.click('button[aria-label="Show revision 1"]');
    await page.waitForSelector('.rev-view [role=note]:has-text("cut short")');
  }));

  test('more than ten: the older ones on request', () => withPage(async (page) => {
    const key = srv.key('many');
    const d = await doc(srv, key, {name: 'Many'});
    for (let i = 0; i < 11; i++) await srv.api('PATCH', `/documents/${d.id}`, key, {result: `Version ${i}`});
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/documents/${d.id}`);
    await page.waitForFunction(() => document.querySelectorAll('.revisions li.rev').length === 10);
    await page.click('button:text("Show older revisions")');
    await page.waitForFunction(() => document.querySelectorAll('.revisions li.rev').length === 12);
    assert.ok(await page.locator('button:text("Show older revisions")').isHidden());
  }));
});

describe('images', () => {
  test('regenerate with another size and style; revisions as thumbnails, restored', () => withPage(async (page) => {
    const key = srv.key('pic');
    const im = (await srv.api('POST', '/images', key, {name: 'Hills', description: 'hills at dawn', resolution: '1024x1024', style: 'vivid'})).json.data;
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/images/${im.id}`);
    await fact(page, 'Revision').waitFor();
    assert.equal(await fact(page, 'Revision').textContent(), '1');
    await page.click('button:text-is("Regenerate")');
    assert.equal(await page.inputValue('.regen textarea[name=description]'), 'hills at dawn');
    await page.selectOption('.regen select[name=resolution]', '1792x1024');
    await page.selectOption('.regen select[name=style]', 'natural');
    await page.click('.regen button[type=submit]');
    await page.waitForFunction(() => document.querySelector('dd.revision')?.textContent === '2');
    const now = await get(srv, key, `/images/${im.id}`);
    assert.deepEqual([now.resolution, now.style, now.revision], ['1792x1024', 'natural', 2]);
    assert.notEqual(now.url, im.url);
    assert.equal(await page.getAttribute('img.full', 'width'), '1792');
    // the revisions: a thumbnail each, the older one restorable
    await page.waitForFunction(() => document.querySelectorAll('.revisions li.rev img').length === 2);
    await page.waitForFunction(() => [...document.querySelectorAll('.revisions img')].every((e) => e.complete && e.naturalWidth > 0));
    const srcs = await page.$$eval('.revisions li.rev img', (es) => es.map((e) => e.getAttribute('src')));
    assert.deepEqual(srcs, [new URL(now.url).pathname + '?w=256', new URL(im.url).pathname + '?w=256']);
    assert.equal(await page.locator('.revisions button:text("Restore")').count(), 1);
    await page.click('button[aria-label="Restore revision 1"]');
    await page.waitForFunction(() => document.querySelector('dd.revision')?.textContent === '3');
    const back = await get(srv, key, `/images/${im.id}`);
    assert.deepEqual([back.resolution, back.style], ['1024x1024', 'vivid']);
    assert.equal(await page.getAttribute('img.full', 'width'), '1024');
  }));
});

describe('usage and administration', () => {
  test('the usage meter in the header and the Account page; a used-up quota refused in words', () => withPage(async (page) => {
    page.allow(/status of 403/);
    srv.cli('user', 'create', 'meg', '--quota-words', '100000');
    const key = srv.key('meg');
    const d = await doc(srv, key, {name: 'Counted'});
    await signIn(page, srv, key);
    await page.waitForFunction(() => document.getElementById('meter').textContent !== '');
    assert.equal(await page.textContent('#meter'), `Words ${d.words.toLocaleString('en')} of 100,000 · Images 0 (no limit)`);
    await page.click('a[data-nav=account]');
    await page.waitForSelector('h1:text("Account")');
    await page.waitForSelector('meter');
    assert.equal(await page.getAttribute('meter', 'value'), String(d.words));
    assert.match(await page.locator('main').innerText(), new RegExp(`${(100000 - d.words).toLocaleString('en')} left this month`));
    assert.match(await page.locator('main').innerText(), new RegExp(`Signed in as meg with the API key ${key.slice(0, 10)}`));
    // the quota used up: the page says so and a new document is refused in words
    srv.cli('user', 'set-quota', 'meg', '--words', String(d.words));
    await page.reload();
    await page.waitForSelector('.usage-row .err:has-text("used up")');
    await page.goto(srv.base + '/#/documents/new');
    await page.waitForSelector('.picker-list label');
    await page.fill('input[name=name]', 'One more');
    await page.fill('textarea[name=prompt]', 'tea');
    await page.click('button:text("Write it")');
    await page.waitForSelector('.form-alert:not([hidden])');
    assert.equal(await page.textContent('.form-alert'), 'Your monthly word quota is used up.');
  }));

  test('an admin key: users, quotas, keys shown once and revoked, usage; never the key in the address', () => withPage(async (page) => {
    // the app learns an admin key from the 403 of GET /usage (once per key and tab)
    page.allow(/status of 403/);
    const admin = srv.cli('key', 'create', '--user', 'root', '--scope', 'admin').trim();
    const keyFree = async (when) => {
      const where = await page.evaluate(() => location.href + ' ' + JSON.stringify(history.state) + ' ' + history.length);
      assert.doesNotMatch(where, /ink_|key=/, `${when}: ${where}`);
    };
    await page.goto(srv.base + '/#key=' + encodeURIComponent(admin));
    await page.waitForSelector('h1:text("Administration")');
    assert.match(page.url(), /#\/admin$/);
    await keyFree('signed in');
    assert.ok(await page.locator('a[data-nav=documents]').isHidden());
    assert.ok(await page.locator('a[data-nav=admin]').isVisible());
    // the documents are not for an admin key: back to the admin page
    await page.goto(srv.base + '/#/documents');
    await page.waitForURL(/#\/admin$/);
    // a user with quotas
    await page.fill('input[name=name]', 'nia');
    await page.fill('form[aria-labelledby=new-user] input[name=quota_words]', '5000');
    await page.click('button:text("Create user")');
    await page.waitForSelector('h1:text("nia")');
    const uid = Number(page.url().match(/users\/(\d+)$/)[1]);
    let u = (await srv.api('GET', `/admin/users/${uid}`, admin)).json.data;
    assert.deepEqual([u.name, u.quota_words, u.quota_images], ['nia', 5000, null]);
    await page.fill('input[name=quota_images]', '7');
    await page.fill('input[name=quota_words]', '');
    await page.click('button:text("Save quotas")');
    await page.waitForSelector('.toast:text("Quotas saved.")');
    u = (await srv.api('GET', `/admin/users/${uid}`, admin)).json.data;
    assert.deepEqual([u.quota_words, u.quota_images], [null, 7]);
    // a read key expiring tomorrow: shown once, on the page only
    await page.selectOption('select[name=scope]', 'read');
    const tomorrow = new Date(Date.now() + 86400e3);
    const local = new Date(tomorrow.getTime() - tomorrow.getTimezoneOffset() * 60e3).toISOString().slice(0, 16);
    await page.fill('input[name=expires_at]', local);
    await page.click('button:text("Create key")');
    await page.waitForSelector('.new-key input');
    const made = await page.inputValue('.new-key input');
    assert.match(made, /^ink_/);
    await keyFree('key made');
    assert.equal(await stored(page, await page.inputValue('.new-key input')), false);
    assert.equal((await srv.api('GET', '/usage', made)).status, 200);
    const write = await srv.api('POST', '/documents', made, {name: 'x', prompt: 'y'});
    assert.deepEqual([write.status, write.json.message], [403, 'This key may only read.']);
    const keys = (await srv.api('GET', `/admin/users/${uid}/keys`, admin)).json.data;
    assert.equal(keys.length, 1);
    assert.equal(keys[0].scope, 'read');
    assert.ok(Math.abs(Date.parse(keys[0].expires_at) - tomorrow.getTime()) < 120e3, keys[0].expires_at);
    await page.waitForSelector(`td:has-text("${keys[0].prefix}")`);
    // revoked: the key stops working
    await page.click(`button[aria-label="Revoke key ${keys[0].prefix}"]`);
    await page.click('dialog button:text("Revoke")');
    await page.waitForSelector('td:text("Revoked")');
    assert.equal((await srv.api('GET', '/usage', made)).status, 401);
    // usage of the month lists the users
    await page.click('a:text("← All users")');
    await page.waitForSelector('[aria-label^="Usage in"] td a:text("nia")');
    // deleted, after a confirmation
    await page.click('a:text("nia")');
    await page.waitForSelector('h1:text("nia")');
    await page.click('button:text("Delete user")');
    await page.click('dialog button:text("Delete")');
    await page.waitForSelector('h1:text("Administration")');
    assert.equal((await srv.api('GET', `/admin/users/${uid}`, admin)).status, 404);
    await keyFree('after all');
    // signed out, then in again with the form: the admin page again
    await page.click('#signout');
    await page.waitForSelector('h1:text("Sign in")');
    await page.fill('input[name=key]', admin);
    await page.click('button:text("Sign in with the key")');
    await page.waitForSelector('h1:text("Administration")');
    await keyFree('signed in with the form');
  }));

  test('the usage chart: one bar per user for words and images, widths in the order of use, the table\'s numbers, quota shown', () => withPage(async (page) => {
    page.allow(/status of 403/);
    const admin = srv.cli('key', 'create', '--user', 'chartroot', '--scope', 'admin').trim();
    const few = srv.key('chart-few');
    const many = srv.key('chart-many');
    await doc(srv, few, {name: 'one'});
    await doc(srv, many, {name: 'one'});
    await doc(srv, many, {name: 'two'});
    await doc(srv, many, {name: 'three'});
    assert.equal((await srv.api('POST', '/images', many, {name: 'Pic', description: 'a boat', resolution: '1024x1024'})).status, 201);
    srv.cli('user', 'set-quota', 'chart-few', '--words', '100000');
    await page.goto(srv.base + '/#key=' + encodeURIComponent(admin));
    await page.waitForSelector('.usage-chart');
    const chart = (metric) => page.$$eval(`.usage-chart [data-metric=${metric}] .bar-row`, (rows) => Object.fromEntries(rows.map((r) => [
      r.querySelector('.bar-name').textContent,
      {num: r.querySelector('.bar-num').textContent, width: r.querySelector('.bar').getBoundingClientRect().width,
        track: r.querySelector('.bar-track').getBoundingClientRect().width, limit: !!r.querySelector('.bar-limit')}])));
    const table = await page.$$eval('[aria-label^="Usage in"] tbody tr', (trs) => Object.fromEntries(trs.map((tr) => {
      const td = [...tr.querySelectorAll('td')].map((c) => c.textContent);
      return [td[0], {words: td[1], images: td[2]}];
    })));
    const words = await chart('words');
    const images = await chart('images');
    // one bar per user of the table, in each group; the numbers as in the table
    assert.deepEqual(Object.keys(words).sort(), Object.keys(table).sort());
    assert.deepEqual(Object.keys(images).sort(), Object.keys(table).sort());
    for (const name of Object.keys(table)) {
      assert.equal(words[name].num, table[name].words, name);
      assert.equal(images[name].num, table[name].images, name);
    }
    const used = async (k) => (await get(srv, k, '/usage'));
    const [uf, um] = [await used(few), await used(many)];
    assert.ok(um.words.used > uf.words.used && uf.words.used > 0, JSON.stringify([uf.words, um.words]));
    assert.equal(words['chart-few'].num, `${uf.words.used.toLocaleString('en')} of 100,000`);
    assert.equal(words['chart-many'].num, um.words.used.toLocaleString('en'));
    // widths in the order of use: the largest of the table fills its track, the smaller is shorter but shown
    assert.ok(words['chart-many'].width > words['chart-few'].width && words['chart-few'].width > 0, JSON.stringify(words));
    const n = (t) => Number(t.split(' ')[0].replace(/,/g, ''));
    const top = Object.keys(table).sort((a, b) => n(table[b].words) - n(table[a].words))[0];
    assert.ok(Math.abs(words[top].width - words[top].track) <= 3, JSON.stringify([top, words[top]]));
    assert.ok(images['chart-many'].width > images['chart-few'].width, JSON.stringify(images));
    assert.equal(images['chart-few'].width, 0);
    assert.equal(images['chart-many'].num, um.images.used.toLocaleString('en'));
    assert.ok(um.images.used > 0);
    // the quota beyond the scale: in words, no mark; set inside it: a mark on the track
    assert.equal(words['chart-few'].limit, false);
    srv.cli('user', 'set-quota', 'chart-few', '--words', String(um.words.used));
    await page.reload();
    await page.waitForSelector('.usage-chart');
    const again = await chart('words');
    assert.equal(again['chart-few'].limit, true);
    assert.equal(again['chart-few'].num, `${uf.words.used.toLocaleString('en')} of ${um.words.used.toLocaleString('en')}`);
    // hidden from assistive technology (the table is the source), with a caption
    assert.equal(await page.getAttribute('.usage-chart', 'aria-hidden'), 'true');
    assert.match(await page.textContent('.usage-chart figcaption'), /^Usage in \d{4}-\d{2} as bars/);
  }));
});

describe('accessibility and screenshots', () => {
  test('no axe-core violation on the new pages, light and dark, desktop and phone; none wider than the screen', () => withPage(async (page) => {
    page.allow(/status of 403/);
    const key = srv.key('ada');
    const admin = srv.cli('key', 'create', '--user', 'boss', '--scope', 'admin').trim();
    const d = await doc(srv, key, {name: 'Morning notes', template_id: '9', prompt: 'green tea and calm mornings', tone: 'friendly'});
    await srv.api('PATCH', `/documents/${d.id}`, key, {result: d.result.replace(/\btea\b/g, 'coffee').replace(/\.\n/, '. A new sentence here.\n')});
    const im = (await srv.api('POST', '/images', key, {name: 'Harbour', description: 'boats at dusk', resolution: '1792x1024', style: 'vivid'})).json.data;
    await srv.api('POST', `/images/${im.id}/regenerate`, key, {style: 'natural'});
    const uid = (await srv.api('GET', '/admin/users?per_page=100', admin, null)).json.data.find((x) => x.name === 'ada').id;
    await srv.api('PATCH', `/admin/users/${uid}`, admin, {quota_words: '20000', quota_images: '10'});
    const pages = [
      ['writer-document-diff', key, `#/documents/${d.id}`, async () => { await page.click('button[aria-label="Show revision 1"]'); await page.waitForSelector('.rev-view .diff');
        await page.evaluate(() => document.querySelector('.rev-view h3').scrollIntoView({block: 'start'}));
      }],
      ['writer-regenerate', key, `#/documents/${d.id}`, async () => { await page.click('button:text-is("Regenerate")'); }],
      ['writer-new-document', key, '#/documents/new', async () => { await page.waitForSelector('.picker-list label'); await page.locator('select[name=tone]').scrollIntoViewIfNeeded(); }],
      ['writer-image-revisions', key, `#/images/${im.id}`, async () => {
        await page.waitForFunction(() => document.querySelectorAll('.revisions img').length === 2 && [...document.images].every((e) => e.complete));
        await page.locator('.revisions').scrollIntoViewIfNeeded();
      }],
      ['writer-account', key, '#/account', () => page.waitForSelector('meter')],
      ['writer-admin', admin, '#/admin', () => page.waitForSelector('[aria-label^="Usage in"]')],
      ['writer-admin-usage', admin, '#/admin', async () => {
        await page.waitForSelector('.usage-chart');
        await page.evaluate(() => { document.querySelector('.usage-chart').scrollIntoView({block: 'start'}); window.scrollBy(0, -document.querySelector('header').offsetHeight - 16); });
      }],
      ['writer-admin-user', admin, `#/admin/users/${uid}`, async () => {
        await page.click('button:text("Create key")');
        await page.waitForSelector('.new-key input');
      }],
    ];
    const found = [];
    for (const [scheme, vp] of [['light', {width: 1280, height: 800}], ['dark', {width: 1280, height: 800}], ['light', {width: 390, height: 844}], ['dark', {width: 390, height: 844}]]) {
      await page.emulateMedia({colorScheme: scheme});
      await page.setViewportSize(vp);
      const form = vp.width < 600 ? 'phone' : 'desktop';
      for (const [name, k, hash, ready] of pages) {
        await page.goto(srv.base + '/#/signin');
        await useKey(page, k);
        await page.goto(srv.base + '/' + hash);
        await page.waitForSelector('#main h1');
        await page.waitForFunction(() => !document.querySelector('[aria-busy=true]'));
        await ready();
        await page.waitForFunction(() => !document.querySelector('[aria-busy=true]'));
        if (!await page.evaluate(() => typeof window.axe === 'object')) await page.evaluate(AXE);
        const r = await page.evaluate(() => window.axe.run(document, {resultTypes: ['violations']}));
        for (const v of r.violations) found.push(`${name} ${scheme} ${vp.width}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
        await shot(page, `${name}-${form}-${scheme}`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `${name} ${form}: ${overflow}px wider than the screen`);
      }
    }
    assert.deepEqual(found, []);
    const unnamed = await page.evaluate(() => [...document.querySelectorAll('input, select, textarea, button')]
      .filter((e) => !e.labels?.length && !e.getAttribute('aria-label') && !e.textContent.trim()).map((e) => e.outerHTML.slice(0, 80)));
    assert.deepEqual(unnamed, []);
  }));
});
