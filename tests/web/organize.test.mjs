// organize.test.mjs — keeping work in order (issue 35 item 5) and the defects of its "Why"
// (item 7), in Chromium: tags as chips on list rows and records, the Tag filter in the
// address, a tag renamed by editing it, many documents selected → favourite, tag,
// export as ZIP, delete (the server's all-or-nothing answers and its errors shown), the
// same for images, a picture at full size; "1 document", a page for an unknown address,
// the focus kept on a star, a stream cut by a stopped server (a link, no duplicate);
// axe-core clean, light and dark, phone and desktop.
import {after, before, describe, test} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {createRequire} from 'node:module';
import {launch, Server, shot, signIn, slow, useKey, pageRunner} from './lib.mjs';

const require = createRequire(import.meta.url);
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
let srv, browser;

before(async () => {
  srv = await new Server('--builtin-fail-pattern', 'FAILNOW').start();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await srv?.stop();
});

const withPage = pageRunner(() => browser);

const doc = async (key, fields) => (await srv.api('POST', '/documents', key, {prompt: 'tea and focus', ...fields})).json.data;
const image = async (key, fields) => (await srv.api('POST', '/images', key, {description: 'hills at dawn', resolution: '1024x1024', ...fields})).json.data;
const get = async (key, p) => (await srv.api('GET', p, key)).json.data;

async function axe(page, what) {
  if (!await page.evaluate(() => typeof window.axe === 'object')) await page.evaluate(AXE);
  const r = await page.evaluate(() => window.axe.run(document, {resultTypes: ['violations']}));
  return r.violations.map((v) => `${what}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

describe('tags', () => {
  test('chips on list rows, the Tag filter in the address, a chip leads to its list', () => withPage(async (page) => {
    const key = srv.key('tia');
    await doc(key, {name: 'Spring launch', tags: 'Launch, Q3'});
    await doc(key, {name: 'Summer recap', tags: 'q3'});
    await doc(key, {name: 'Untagged notes'});
    await signIn(page, srv, key);
    await page.waitForSelector('.card .chip');
    const chips = await page.locator('.card', {hasText: 'Spring launch'}).locator('.chip').allTextContents();
    assert.deepEqual(chips, ['Launch', 'Q3']);
    // the filter offers the tags in use (one spelling each), and goes into the address
    await page.waitForSelector('select[name=tag] option[value="Q3"]', {state: 'attached'});
    assert.deepEqual(await page.locator('select[name=tag] option').allTextContents(), ['All tags', 'Launch', 'Q3']);
    await page.selectOption('select[name=tag]', 'Q3');
    await page.waitForFunction(() => location.hash.includes('tag=Q3'));
    await page.waitForFunction(() => document.querySelector('.summary')?.textContent === 'Showing 1–2 of 2 documents');
    // a reload shows the same list, the filter chosen
    await page.reload();
    await page.waitForFunction(() => document.querySelector('select[name=tag]')?.value === 'Q3');
    assert.equal(await page.locator('.card').count(), 2);
    // a chip is a link to its tag's list
    await page.click('.card:has-text("Spring launch") .chip:text("Launch")');
    await page.waitForFunction(() => document.querySelector('.summary')?.textContent === 'Showing 1–1 of 1 document');
    assert.match(await page.evaluate(() => location.hash), /tag=Launch/);
  }));

  test('an image’s tags edited on its page (a spelling changed renames it), Escape leaves', () => withPage(async (page) => {
    const key = srv.key('ivo');
    const img = await image(key, {name: 'Harbour', tags: 'sea'});
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/images/${img.id}`);
    await page.waitForSelector('.tags-edit .chip:text("sea")');
    await page.click('button:text("Edit tags")');
    await page.fill('input[name=tags]', 'changed');
    await page.keyboard.press('Escape');
    await page.waitForSelector('.tags-edit .chip:text("sea")');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Edit tags', 'the focus back on the button');
    await page.click('button:text("Edit tags")');
    await page.fill('input[name=tags]', 'Sea, Dusk');
    await page.click('button:text("Save tags")');
    await page.waitForSelector('.tags-edit .chip:text("Dusk")');
    assert.deepEqual((await get(key, `/images/${img.id}`)).tags, ['Sea', 'Dusk']);
    assert.deepEqual((await get(key, '/tags')).map((t) => t.name).sort(), ['Dusk', 'Sea']);
    // more than 20: the server's 422 under the field
    page.allow(/status of 422/);
    await page.click('button:text("Edit tags")');
    await page.fill('input[name=tags]', Array.from({length: 21}, (_, i) => `t${i}`).join(','));
    await page.click('button:text("Save tags")');
    await page.waitForSelector('[data-field=tags] .err:not([hidden])');
  }));
});

describe('bulk actions', () => {
  test('documents: select → favourite, tag, untag, export as ZIP, delete; errors shown', () => withPage(async (page) => {
    const key = srv.key('bo');
    const a = await doc(key, {name: 'Alpha'});
    const b = await doc(key, {name: 'Beta'});
    await doc(key, {name: 'Gamma'});
    await signIn(page, srv, key);
    await page.waitForSelector('.card input.pick');
    assert.ok(await page.isHidden('.bulk'), 'no bar while nothing is selected');
    await page.check('input[aria-label="Select “Alpha”"]');
    await page.check('input[aria-label="Select “Beta”"]');
    await page.waitForSelector('.bulk-count:text("2 documents selected")');
    await page.click('.bulk button:text("Favourite")');
    await page.waitForSelector('.toast:text("2 documents added to favourites.")');
    assert.equal((await get(key, `/documents/${a.id}`)).favorite, true);
    assert.equal((await get(key, `/documents/${b.id}`)).favorite, true);
    // tag: no tag typed is said at the field; then two tags
    await page.check('input[aria-label="Select “Alpha”"]');
    await page.check('input[aria-label="Select “Beta”"]');
    await page.click('.bulk button:text("Add tag")');
    await page.waitForSelector('.bulk [data-field=tags] .err:text("Enter a tag (or several, separated by commas).")');
    await page.fill('input[name=bulk_tags]', 'draft, team');
    await page.click('.bulk button:text("Add tag")');
    await page.waitForSelector('.card:has-text("Alpha") .chip:text("team")');
    assert.deepEqual((await get(key, `/documents/${b.id}`)).tags, ['draft', 'team']);
    await page.check('input[aria-label="Select “Beta”"]');
    await page.fill('input[name=bulk_tags]', 'draft');
    await page.click('.bulk button:text("Remove tag")');
    await page.waitForSelector('.toast:text("1 document untagged.")');
    assert.deepEqual((await get(key, `/documents/${b.id}`)).tags, ['team']);
    // "select all on this page", then export as a ZIP
    await page.waitForSelector('.card:has-text("Beta") .chip:text("team")');
    await page.check('input[name=select_all]');
    await page.waitForSelector('.bulk-count:text("3 documents selected")');
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('.bulk button:text("Download ZIP")')]);
    assert.equal(dl.suggestedFilename(), 'documents.zip');
    const zip = fs.readFileSync(await dl.path());
    assert.equal(zip.subarray(0, 2).toString(), 'PK');
    for (const n of ['Alpha.md', 'Beta.md', 'Gamma.md']) assert.ok(zip.includes(Buffer.from(n)), n);
    await shot(page, 'organize-bulk');
    // deleted elsewhere meanwhile: the server's answer says so
    await srv.api('DELETE', `/documents/${a.id}`, key);
    await page.uncheck('input[aria-label="Select “Gamma”"]');
    await page.click('.bulk button:text("Delete")');
    await page.click('dialog button:text("Delete")');
    await page.waitForSelector('.bulk .form-alert:has-text("1 of them was not found")', {state: 'attached'});
    await page.waitForFunction(() => document.querySelector('.summary')?.textContent === 'Showing 1–1 of 1 document');
    assert.deepEqual((await get(key, '/documents')).map((d) => d.name), ['Gamma']);
  }));

  test('documents: a ZIP of a failed one is refused, the reason shown', () => withPage(async (page) => {
    page.allow(/status of 422/);
    const key = srv.key('fay');
    await doc(key, {name: 'Fine'});
    const r = await srv.api('POST', '/documents', key, {name: 'Broken', prompt: 'FAILNOW'}, {Prefer: 'respond-async'});
    while ((await get(key, `/documents/${r.json.data.id}`)).state !== 'failed') await new Promise((res) => setTimeout(res, 50));
    await signIn(page, srv, key);
    await page.waitForSelector('.card input.pick');
    await page.check('input[name=select_all]');
    await page.click('.bulk button:text("Download ZIP")');
    await page.waitForSelector('.bulk .form-alert:not([hidden])');
    assert.match(await page.textContent('.bulk .form-alert'), /\S/);
  }));

  test('images: select → tag, delete; a picture at full size', () => withPage(async (page) => {
    const key = srv.key('ian');
    const one = await image(key, {name: 'Dunes'});
    await image(key, {name: 'Cliffs'});
    await signIn(page, srv, key);
    await page.goto(srv.base + '/#/images');
    await page.waitForSelector('.tile input.pick');
    await page.check('input[aria-label="Select “Dunes”"]');
    await page.fill('input[name=bulk_tags]', 'desert');
    await page.click('.bulk button:text("Add tag")');
    await page.waitForSelector('.tile:has-text("Dunes") .chip:text("desert")');
    await page.check('input[aria-label="Select “Cliffs”"]');
    await page.click('.bulk button:text("Delete")');
    await page.click('dialog button:text("Delete")');
    await page.waitForFunction(() => document.querySelectorAll('.tile').length === 1);
    // the picture at its own size, in a dialog; Escape brings the focus back
    await page.goto(srv.base + `/#/images/${one.id}`);
    await page.click('button:text("View full size")');
    const size = await page.waitForFunction(() => {
      const i = document.querySelector('dialog.full-view img');
      return i && i.complete && i.naturalWidth ? [i.naturalWidth, i.getBoundingClientRect().width] : null;
    });
    const [natural, shown] = await size.jsonValue();
    assert.equal(natural, 1024);
    assert.equal(Math.round(shown), 1024, 'shown at its full size');
    await shot(page, 'organize-full-size');
    await page.keyboard.press('Escape');
    await page.waitForSelector('dialog.full-view', {state: 'detached'});
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'View full size');
  }));

  test('a read-only session selects documents to export, and has no control that changes them', () => withPage(async (page) => {
    srv.key('rho');
    const w = srv.key('rho');
    await doc(w, {name: 'Kept'});
    await image(w, {name: 'Shot'});
    const read = srv.cli('key', 'create', '--user', 'rho', '--scope', 'read').trim();
    await signIn(page, srv, read);
    await page.waitForSelector('.card input.pick');
    await page.check('input[name=select_all]');
    assert.ok(await page.isVisible('.bulk button:text("Download ZIP")'));
    for (const label of ['Favourite', 'Unfavourite', 'Add tag', 'Remove tag', 'Delete']) {
      assert.equal(await page.locator(`.bulk button:text-is("${label}")`).filter({visible: true}).count(), 0, label);
    }
    await page.goto(srv.base + '/#/images');
    await page.waitForSelector('.tile');
    assert.equal(await page.locator('.tile input.pick').filter({visible: true}).count(), 0);
    await page.goto(srv.base + `/#/images/${(await get(w, '/images'))[0].id}`);
    await page.waitForSelector('.tags-edit');
    assert.equal(await page.locator('button:text("Add tags")').filter({visible: true}).count(), 0);
  }));
});

describe('revisions people can read', () => {
  test('side by side, paragraph by paragraph, changed words marked; the action named; axe clean, light and dark, phone and desktop', () => withPage(async (page) => {
    const key = srv.key('rex');
    const d = await doc(key, {name: 'Three paragraphs'});
    await srv.api('PATCH', `/documents/${d.id}`, key, {result: 'Tea wakes the mind.\n\nGreen tea keeps me calm every morning.\n\nThe kettle sings.'});
    await srv.api('PATCH', `/documents/${d.id}`, key, {result: 'Tea wakes the mind.\n\nGreen tea keeps me awake every single morning.\n\nA new last line.'});
    const act = await srv.api('POST', `/documents/${d.id}/actions`, key, {action: 'expand'});
    assert.equal(act.status, 200, act.text);
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/documents/${d.id}`);
    // the action made revision 4 (its text changed): named in the list
    const total = (await srv.api('GET', `/documents/${d.id}/revisions`, key)).json.meta.total;
    assert.equal(total, 4, 'the action made a revision');
    await page.waitForFunction((n) => document.querySelectorAll('.revisions li.rev').length === n, total);
    assert.match((await page.locator('.revisions li.rev').allInnerTexts())[0], /Revision 4 · Rewritten: Expand/);
    // the current text back to revision 3's; revision 2 against it
    await srv.api('PATCH', `/documents/${d.id}`, key, {result: 'Tea wakes the mind.\n\nGreen tea keeps me awake every single morning.\n\nA new last line.'});
    await page.reload();
    await page.waitForSelector('button[aria-label="Show revision 2"]');
    await page.click('button[aria-label="Show revision 2"]');
    await page.waitForSelector('.rev-view table.sbs');
    const rows = await page.$$eval('.rev-view table.sbs tbody tr', (trs) => trs.map((tr) => [tr.className, ...[...tr.cells].map((c) => c.textContent)]));
    assert.deepEqual(rows, [
      ['same', 'Tea wakes the mind.', 'Tea wakes the mind.'],
      ['changed', 'Green tea keeps me calm every morning.', 'Green tea keeps me awake every single morning.'],
      ['changed', 'The kettle sings.', 'A new last line.'],
    ]);
    assert.deepEqual(await page.$$eval('.rev-view tr.changed:nth-child(2) del', (es) => es.map((e) => e.textContent)), ['calm']);
    assert.deepEqual(await page.$$eval('.rev-view tr.changed:nth-child(2) ins', (es) => es.map((e) => e.textContent)), ['awake', ' single']);
    const found = [];
    for (const [scheme, vp] of [['light', {width: 1280, height: 800}], ['dark', {width: 1280, height: 800}], ['light', {width: 390, height: 844}], ['dark', {width: 390, height: 844}]]) {
      await page.emulateMedia({colorScheme: scheme});
      await page.setViewportSize(vp);
      await page.locator('.rev-view table.sbs').scrollIntoViewIfNeeded();
      found.push(...await axe(page, `diff ${scheme} ${vp.width}`));
      await shot(page, `organize-diff-${vp.width < 600 ? 'phone' : 'desktop'}-${scheme}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${vp.width}: ${overflow}px wider than the screen`);
    }
    assert.deepEqual(found, []);
    // Restore: the page is drawn again; the focus on its heading, not <body>
    await page.setViewportSize({width: 1280, height: 800});
    await page.click('.rev-view button:text("Restore")');
    await page.waitForSelector('.toast:has-text("restored as revision")');
    await page.waitForFunction(() => document.activeElement && document.activeElement !== document.body);
    assert.equal(await page.evaluate(() => document.activeElement.tagName), 'H1');
  }));
});

describe('pickers', () => {
  test('templates grouped, own first, searched (empty groups hidden); languages offered, any tag allowed', () => withPage(async (page) => {
    const key = srv.key('pia');
    const mine = (await srv.api('POST', '/templates', key, {name: 'Tea haiku', description: 'A haiku about tea.', instruction: 'Write a haiku.'})).json.data;
    await signIn(page, srv, key);
    await page.goto(srv.base + '/#/documents/new');
    await page.waitForSelector('.picker-list .tgroup');
    const groups = await page.locator('.tgroup-name').allTextContents();
    assert.deepEqual(groups, ['Your templates', 'Start', 'Blog', 'Ads and sales', 'Social media and video', 'Web pages', 'Email and notifications', 'Other']);
    const values = await page.$$eval('.picker-list input[name=template_id]', (is) => is.map((i) => i.value));
    assert.equal(values.length, 53);
    assert.equal(values[0], String(mine.id), 'own templates first');
    assert.equal(new Set(values).size, 53, 'each once');
    assert.equal(await page.locator('.picker-list input[value="1"]').isChecked(), true, 'Freestyle chosen by default');
    assert.match(await page.locator('.tgroup:has(.tgroup-name:text("Email and notifications"))').textContent(), /Welcome email/);
    await page.fill('.picker fieldset input[type=search], fieldset[data-field=template_id] input[type=search]', 'blog title');
    await page.waitForFunction(() => [...document.querySelectorAll('.tgroup')].filter((g) => !g.hidden).length === 1);
    assert.deepEqual(await page.locator('.tgroup:visible .tgroup-name').allTextContents(), ['Blog']);
    await page.fill('fieldset[data-field=template_id] input[type=search]', '');
    // the language: common ones offered by the field's list, and any tag may be typed
    const offered = await page.$$eval('input[name=language]', (is) => [...is[0].list.options].map((o) => o.value));
    for (const l of ['en', 'de', 'ja', 'pt-BR', 'zh-Hans']) assert.ok(offered.includes(l), l);
    await page.fill('input[name=name]', 'Gaelic');
    await page.fill('textarea[name=prompt]', 'about tea');
    await page.fill('input[name=language]', 'gd');
    page.allow(/status of 422/);
    await page.click('button:text("Write it")');
    // the builtin generator writes English only: the server's answer under Language
    await page.waitForSelector('[data-field=language] .err:not([hidden])');
    assert.deepEqual(await axe(page, 'new document'), []);
  }));
});

describe('defects of issue 35', () => {
  test('"1 document", not "1 documents"', () => withPage(async (page) => {
    const key = srv.key('uno');
    await doc(key, {name: 'Only one'});
    await signIn(page, srv, key);
    await page.waitForFunction(() => document.querySelector('.summary')?.textContent === 'Showing 1–1 of 1 document');
  }));

  test('the Template filter shows the chosen template’s name whole (desktop and phone)', () => withPage(async (page) => {
    const key = srv.key('clip');
    await doc(key, {name: 'Any'});
    await signIn(page, srv, key);
    for (const vp of [{width: 1280, height: 800}, {width: 390, height: 844}]) {
      await page.setViewportSize(vp);
      await page.goto(srv.base + '/#/documents?template_id=1');
      await page.waitForSelector('select[name=template_id] option[value="30"]', {state: 'attached'});
      if (vp.width < 600) await page.click('.filters-box > summary');
      // every option's text fits in the select (its width less the arrow and padding)
      const cut = await page.evaluate(() => {
        const sel = document.querySelector('select[name=template_id]');
        const cs = getComputedStyle(sel);
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
        const room = sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 20;
        return [...sel.options].filter((o) => ctx.measureText(o.text).width > room).map((o) => o.text);
      });
      assert.deepEqual(cut, [], `${vp.width}px: cut names`);
    }
  }));

  test('an unknown address shows "Page not found", not the documents', () => withPage(async (page) => {
    const key = srv.key('nof');
    await signIn(page, srv, key);
    await page.goto(srv.base + '/#/no-such-page');
    await page.waitForSelector('h1:text("Page not found")');
    assert.equal(await page.title(), 'Page not found — inkwell');
    assert.equal(await page.evaluate(() => location.hash), '#/no-such-page', 'the address stays');
    assert.deepEqual(await axe(page, 'not found'), []);
    await page.click('a:text("Go to your documents")');
    await page.waitForSelector('h1:text("Documents")');
  }));

  test('the focus stays on a star after toggling it (list and record)', () => withPage(async (page) => {
    const key = srv.key('sta');
    const d = await doc(key, {name: 'Starred'});
    await signIn(page, srv, key);
    await page.waitForSelector('.card .star');
    await page.focus('.card .star');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.card .star[aria-pressed=true]:not([aria-busy])');
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('star')), true, 'focus on the star, not <body>');
    assert.equal((await get(key, `/documents/${d.id}`)).favorite, true);
    await page.keyboard.press('Enter');
    await page.waitForSelector('.card .star[aria-pressed=false]:not([aria-busy])');
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('star')), true);
  }));

  test('a server stopped mid-stream: a link to the document, and no second one from "Write it"', () => withPage(async (page) => {
    page.allow(/ERR_|Failed to load|network/i);
    const s = await new Server('--builtin-delay-ms', String(60000 * (Number(process.env.INKWELL_TEST_SLOW) || 1))).start();
    try {
      const key = s.key('cut');
      await signIn(page, s, key);
      await page.goto(s.base + '/#/documents/new');
      await page.waitForSelector('.picker-list label');
      await page.fill('input[name=name]', 'Interrupted');
      await page.fill('textarea[name=prompt]', 'about tea');
      await page.click('button:text("Write it")');
      await page.waitForSelector('section.live[aria-busy=true]'); // the record event came: it exists
      const id = (await s.api('GET', '/documents', key)).json.data[0].id;
      s.proc.kill('SIGKILL');
      await s.exited;
      await page.waitForSelector(`section.live a[href="#/documents/${id}"]`);
      assert.match(await page.textContent('section.live .status'), /connection to the server was lost/);
      assert.equal(await page.isEnabled('button:text("Write it")'), false, 'a second click would make a duplicate');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Open the document');
    } finally {
      fs.rmSync(s.dataDir, {recursive: true, force: true});
    }
  }));
});

describe('accessibility and screenshots', () => {
  test('no axe-core violation: the list with a selection, images, an image with its tags, the full view; light and dark, desktop and phone', () => withPage(async (page) => {
    const key = srv.key('axo');
    for (const [n, t] of [['Morning notes', 'journal, tea'], ['Launch plan for the new autumn collection of teas', 'work'], ['Recipe', '']]) await doc(key, {name: n, tags: t});
    const img = await image(key, {name: 'Harbour at dusk', tags: 'sea, evening', resolution: '1792x1024'});
    const pages = [
      ['organize-documents', '#/documents', async () => {
        await page.waitForSelector('.card input.pick');
        await page.check('input[aria-label="Select “Recipe”"]');
        await page.waitForSelector('.bulk:not([hidden])');
      }],
      ['organize-images', '#/images', () => page.waitForSelector('.tile .chip')],
      ['organize-image', `#/images/${img.id}`, async () => {
        await page.click('button:text("Edit tags")');
        await page.waitForSelector('input[name=tags]');
      }],
      ['organize-full', `#/images/${img.id}`, async () => {
        await page.click('button:text("View full size")');
        await page.waitForSelector('dialog.full-view img');
      }],
    ];
    const found = [];
    for (const [scheme, vp] of [['light', {width: 1280, height: 800}], ['dark', {width: 1280, height: 800}], ['light', {width: 390, height: 844}], ['dark', {width: 390, height: 844}]]) {
      await page.emulateMedia({colorScheme: scheme});
      await page.setViewportSize(vp);
      const form = vp.width < 600 ? 'phone' : 'desktop';
      for (const [name, hash, ready] of pages) {
        await page.goto(srv.base + '/#/signin');
        await useKey(page, key);
        await page.goto(srv.base + '/' + hash);
        await page.waitForSelector('#main h1');
        await page.waitForFunction(() => !document.querySelector('[aria-busy=true]'));
        await ready();
        found.push(...await axe(page, `${name} ${scheme} ${form}`));
        await shot(page, `${name}-${form}-${scheme}`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        if (name !== 'organize-full') assert.ok(overflow <= 0, `${name} ${form}: ${overflow}px wider than the screen`);
      }
    }
    assert.deepEqual(found, []);
  }));
});
