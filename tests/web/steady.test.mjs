// steady.test.mjs — the pages hold still while they load (issue 35 item 8, what
// Lighthouse measures as layout shift): each page opened cold, signed in as an admin with
// a password (both kinds of pages, API.md §21), on a desktop (1350×940, Lighthouse's
// desktop screen) and a phone (412×823), with the shifts the browser reports
// (PerformanceObserver 'layout-shift') summed until the page's last part is in. And
// index.html preloads exactly the modules app.js imports (one request level, not one per
// import level; a stale entry would be a 404).
import {after, before, describe, test} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {BIN, launch, newPage, Server, WEB_DIR} from './lib.mjs';

let srv, browser;

before(async () => {
  srv = await new Server().start();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await srv?.stop();
});

// the modules app.js loads, by their static imports
function imported(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = fs.readFileSync(path.join(WEB_DIR, file), 'utf8');
  for (const m of text.matchAll(/^\s*import\s+(?:[^;]*?\s+from\s+)?['"]([^'"]+)['"]/gm))
    imported(path.posix.join(path.posix.dirname(file), m[1]), seen);
  return seen;
}

describe('index.html', () => {
  test('preloads every module app.js imports, and nothing else', () => {
    const html = fs.readFileSync(path.join(WEB_DIR, 'index.html'), 'utf8');
    const preloaded = [...html.matchAll(/<link rel="modulepreload" href="\/([^"]+)">/g)].map((m) => m[1]).sort();
    const wanted = [...imported('app.js')].filter((f) => f !== 'app.js').sort();
    assert.deepEqual(preloaded, wanted, 'web/index.html: one <link rel="modulepreload" href="/FILE"> per module app.js imports');
  });
});

describe('no layout shift while a page loads', () => {
  test('documents, a document, images, an image, account, administration, a user; desktop and phone', async () => {
    srv.cli('user', 'create', 'stella', '--role', 'admin');
    execFileSync(BIN, ['user', 'set-password', 'stella', ...srv.storage()], {input: 'stella password 1\n', stdio: ['pipe', 'pipe', 'pipe']});
    const key = srv.key('stella');
    for (let i = 0; i < 4; i++) await srv.api('POST', '/documents', key, {name: `Steady ${i}`, prompt: 'tea and focus'});
    const d = (await srv.api('POST', '/documents', key, {name: 'Steady', prompt: 'a post about tea'})).json.data;
    const img = (await srv.api('POST', '/images', key, {name: 'Pic', description: 'a red sunset', resolution: '1024x1024'})).json.data;
    const uid = (await srv.api('GET', '/me', key)).json.data.user.id;
    // the last part of each page to come in
    const pages = [
      ['#/documents', 'main section[aria-busy=false] li'],
      [`#/documents/${d.id}`, 'main h1:text("Steady")'],
      ['#/images', 'main section[aria-busy=false] li'],
      [`#/images/${img.id}`, 'main h1:text("Pic")'],
      ['#/account', 'section[aria-labelledby=keys-h] tbody tr'],
      ['#/admin', '[aria-label^="Usage in"]'],
      [`#/admin/users/${uid}`, 'main h1:text("stella")'],
    ];
    const page = await newPage(browser.ctx);
    try {
      await page.goto(srv.base + '/#/signin');
      await page.fill('input[name=name]', 'stella');
      await page.fill('input[name=password]', 'stella password 1');
      await page.press('input[name=password]', 'Enter');
      await page.waitForSelector('h1:text("Documents")');
      await page.addInitScript(() => {
        window.shifts = [];
        new PerformanceObserver((l) => {
          for (const e of l.getEntries()) {
            if (e.hadRecentInput) continue;
            window.shifts.push({value: e.value, nodes: e.sources.map((s) => s.node?.nodeName + (s.node?.id ? '#' + s.node.id : '') +
              (s.node?.className && typeof s.node.className === 'string' ? '.' + s.node.className.replace(/ /g, '.') : ''))});
          }
        }).observe({type: 'layout-shift', buffered: true});
      });
      const seen = [];
      for (const [w, hgt] of [[1350, 940], [412, 823]]) {
        await page.setViewportSize({width: w, height: hgt});
        for (const [hash, last] of pages) {
          await page.goto('about:blank');
          await page.goto(srv.base + '/' + hash);
          await page.waitForSelector(last);
          await page.waitForLoadState('networkidle');
          // two frames: a shift of the last paint is reported after it
          await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
          const shifts = await page.evaluate(() => window.shifts);
          const total = shifts.reduce((a, s) => a + s.value, 0);
          seen.push(`${hash} ${w}px: ${total.toFixed(4)} ${shifts.map((s) => s.nodes.join('+')).join(', ')}`);
          // 0.1 is "good" to Lighthouse; what is left here is the header's names filling
          // in beside the links (about 0.006 on a desktop), nothing of the page itself
          assert.ok(total < 0.02, `layout shift on ${hash} at ${w}×${hgt}: ${seen.at(-1)}`);
        }
      }
      assert.deepEqual(page.consoleErrors(), [], 'console errors on the page');
    } finally {
      await page.close();
    }
  });
});
