// writing.test.mjs — issue 35's last web-app features, in Chromium, each seen failing on
// the code before it: Copy puts rich text on the clipboard (text/html from the page's own
// Markdown rendering and text/plain without Markdown's marks); a document's page (and an
// image's) has a tag editor — chips with Remove, "Add a tag", keyboard only, the server's
// folding and its 422 —; a document whose template was deleted is regenerated with
// another chosen in the regenerate form's template picker; the focus after opening a
// record, toggling its star and restoring a revision is on the page, never <body>;
// axe-core clean in the new states, light and dark, phone and desktop (screenshots
// writing-* in build/screenshots/).
import {after, before, describe, test} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {createRequire} from 'node:module';
import {editorText, launch, Server, shot, signIn, pageRunner} from './lib.mjs';

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

const doc = async (key, fields) => (await srv.api('POST', '/documents', key, {prompt: 'tea and focus', ...fields})).json.data;
const get = async (key, p) => (await srv.api('GET', p, key)).json.data;
const active = (page) => page.evaluate(() => {
  const a = document.activeElement;
  return a === document.body || !a ? 'BODY' : `${a.tagName}:${a.getAttribute('aria-label') || a.textContent.trim().slice(0, 60)}`;
});

async function axe(page, what) {
  if (!await page.evaluate(() => typeof window.axe === 'object')) await page.evaluate(AXE);
  const r = await page.evaluate(() => window.axe.run(document, {resultTypes: ['violations']}));
  assert.deepEqual(r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [], `axe on ${what}`);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(wide <= 0, `${what}: ${wide} px wider than the screen`);
}

const MD = '# Morning notes\n\nSome **bold** words and a [link](https://example.com/).\nA second line.\n\n- one\n- two *three*\n\n1. first\n2. second\n';

describe('copy', () => {
  test('Copy text puts HTML and plain text (no # or **) on the clipboard', () => withPage(async (page) => {
    const key = srv.key('cora');
    const d = await doc(key, {name: 'Copy me'});
    assert.equal((await srv.api('PATCH', `/documents/${d.id}`, key, {result: MD})).status, 200);
    await browser.ctx.grantPermissions(['clipboard-read', 'clipboard-write'], {origin: srv.base});
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/documents/${d.id}`);
    await page.click('button:text("Copy text")');
    await page.waitForSelector('.toast:text("Text copied.")');
    const got = await page.evaluate(async () => {
      const [item] = await navigator.clipboard.read();
      const out = {types: [...item.types].sort()};
      for (const t of item.types) out[t] = await (await item.getType(t)).text();
      return out;
    });
    assert.deepEqual(got.types, ['text/html', 'text/plain']);
    // the HTML is the page's own rendering of the Markdown
    const shown = await page.evaluate(() => document.querySelector('.doc-text.md').innerText);
    const html = got['text/html'];
    for (const part of ['<h2>Morning notes</h2>', '<strong>bold</strong>', 'href="https://example.com/"', '<li>two <em>three</em></li>', '<ol>']) {
      assert.ok(html.includes(part), `${part} in ${html}`);
    }
    assert.ok(!/[#*]/.test(html.replace(/<[^>]*>/g, '')), 'no Markdown marks in the HTML text');
    assert.equal(got['text/plain'], 'Morning notes\n\nSome bold words and a link.\nA second line.\n\n• one\n• two three\n\n1. first\n2. second');
    assert.ok(shown.includes('Some bold words and a link.'));
  }));
});

describe('tags on a record’s page', () => {
  test('a document’s tags: add with Enter (folded duplicates dropped), remove with the keyboard, the 422 under the field', () => withPage(async (page) => {
    const key = srv.key('tad');
    const d = await doc(key, {name: 'Tagged', tags: 'Launch'});
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/documents/${d.id}`);
    await page.waitForSelector('.tags-edit .chip:text-is("Launch")');
    await page.focus('input[name=add_tags]');
    await page.keyboard.type('Q3, launch, Été');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.tags-edit .chip:text-is("Été")');
    assert.deepEqual((await get(key, `/documents/${d.id}`)).tags, ['Launch', 'Q3', 'Été']);
    assert.equal(await active(page), 'INPUT:', 'the focus back in the field');
    assert.equal(await page.inputValue('input[name=add_tags]'), '');
    // a chip is a link to its list
    assert.match(await page.getAttribute('.tags-edit .chip:text-is("Q3")', 'href'), /#\/documents\?tag=Q3/);
    // Backspace in the empty field: to the last chip's Remove; Enter removes it, the
    // focus on the Remove now at its place (the one before)
    await page.keyboard.press('Backspace');
    assert.equal(await active(page), 'BUTTON:Remove tag Été');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.querySelector('.tags-edit .chip[aria-label="Tag: Été"]'));
    assert.deepEqual((await get(key, `/documents/${d.id}`)).tags, ['Launch', 'Q3']);
    assert.equal(await active(page), 'BUTTON:Remove tag Q3');
    // Shift+Tab to the chip before and remove the first one
    await page.focus('button[aria-label="Remove tag Launch"]');
    await page.keyboard.press('Space');
    await page.waitForFunction(() => !document.querySelector('.tags-edit .chip[aria-label="Tag: Launch"]'));
    assert.equal(await active(page), 'BUTTON:Remove tag Q3');
    assert.deepEqual((await get(key, `/documents/${d.id}`)).tags, ['Q3']);
    // the list shows the record's tags
    // more than 20: the server's 422 under the field, nothing changed
    page.allow(/status of 422/);
    await page.fill('input[name=add_tags]', Array.from({length: 20}, (_, i) => `t${i}`).join(','));
    await page.press('input[name=add_tags]', 'Enter');
    await page.waitForSelector('.tags-add [data-field=tags] .err:not([hidden])');
    assert.equal(await page.getAttribute('input[name=add_tags]', 'aria-invalid'), 'true');
    assert.deepEqual((await get(key, `/documents/${d.id}`)).tags, ['Q3']);
    // an empty field is said, not sent
    await page.fill('input[name=add_tags]', ' , ');
    await page.press('input[name=add_tags]', 'Enter');
    await page.waitForSelector('.tags-add [data-field=tags] .err:text("Enter a tag")');
    // Edit tags (the whole list, rename by spelling) is there too
    await page.click('button:text("Edit tags")');
    await page.fill('input[name=tags]', 'q3, Later');
    await page.click('button:text("Save tags")');
    await page.waitForSelector('.tags-edit .chip:text-is("Later")');
    assert.deepEqual((await get(key, `/documents/${d.id}`)).tags, ['q3', 'Later']);
  }));

  test('an image’s page has the same editor; a read-only session sees the chips only', () => withPage(async (page) => {
    const key = srv.key('tai');
    const img = (await srv.api('POST', '/images', key, {description: 'hills at dawn', resolution: '1024x1024', name: 'Hills'})).json.data;
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/images/${img.id}`);
    await page.fill('input[name=add_tags]', 'Dawn');
    await page.press('input[name=add_tags]', 'Enter');
    await page.waitForSelector('.tags-edit .chip:text-is("Dawn")');
    assert.deepEqual((await get(key, `/images/${img.id}`)).tags, ['Dawn']);
    const read = srv.cli('key', 'create', '--user', 'tai', '--scope', 'read').trim();
    await page.evaluate(() => fetch('/api/v1/session', {method: 'DELETE'}));
    await signIn(page, srv, read);
    await page.goto(srv.base + `/#/images/${img.id}`);
    await page.waitForSelector('.tags-edit .chip:text-is("Dawn")');
    assert.equal(await page.locator('.tags-edit .chip-x, .tags-edit input').filter({visible: true}).count(), 0);
  }));
});

describe('regenerate', () => {
  test('a document whose template was deleted: the form asks for another, and regenerating with it works', () => withPage(async (page) => {
    const key = srv.key('reg');
    const tpl = (await srv.api('POST', '/templates', key, {name: 'Tea haiku', description: 'A haiku about tea.', instruction: 'Write a haiku.'})).json.data;
    const d = await doc(key, {name: 'Orphan', template_id: String(tpl.id)});
    assert.equal(d.template_id, tpl.id);
    assert.equal((await srv.api('DELETE', `/templates/${tpl.id}`, key)).status, 200);
    assert.equal((await srv.api('POST', `/documents/${d.id}/regenerate`, key)).status, 422, 'the API refuses without another');
    const blog = (await get(key, '/templates')).find((t) => t.id === 4);
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/documents/${d.id}`);
    await page.click('button:text-is("Regenerate")');
    await page.waitForSelector('.regen .alert.warn:text("was deleted")');
    assert.equal(await page.locator('.regen input[name=template_id]:checked').count(), 0, 'none chosen');
    // without a choice: said under the picker, nothing sent
    await page.click('.regen button[type=submit]');
    await page.waitForSelector('.regen [data-field=template_id] > .err:text("Choose a template")');
    // search, choose, regenerate
    await page.fill('.regen input[type=search]', blog.name);
    await page.check(`.regen input[name=template_id][value="4"]`);
    await page.click('.regen button[type=submit]');
    await page.waitForSelector('dd.revision:text-is("2")');
    const after = await get(key, `/documents/${d.id}`);
    assert.equal(after.template_id, 4);
    assert.equal(after.revision, 2);
    assert.equal(await page.textContent('dl.facts dd:nth-of-type(1)'), blog.name);
  }));

  test('a document whose template exists: the picker is folded under “choose another”, the current one chosen; another can be chosen', () => withPage(async (page) => {
    const key = srv.key('reh');
    const d = await doc(key, {name: 'Kept', template_id: '6'});
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/documents/${d.id}`);
    await page.click('button:text-is("Regenerate")');
    await page.waitForSelector('.regen details.tpl-change summary');
    assert.equal(await page.isVisible('.regen input[name=template_id][value="6"]'), false, 'folded away');
    assert.equal(await page.isChecked('.regen input[name=template_id][value="6"]'), true);
    await page.click('.regen details.tpl-change summary');
    await page.check('.regen input[name=template_id][value="1"]');
    await page.click('.regen button[type=submit]');
    await page.waitForSelector('dd.revision:text-is("2")');
    assert.equal((await get(key, `/documents/${d.id}`)).template_id, 1);
  }));
});

describe('focus', () => {
  test('opening a record (from the list and by address), a star toggled, a revision restored: the focus is never on <body>', () => withPage(async (page) => {
    const key = srv.key('foc');
    const d = await doc(key, {name: 'Focus doc'});
    await srv.api('PATCH', `/documents/${d.id}`, key, {result: 'A second text.'});
    const img = (await srv.api('POST', '/images', key, {description: 'a lake', resolution: '1024x1024', name: 'Lake'})).json.data;
    await signIn(page, srv, key);
    // from the list, with the keyboard
    await page.focus('a.title:text("Focus doc")');
    await page.keyboard.press('Enter');
    await page.waitForSelector('h1:text-is("Focus doc")');
    await page.waitForFunction(() => document.activeElement?.tagName === 'H1');
    assert.equal(await active(page), 'H1:Focus doc');
    // by its address (a reload)
    await page.reload();
    await page.waitForSelector('h1:text-is("Focus doc")');
    await page.waitForFunction(() => document.activeElement !== document.body);
    assert.equal(await active(page), 'H1:Focus doc');
    // the star keeps the focus after its toggle (keyboard)
    await page.focus('.head .star');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.head .star[aria-pressed=true]:not([aria-busy])');
    assert.match(await active(page), /^BUTTON:.*Favourite: Focus doc/);
    // a restore: the page drawn again, the focus on its heading
    await page.click('button[aria-label="Show revision 1"]');
    await page.click('.rev-view button:text("Restore")');
    await page.waitForSelector('dd.revision:text-is("3")');
    await page.waitForFunction(() => document.activeElement !== document.body);
    assert.equal(await active(page), 'H1:Focus doc');
    // an image, opened by its address
    await page.goto(srv.base + `/#/images/${img.id}`);
    await page.waitForSelector('h1:text-is("Lake")');
    await page.waitForFunction(() => document.activeElement !== document.body);
    assert.equal(await active(page), 'H1:Lake');
    // a record that does not exist: the focus on its heading too
    page.allow(/status of 404/);
    await page.goto(srv.base + '/#/documents/999999');
    await page.waitForSelector('.alert[role=alert]');
    await page.waitForFunction(() => document.activeElement !== document.body);
    assert.equal(await active(page), 'H1:Document');
  }));
});

describe('headings', () => {
  test('a text whose headings start at “##” shows them as h2 under the page’s h1 (no level skipped; axe heading-order)', () => withPage(async (page) => {
    const key = srv.key('hdg');
    const d = await doc(key, {name: 'Sections'});
    await srv.api('PATCH', `/documents/${d.id}`, key, {result: '## First\n\nText.\n\n### Inner\n\nMore.\n\n## Second\n'});
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/documents/${d.id}`);
    await page.waitForSelector('.doc-text h2');
    assert.deepEqual(await page.$$eval('.doc-text :is(h2, h3, h4)', (es) => es.map((e) => `${e.tagName}:${e.textContent}`)),
      ['H2:First', 'H3:Inner', 'H2:Second']);
    await axe(page, 'a text whose headings start at ##');
    // "#" stays an h2, and the copied HTML is the same rendering
    await srv.api('PATCH', `/documents/${d.id}`, key, {result: '# Top\n\n## Under\n'});
    await page.reload();
    await page.waitForSelector('.doc-text h2:text-is("Top")');
    assert.equal(await page.textContent('.doc-text h3'), 'Under');
  }));
});

describe('the editor’s live preview', () => {
  test('Markdown’s inline marks are hidden except on the cursor’s line (and all hidden without focus); the text is unchanged', () => withPage(async (page) => {
    const key = srv.key('liv');
    const d = await doc(key, {name: 'Live'});
    await srv.api('PATCH', `/documents/${d.id}`, key, {result: MD});
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/documents/${d.id}`);
    await page.click('button:text-is("Edit")');
    assert.equal(await editorText(page), MD);
    const lines = () => page.$$eval('.editor-host .cm-line', (els) => els.map((e) => e.textContent));
    // the cursor on the first line: its "# " shown, the other lines' marks hidden
    await page.focus('.editor-host .cm-content');
    await page.keyboard.press('Control+Home');
    await page.waitForFunction(() => document.querySelector('.editor-host .cm-line')?.textContent === '# Morning notes');
    let l = await lines();
    assert.equal(l[2], 'Some bold words and a link.');
    assert.equal(l[6], '- two three');
    // down to the paragraph: its marks shown, the heading's hidden
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction(() => document.querySelectorAll('.editor-host .cm-line')[2]?.textContent.includes('**'));
    l = await lines();
    assert.equal(l[0], 'Morning notes');
    assert.equal(l[2], 'Some **bold** words and a [link](https://example.com/).');
    await shot(page, 'writing-live-desktop-light');
    // without the focus: every mark hidden
    await page.focus('input[name=name]');
    await page.waitForFunction(() => !document.querySelectorAll('.editor-host .cm-line')[2]?.textContent.includes('**'));
    l = await lines();
    assert.equal(l[0], 'Morning notes');
    assert.equal(l[2], 'Some bold words and a link.');
    // a decoration only: the text is the stored one, and typing on a line edits its source
    assert.equal(await editorText(page), MD);
    await page.focus('.editor-host .cm-content');
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('End');
    await page.keyboard.type('!');
    assert.equal(await editorText(page), MD.replace('# Morning notes', '# Morning notes!'));
    for (const [tag, vp, scheme] of [['desktop', {width: 1280, height: 800}, 'dark'], ['phone', {width: 390, height: 844}, 'light'], ['phone', {width: 390, height: 844}, 'dark']]) {
      await page.emulateMedia({colorScheme: scheme});
      await page.setViewportSize(vp);
      await page.locator('.editor-host').scrollIntoViewIfNeeded();
      await axe(page, `the live preview, ${tag} ${scheme}`);
      await shot(page, `writing-live-${tag}-${scheme}`);
    }
    await page.setViewportSize({width: 1280, height: 800});
    await page.emulateMedia({colorScheme: 'light'});
  }));
});

describe('axe-core and screenshots', () => {
  test('the tag editor and the regenerate form with a deleted template: no violation, light and dark, phone and desktop', () => withPage(async (page) => {
    const key = srv.key('axw');
    const tpl = (await srv.api('POST', '/templates', key, {name: 'Gone soon', description: 'To be deleted.', instruction: 'Write.'})).json.data;
    const d = await doc(key, {name: 'Looked at', template_id: String(tpl.id), tags: 'Launch, Q3, A rather long tag name'});
    await srv.api('PATCH', `/documents/${d.id}`, key, {result: MD});
    await srv.api('DELETE', `/templates/${tpl.id}`, key);
    await signIn(page, srv, key);
    for (const [tag, vp] of [['desktop', {width: 1280, height: 800}], ['phone', {width: 390, height: 844}]]) {
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({colorScheme: scheme});
        await page.setViewportSize(vp);
        await page.goto(srv.base + `/#/documents/${d.id}`);
        await page.waitForSelector('.tags-edit .chip-x');
        await page.locator('.tags-edit').scrollIntoViewIfNeeded();
        await page.focus('button[aria-label="Remove tag Q3"]');
        await shot(page, `writing-tags-${tag}-${scheme}`);
        await axe(page, `the tag editor, ${tag} ${scheme}`);
        await page.click('button:text-is("Regenerate")');
        await page.waitForSelector('.regen .alert.warn');
        await page.click('.regen button[type=submit]');
        await page.waitForSelector('.regen [data-field=template_id] > .err:not([hidden])');
        await page.locator('.regen .alert.warn').scrollIntoViewIfNeeded();
        await shot(page, `writing-regen-${tag}-${scheme}`);
        await axe(page, `the regenerate form with a deleted template, ${tag} ${scheme}`);
      }
    }
    await page.setViewportSize({width: 1280, height: 800});
  }));
});
