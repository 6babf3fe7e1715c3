// webhooks.test.mjs — the Webhooks page (API.md §22, issue 36) and the keys of the
// Account page (§21, issue 34) in Chromium: an endpoint made with its events, the
// secret shown once with Copy (in no storage, no address), a test delivery refused by
// the receiver (410: the delivery fails and the endpoint pauses), Resume, Retry until it
// is delivered, a new secret, Delete; a read-only session shows no write control; a key
// made with a name shows it in the list; axe-core clean, light and dark, phone and desktop.
import {after, before, describe, test} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import {createRequire} from 'node:module';
import {launch, Server, shot, signIn, stored, useKey, pageRunner} from './lib.mjs';

const require = createRequire(import.meta.url);
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
let srv, browser, receiver, port;
// what the receiver answers next, and what it was sent
let answer = 410;
const got = [];
const waiters = [];

before(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      got.push({headers: req.headers, body});
      res.writeHead(answer).end();
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  port = receiver.address().port;
  srv = await new Server('--webhook-allow-private').start();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await srv?.stop();
  receiver?.close();
});

// resolves once the receiver has been sent n requests in all (an event, not a delay)
const received = (n) => new Promise((resolve) => {
  const check = () => (got.length >= n ? resolve() : waiters.push(check));
  check();
});

// waits until the endpoint's newest delivery is in state (read through the API)
async function deliveryState(key, hook, state) {
  for (;;) {
    const r = await srv.api('GET', `/webhooks/${hook}/deliveries`, key);
    if (r.json.data[0]?.state === state) return r.json.data[0];
    await new Promise((res) => setTimeout(res, 100));
  }
}

const withPage = pageRunner(() => browser);

async function axe(page, what) {
  if (!await page.evaluate(() => typeof window.axe === 'object')) await page.evaluate(AXE);
  const r = await page.evaluate(() => window.axe.run(document, {resultTypes: ['violations']}));
  return r.violations.map((v) => `${what}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

describe('the Webhooks page', () => {
  test('make an endpoint (secret once, Copy), test it, a failed delivery, resume, retry, rotate, delete', () => withPage(async (page) => {
    const key = srv.key('hana');
    await signIn(page, srv, key);
    await page.click('a[data-nav=webhooks]');
    await page.waitForSelector('h1:text("Webhooks")');
    await page.waitForSelector('p:has-text("No endpoints yet")');
    await page.click('button:text("+ New endpoint")');
    // nothing chosen: the form says so under its fields
    await page.uncheck('input[value="document.completed"]');
    await page.uncheck('input[value="document.failed"]');
    await page.click('button:text("Create endpoint")');
    await page.waitForSelector('[data-field=events] .err:text("Choose at least one event.")');
    await page.waitForSelector('[data-field=url] .err:text("Enter the URL to send to.")');
    // a URL the server refuses: its 422 under URL (Chromium logs the 422)
    page.allow(/status of 422/);
    await page.fill('input[name=url]', 'ftp://example.com/x');
    await page.check('input[value="document.completed"]');
    await page.click('button:text("Create endpoint")');
    await page.waitForSelector('[data-field=url] .err:not([hidden])');
    await page.fill('input[name=url]', `http://127.0.0.1:${port}/hook`);
    await page.fill('input[name=description]', 'Our receiver');
    await page.check('input[value="image.completed"]');
    await page.click('button:text("Create endpoint")');
    await page.waitForSelector('.new-secret input');
    const secret = await page.inputValue('.new-secret input');
    assert.match(secret, /^whsec_/);
    assert.ok(await page.isVisible('.new-secret button:text("Copy")'));
    assert.equal(await stored(page, secret), false, 'the secret is in no storage');
    assert.doesNotMatch(await page.evaluate(() => location.href + JSON.stringify(history.state)), /whsec_/);
    const hooks = (await srv.api('GET', '/webhooks', key)).json.data;
    assert.equal(hooks.length, 1);
    assert.deepEqual(hooks[0].events, ['document.completed', 'image.completed']);
    await page.waitForSelector('.hook .badge:text("Active")');
    await page.waitForSelector('.hook code:text("image.completed")');
    const hook = hooks[0].id;
    // a test event; the receiver answers 410: the delivery fails, the endpoint pauses
    await page.click('button:text("Send a test")');
    await received(1);
    assert.match(got[0].body, /"type":"ping"/);
    await deliveryState(key, hook, 'failed');
    await page.reload();
    await page.waitForSelector('.hook .badge:text("Paused")');
    await page.click('button:text("Deliveries")');
    await page.waitForSelector('.deliveries td:has-text("HTTP 410")');
    await page.waitForSelector('.deliveries .badge:text("Failed")');
    await shot(page, 'webhooks-failed');
    // resume, then retry: the receiver takes it now
    await page.click('button:text("Resume")');
    await page.waitForSelector('.hook .badge:text("Active")');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Pause', 'focus stays on the toggle');
    answer = 204;
    await page.click('button:text("Deliveries")');
    await page.click('.deliveries button:text("Retry")');
    await received(2);
    await deliveryState(key, hook, 'delivered');
    await page.click('.deliveries button:text("Refresh")');
    await page.waitForSelector('.deliveries .badge:text("Delivered")');
    assert.equal(await page.locator('.deliveries button:text("Retry")').count(), 0);
    // a new secret, shown once
    await page.click('button:text("New secret")');
    await page.click('dialog button:text("Make it")');
    await page.waitForFunction((old) => {
      const i = document.querySelector('.new-secret input');
      return i && i.value.startsWith('whsec_') && i.value !== old;
    }, secret);
    await page.reload();
    await page.waitForSelector('.hook');
    assert.equal(await page.locator('.new-secret').count(), 0, 'a reload loses the secret');
    // delete, asking first
    await page.click('button[aria-label="Delete Our receiver"]');
    await page.click('dialog button:text("Delete")');
    await page.waitForSelector('p:has-text("No endpoints yet")');
    assert.equal((await srv.api('GET', '/webhooks', key)).json.data.length, 0);
  }));

  test('a read-only session sees endpoints and deliveries, no control that changes them', () => withPage(async (page) => {
    srv.key('ro');
    const write = srv.key('ro');
    await srv.api('POST', '/webhooks', write, {url: `http://127.0.0.1:${port}/ro`, events: '*'});
    const read = srv.cli('key', 'create', '--user', 'ro', '--scope', 'read').trim();
    await signIn(page, srv, read);
    await page.goto(srv.base + '/#/webhooks');
    await page.waitForSelector('.hook code, .hook p:has-text("every event")');
    for (const label of ['+ New endpoint', 'Pause', 'Send a test', 'New secret', 'Delete']) {
      assert.equal(await page.locator(`button:text-is("${label}")`).filter({visible: true}).count(), 0, label);
    }
    assert.ok(await page.isVisible('button:text("Deliveries")'));
  }));

  test('no axe-core violation, light and dark, desktop and phone (the secret shown, the deliveries open)', () => withPage(async (page) => {
    const key = srv.key('axe');
    const made = await srv.api('POST', '/webhooks', key, {url: `http://127.0.0.1:${port}/axe`, events: 'document.completed,document.deleted', description: 'Publishing'});
    await srv.api('POST', `/webhooks/${made.json.data.id}/ping`, key);
    await deliveryState(key, made.json.data.id, 'delivered');
    const found = [];
    for (const [scheme, vp] of [['light', {width: 1280, height: 800}], ['dark', {width: 1280, height: 800}], ['light', {width: 390, height: 844}], ['dark', {width: 390, height: 844}]]) {
      await page.emulateMedia({colorScheme: scheme});
      await page.setViewportSize(vp);
      const form = vp.width < 600 ? 'phone' : 'desktop';
      await page.goto(srv.base + '/#/signin');
      await useKey(page, key);
      await page.goto(srv.base + '/#/webhooks');
      await page.waitForSelector('.hook');
      await page.click('button:text("Deliveries")');
      await page.waitForSelector('.deliveries .badge:text("Delivered")');
      found.push(...await axe(page, `list ${scheme} ${form}`));
      await shot(page, `webhooks-${form}-${scheme}`);
      await page.click('button:text("+ New endpoint")');
      await page.fill('input[name=url]', `http://127.0.0.1:${port}/axe2`);
      await page.click('button:text("Create endpoint")');
      await page.waitForSelector('.new-secret input');
      found.push(...await axe(page, `secret ${scheme} ${form}`));
      await shot(page, `webhooks-secret-${form}-${scheme}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${form}: ${overflow}px wider than the screen`);
      const second = (await srv.api('GET', '/webhooks', key)).json.data.find((w) => w.url.endsWith('/axe2'));
      await srv.api('DELETE', `/webhooks/${second.id}`, key);
    }
    assert.deepEqual(found, []);
  }));
});

describe('my keys (Account)', () => {
  test('a key made with a name shows it in the list; the key is shown once', () => withPage(async (page) => {
    const key = srv.key('kai');
    await signIn(page, srv, key);
    await page.goto(srv.base + '/#/account');
    await page.waitForSelector('section[aria-labelledby=keys-h]');
    await page.fill('input[name=key_name]', 'Build server');
    await page.click('button:text("Create key")');
    await page.waitForSelector('.new-key input');
    const made = await page.inputValue('.new-key input');
    await page.waitForSelector('section[aria-labelledby=keys-h] td:text("Build server")');
    const row = page.locator('section[aria-labelledby=keys-h] tr', {hasText: 'Build server'});
    assert.match(await row.textContent(), new RegExp(made.slice(0, 10)));
    assert.equal(await stored(page, made), false);
    assert.deepEqual(await axe(page, 'keys'), []);
  }));
});
