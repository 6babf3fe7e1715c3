// editor.test.mjs — the document editor of issue 35 in Chromium (web/edit.js on the
// CodeMirror 6 bundle web/vendor/editor.min.js): editing in place with live counts and
// Ctrl+S; the round trip (opening and saving without a change changes no byte: the
// builtin's outputs for many templates and hand cases in every script); rewriting a
// selection across formatting, paragraphs and a repeated phrase (exactly that part
// changes) with one-click Undo; the draft kept as one types and coming back after a
// reload, in a second tab, stale beside the new text, and after the session ended;
// word counts equal to the server's `words` (English, Japanese, Chinese); "/" and
// Ctrl+Enter; the toolbar inside a phone's viewport; no axe-core violation in each
// state, light and dark, desktop and phone; the documents list loads without the editor.
import {after, before, describe, test} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {createRequire} from 'node:module';
import {editorText, fillEditor, launch, newPage, Server, shot, signIn, useKey, useNoSession, pageRunner} from './lib.mjs';

const require = createRequire(import.meta.url);
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
let srv, browser, key;

before(async () => {
  srv = await new Server().start();
  browser = await launch();
  key = srv.key('writer');
});
after(async () => {
  await browser?.close();
  await srv?.stop();
});

const withPage = pageRunner(() => browser);

const create = async (fields) => (await srv.api('POST', '/documents', key, {prompt: 'green tea', template_id: '9', ...fields})).json.data;
const get = async (id) => (await srv.api('GET', `/documents/${id}`, key)).json.data;
const setResult = async (id, result) => {
  const r = await srv.api('PATCH', `/documents/${id}`, key, {result});
  assert.equal(r.status, 200, r.text);
  return r.json.data;
};
const withText = async (text, name = 'Hand case') => setResult((await create({name})).id, text);

async function openEditor(page, id) {
  await page.goto(srv.base + `/#/documents/${id}`);
  await page.click('button:text-is("Edit")');
  await page.waitForSelector('.editor-host[data-ready] .cm-content');
}
// selects [from, to) (UTF-16 indexes of the text) in the editor, as a drag would
async function selectRange(page, from, to) {
  await page.evaluate(([a, b]) => {
    const v = document.querySelector('.editor-host').editorView;
    v.focus();
    v.dispatch({selection: {anchor: a, head: b}, scrollIntoView: true});
  }, [from, to]);
  await page.waitForSelector('.seltool:not([hidden])');
}
// waits until the element's text matches re
const waitText = (page, css, re) => page.waitForFunction(([c, src]) => new RegExp(src).test(document.querySelector(c)?.textContent || ''), [css, re.source]);
async function axe(page, what) {
  if (!await page.evaluate(() => typeof window.axe === 'object')) await page.evaluate(AXE);
  const r = await page.evaluate(() => window.axe.run(document, {resultTypes: ['violations']}));
  assert.deepEqual(r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [], `axe on ${what}`);
}
const draftOf = async (id) => srv.api('GET', `/documents/${id}/draft`, key);

const HAND = [
  '# A heading\n\nA paragraph with *emphasis*, **strong**, `code` and a [link](https://example.org/).\n\n## Second\n\n- one\n- two\n  - nested\n\n1. first\n2. second\n',
  'Line one  \nline two with a hard break\\\nline three\n\n> a quote\n\n---\n\nno newline at the end',
  'Windows line ends\r\nstay as they are\r\n\r\nand a lone \r carriage return\n',
  '\tTabs\tinside\tand  double  spaces, trailing spaces   \n\n\n\nmany blank lines\n\n',
  'Русский текст, Ελληνικά, עברית ומספרים 123, العربية مع تشكيل: مَرْحَبًا\n',
  'हिन्दी देवनागरी, ไทยภาษาไทยไม่มีช่องว่าง, 한국어 문장입니다, ქართული, Հայերեն\n',
  '日本語の文章です。東京へ行きます。\n\n中文的句子没有空格。我们去北京。\n',
  'Emoji: 👩🏽‍💻 🇩🇪 ❤️ 👍🏻 family 👨‍👩‍👧‍👦, combining e\u0301 and NFD a\u0308, NBSP\u00a0here, zero\u200bwidth\n',
  '* bullet star\n+ bullet plus\n\n***bold italic*** and __underscores__ and ~~struck~~\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [ ] task\n- [x] done\n',
  '```\ncode block with <html> & \"quotes\"\n```\n\n    indented code\n\n<div>raw html</div>\n',
];

describe('the document editor', () => {
  test('the documents list loads without the editor; Edit loads it, in place, with live counts; Ctrl+S saves', () => withPage(async (page) => {
    const loaded = [];
    page.on('request', (r) => { if (r.url().includes('editor.min.js')) loaded.push(r.url()); });
    const d = await withText('# Tea\n\nGreen tea is calm.\n', 'Edit in place');
    await signIn(page, srv, key);
    await page.waitForSelector('.card');
    assert.deepEqual(loaded, [], 'the list does not load the editor');
    await page.goto(srv.base + `/#/documents/${d.id}`);
    await page.waitForSelector('h1:text("Edit in place")');
    await page.click('button:text-is("Edit")');
    await page.waitForSelector('.editor-host[data-ready] .cm-content');
    assert.equal(loaded.length, 1, 'Edit loads the editor once');
    assert.equal(await editorText(page), '# Tea\n\nGreen tea is calm.\n');
    // live preview: the heading is styled, its mark dimmed, the text stays Markdown
    assert.equal(await page.locator('.cm-content .md-h1').count() > 0, true);
    assert.match(await page.textContent('.stats'), /^5 words · 26 characters · 1 min read$/);
    // typing at the end: the counts follow
    await page.click('.cm-content');
    await page.keyboard.press('Control+End');
    await page.keyboard.type('It is good.');
    await page.waitForFunction(() => document.querySelector('.stats').textContent.startsWith('8 words'));
    await page.keyboard.press('Control+s');
    await waitText(page, '.draft-state', /Saved: revision/);
    const after1 = await get(d.id);
    assert.equal(after1.result, '# Tea\n\nGreen tea is calm.\nIt is good.');
    assert.equal(after1.words, 8);
    assert.equal(await page.locator('.editor-host').count(), 1, 'Ctrl+S stays in the editor');
    // Ctrl+B and Ctrl+I put the selection between Markdown's marks, and again take it out
    const calm = (await editorText(page)).indexOf('calm');
    await selectRange(page, calm, calm + 4);
    await page.keyboard.press('Control+b');
    await page.waitForFunction(() => document.querySelector('.editor-host').editorView.state.doc.toString().includes('is **calm**.'));
    await page.keyboard.press('Control+i');
    await page.waitForFunction(() => document.querySelector('.editor-host').editorView.state.doc.toString().includes('is ***calm***.'));
    await page.keyboard.press('Control+i');
    await page.keyboard.press('Control+b');
    await page.waitForFunction(() => document.querySelector('.editor-host').editorView.state.doc.toString().includes('is calm.'));
    await page.keyboard.press('Escape'); // the toolbar closes; the editor stays
    await page.keyboard.press('Control+End');
    // Ctrl+Enter saves and closes
    await page.keyboard.type(' More.');
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('h1:text-is("Edit in place")');
    assert.equal((await get(d.id)).result, '# Tea\n\nGreen tea is calm.\nIt is good. More.');
    await shot(page, 'editor-saved-desktop-light');
  }));

  test('the round trip: opening and saving without a change changes no byte (builtin outputs of many templates, hand cases)', () => withPage(async (page) => {
    const ids = [];
    for (const t of [1, 2, 3, 5, 8, 9, 12, 15, 20, 24, 30, 36, 41, 47, 52]) {
      const r = await srv.api('POST', '/documents', key, {name: `Template ${t}`, prompt: 'a walk by the sea at dawn', template_id: String(t)});
      assert.equal(r.status, 201, r.text);
      ids.push(r.json.data.id);
    }
    for (const [i, text] of HAND.entries()) ids.push((await withText(text, `Hand ${i}`)).id);
    await signIn(page, srv, key);
    for (const id of ids) {
      const before = await get(id);
      await openEditor(page, id);
      assert.equal(await editorText(page), before.result, `the editor holds the stored text of ${before.name}`);
      await page.click('button:text-is("Save")');
      await page.waitForSelector('button:text-is("Edit")');
      const after1 = await get(id);
      assert.equal(Buffer.from(after1.result).equals(Buffer.from(before.result)), true, `no byte changed in ${before.name}`);
      assert.equal(after1.words, before.words);
    }
  }));

  test('live counts equal the server\'s words (English, Japanese, Chinese, mixed)', () => withPage(async (page) => {
    await signIn(page, srv, key);
    for (const text of ['The quick brown fox jumps over the lazy dog.', '日本語の文章です。東京へ行きます。私は学生です。',
      '中文的句子没有空格。我们去北京。', 'Mixed 日本語 and English, 中文 too.', HAND[5], HAND[7]]) {
      const d = await withText(text);
      const n = await page.evaluate(async (t) => (await import('/words.js')).countWords(t), text);
      assert.equal(n, d.words, `words of ${JSON.stringify(text)}`);
      await openEditor(page, d.id);
      assert.match(await page.textContent('.stats'), new RegExp(`^${d.words.toLocaleString('en')} words? ·`));
      await page.click('button:text-is("Cancel")');
      await page.waitForSelector('button:text-is("Edit")');
    }
    assert.ok((await withText('日本語の文章です。東京へ行きます。')).words > 3, 'a Japanese sentence is several words');
  }));

  test('rewriting a selection across formatting, paragraphs and a repeated phrase changes exactly that part; Undo restores', () => withPage(async (page) => {
    const text = '# Tea notes\n\nTea is good. I like **green tea** in the morning. It is calm, and it is warm. Tea is good.\n\n' +
      'Tea is good. Black tea is strong. It wakes me up. Tea is good.\n\nTea is good.\n';
    const d = await withText(text, 'Rewrite parts');
    await signIn(page, srv, key);
    await openEditor(page, d.id);
    // 1. across bold and into the next paragraph
    const from = text.indexOf('I like **green'), to = text.indexOf(' Tea is good.\n\nTea is good.\n');
    await selectRange(page, from, to);
    await axe(page, 'the selection toolbar');
    await shot(page, 'editor-selection-desktop-light');
    await page.click('.seltool button[data-action=shorten]');
    await page.waitForSelector('.undo-bar:not([hidden]) button:text("Undo"), .toast').catch(() => {});
    if (!await page.locator('.undo-bar:not([hidden])').count()) assert.fail(`no undo bar: ${await page.textContent('#toasts')}`);
    const r1 = await get(d.id);
    assert.equal(r1.revision, d.revision + 1);
    assert.equal(r1.result.slice(0, from), text.slice(0, from), 'the text before is kept');
    assert.ok(r1.result.endsWith(text.slice(to)), 'the text after is kept');
    assert.notEqual(r1.result, text);
    assert.equal(await editorText(page), r1.result, 'the editor shows the new text');
    assert.ok(await page.locator('.cm-rewritten').count() > 0, 'the rewritten part is marked');
    await shot(page, 'editor-rewritten-desktop-light');
    // 2. Undo: the revision before comes back
    await page.click('.undo-bar button:text("Undo")');
    await waitText(page, '.undo-bar', /Undone/);
    assert.match(await page.textContent('.undo-bar'), /Undone/, await page.textContent('#toasts'));
    const r2 = await get(d.id);
    assert.equal(r2.result, text);
    assert.equal(r2.revision, d.revision + 2);
    assert.equal(await editorText(page), text);
    // 3. the third "Tea is good." of four: only it changes
    let at = -1;
    for (let k = 0; k < 3; k++) at = text.indexOf('Tea is good.', at + 1);
    const end = at + 'Tea is good.'.length;
    await selectRange(page, at, end);
    await page.click('.seltool button[data-action=expand]');
    await waitText(page, '.undo-bar', /Expand/);
    const r3 = await get(d.id);
    assert.equal(r3.result.slice(0, at), text.slice(0, at));
    assert.ok(r3.result.endsWith(text.slice(end)));
    assert.ok(r3.result.length > text.length);
    // 4. unsaved changes are saved first, and offsets count code points (emoji before)
    await page.click('.cm-content');
    await page.keyboard.press('Control+Home');
    await page.keyboard.type('🍵 ');
    const now = await editorText(page);
    const i = now.indexOf('Black tea is strong');
    await selectRange(page, i, i + 'Black tea is strong'.length);
    await page.click('.seltool button:text("Tone…")');
    await page.selectOption('.seltool select[name=tone]', 'formal');
    await page.click('.seltool button:text("Change the tone")');
    await waitText(page, '.undo-bar', /Change tone/);
    const r4 = await get(d.id);
    assert.equal(r4.result.slice(0, i), now.slice(0, i));
    assert.ok(r4.result.endsWith(now.slice(i + 'Black tea is strong'.length)));
    assert.equal(r4.tone, 'formal');
    // Escape closes the toolbar, not the editor
    await selectRange(page, 0, 2);
    await page.keyboard.press('Escape');
    await page.waitForSelector('.seltool[hidden]', {state: 'attached'});
    assert.equal(await page.locator('.editor-host').count(), 1);
  }));

  test('the rendered view maps a selection to the Markdown too: across bold, a link and two paragraphs, and one of many repeats', () => withPage(async (page) => {
    const text = '## Morning\n\nTea is good. I like **green tea** and [the sea](https://example.org/) at dawn. It is calm, and it is warm.\n\n' +
      'Tea is good. Black tea is strong. It wakes me up. Tea is good.\n\n- Tea is good.\n- Tea is good.\n';
    const d = await withText(text, 'View selections');
    await signIn(page, srv, key);
    await page.goto(srv.base + `/#/documents/${d.id}`);
    await page.waitForSelector('.doc-text.md [data-src]');
    // a DOM range from the nth text node holding a to the mth holding b (as a drag makes)
    const select = (a, na, b, nb, endOfB) => page.evaluate(([a1, n1, b1, n2, e]) => {
      const root = document.querySelector('.doc-text.md');
      const find = (str, nth) => {
        const w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        const all = [];
        for (let n = w.nextNode(); n; n = w.nextNode()) {
          for (let i = n.data.indexOf(str); i >= 0; i = n.data.indexOf(str, i + 1)) all.push([n, i]);
        }
        const hit = all.at(nth); // -1: the last
        if (!hit) throw new Error(`no ${str} #${nth}`);
        return hit;
      };
      const [sn, si] = find(a1, n1), [en, ei] = find(b1, n2);
      const r = document.createRange();
      r.setStart(sn, si);
      r.setEnd(en, ei + (e ? b1.length : 0));
      const s = document.getSelection();
      s.removeAllRanges();
      s.addRange(r);
    }, [a, na, b, nb, endOfB]);
    const offered = async () => {
      await page.waitForSelector('.acts .scope label:has-text("The selected text")');
      return page.textContent('.acts .scope label:has-text("The selected text")');
    };
    // from inside the bold, over the link, into the second paragraph
    await select('green', 0, 'Black tea is strong.', 0, true);
    await page.click('button:text-is("Actions…")');
    const from = text.indexOf('green tea**'), to = text.indexOf('Black tea is strong.') + 'Black tea is strong.'.length;
    assert.match(await offered(), /green tea/);
    await page.selectOption('.acts select[name=action]', 'shorten');
    const sent = page.waitForRequest((r) => r.url().endsWith(`/documents/${d.id}/actions`));
    await page.click('.acts button[type=submit]');
    const body = new URLSearchParams((await sent).postData());
    assert.deepEqual([body.get('selection_start'), body.get('selection_end')], [String(from), String(to)], 'the exact part of the Markdown');
    await page.waitForFunction((r) => document.querySelector('dd.revision')?.textContent === String(r), d.revision + 1);
    const r1 = await get(d.id);
    assert.equal(r1.result.slice(0, from), text.slice(0, from));
    assert.ok(r1.result.endsWith(text.slice(to)));
    // the fourth "Tea is good." (the second of the second paragraph) of six
    await page.waitForSelector('.doc-text.md [data-src]');
    await select('Tea is good.', 3, 'Tea is good.', 3, true);
    await page.click('button:text-is("Actions…")');
    await offered();
    await page.selectOption('.acts select[name=action]', 'expand');
    const sent2 = page.waitForRequest((r) => r.url().endsWith(`/documents/${d.id}/actions`));
    await page.click('.acts button[type=submit]');
    const body2 = new URLSearchParams((await sent2).postData());
    let at = -1;
    for (let k = 0; k < 4; k++) at = r1.result.indexOf('Tea is good.', at + 1);
    assert.deepEqual([body2.get('selection_start'), body2.get('selection_end')], [String(at), String(at + 12)]);
    await page.waitForFunction((r) => document.querySelector('dd.revision')?.textContent === String(r), d.revision + 2);
    // a list item
    await page.waitForSelector('.doc-text.md [data-src]');
    const r2 = await get(d.id);
    await select('Tea is good.', -1, 'Tea is good.', -1, true);
    await page.click('button:text-is("Actions…")');
    assert.equal(await offered(), 'The selected text: “Tea is good.”');
    const last = [...r2.result.slice(0, r2.result.lastIndexOf('Tea is good.'))].length;
    await page.selectOption('.acts select[name=action]', 'fix_grammar');
    const sent3 = page.waitForRequest((r) => r.url().endsWith(`/documents/${d.id}/actions`));
    await page.click('.acts button[type=submit]');
    const body3 = new URLSearchParams((await sent3).postData());
    assert.deepEqual([body3.get('selection_start'), body3.get('selection_end')], [String(last), String(last + 12)], 'the last list item');
    await page.waitForSelector('.toast:has-text("rewritten")');
    await page.waitForSelector('.doc-text.md [data-src]');
  }));

  test('the draft: kept as one types, back after a reload and in a second tab, stale beside the new text, discarded', () => withPage(async (page) => {
    const d = await withText('First text of the draft test.\n', 'Drafted');
    await signIn(page, srv, key);
    await openEditor(page, d.id);
    await page.click('.cm-content');
    await page.keyboard.press('Control+End');
    await page.keyboard.type('Words not saved yet.');
    await waitText(page, '.draft-state', /Draft kept/);
    const want = 'First text of the draft test.\nWords not saved yet.';
    assert.equal((await draftOf(d.id)).json.data.result, want);
    assert.equal((await get(d.id)).has_draft, true);
    assert.equal((await get(d.id)).result, 'First text of the draft test.\n', 'the document is not changed');
    // a reload (the guard is asked by the browser: accepted)
    page.removeAllListeners('dialog');
    page.on('dialog', (dl) => dl.accept().catch(() => {}));
    await page.reload();
    await page.click('button:text-is("Edit")');
    await page.waitForSelector('.draft-note:not([hidden])');
    assert.equal(await editorText(page), want);
    await axe(page, 'a restored draft');
    // a second tab
    const p2 = await browser.ctx.newPage(); // the same browser: signed in, as a second tab is
    const errs = [];
    p2.on('console', (m) => { if (m.type() === 'error') errs.push(m.text()); });
    try {
      await p2.goto(srv.base + `/#/documents/${d.id}`);
      await p2.click('button:text-is("Edit")');
      await p2.waitForSelector('.draft-note:not([hidden])');
      assert.equal(await editorText(p2), want);
      assert.deepEqual(errs, []);
    } finally { await p2.close(); }
    // stale: the document moved on (a regeneration) while the draft waited
    const regen = await srv.api('POST', `/documents/${d.id}/regenerate`, key);
    assert.equal(regen.status, 200, regen.text);
    assert.equal((await draftOf(d.id)).json.data.stale, true);
    await page.reload();
    await page.click('button:text-is("Edit")');
    await page.waitForSelector('.draft-beside:not([hidden])');
    assert.equal(await editorText(page), regen.json.data.result, 'the new text is in the editor');
    assert.equal(await page.textContent('.draft-beside .draft-text'), want, 'the draft beside it');
    await axe(page, 'a stale draft');
    await shot(page, 'editor-stale-draft-desktop-light');
    await page.click('.draft-beside button:text("Use the draft")');
    assert.equal(await editorText(page), want);
    // discarding: Cancel asks, and the draft is gone
    await page.click('button:text-is("Cancel")');
    await page.click('dialog button:text("Discard")');
    await page.waitForSelector('button:text-is("Edit")');
    for (let k = 0; k < 100 && (await draftOf(d.id)).status !== 404; k++) await page.waitForTimeout(50);
    assert.equal((await draftOf(d.id)).status, 404);
  }));

  test('leaving the page before the pause keeps the text as the draft (pagehide, keepalive)', () => withPage(async (page) => {
    const d = await withText('Start.\n', 'Leaving');
    await signIn(page, srv, key);
    await openEditor(page, d.id);
    await page.click('.cm-content');
    await page.keyboard.press('Control+End');
    await page.keyboard.insertText('Gone at once.');
    page.removeAllListeners('dialog');
    page.on('dialog', (dl) => dl.accept().catch(() => {}));
    await page.goto('about:blank'); // before the pause in typing is over: the page's leaving sends it
    let r;
    for (let k = 0; k < 200; k++) { r = await draftOf(d.id); if (r.status === 200) break; await new Promise((ok) => setTimeout(ok, 50)); }
    assert.equal(r.json?.data?.result, 'Start.\nGone at once.');
  }));

  test('a session that ends mid-edit keeps the text: it is there after signing in again', () => withPage(async (page) => {
    const d = await withText('Before the session ended.\n', 'Session ends');
    await signIn(page, srv, key);
    await openEditor(page, d.id);
    await page.click('.cm-content');
    await page.keyboard.press('Control+End');
    await page.keyboard.type('Typed while signed in.');
    await waitText(page, '.draft-state', /Draft kept/);
    page.allow(/status of 401/);
    page.removeAllListeners('dialog');
    page.on('dialog', (dl) => dl.accept().catch(() => {}));
    await useNoSession(page);
    await page.keyboard.type(' More.');
    await page.waitForSelector('text=You are signed out');
    assert.equal(await page.evaluate((id) => JSON.parse(sessionStorage.getItem('inkwell-unsaved-' + id)).result, d.id), 'Before the session ended.\nTyped while signed in. More.');
    await useKey(page, key);
    await page.goto(srv.base + `/#/documents/${d.id}`);
    await page.click('button:text-is("Edit")');
    await page.waitForSelector('.draft-note:not([hidden])');
    assert.equal(await editorText(page), 'Before the session ended.\nTyped while signed in. More.', 'even the words typed after the end');
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'nothing left in the tab');
  }));

  test('"/" searches, Ctrl+Enter writes', () => withPage(async (page) => {
    await signIn(page, srv, key);
    await page.goto(srv.base + '/#/documents/new');
    await page.waitForSelector('h1:text("New document")');
    await page.fill('input[name=name]', 'Written by Ctrl+Enter');
    await page.fill('textarea[name=prompt]', 'green tea');
    await page.press('textarea[name=prompt]', 'Control+Enter');
    await page.waitForSelector('h1:text("Written by Ctrl+Enter")');
    await page.locator('h1').first().focus();
    await page.keyboard.press('/');
    await page.waitForSelector('h1:text("Documents")');
    await page.waitForFunction(() => document.activeElement?.name === 'search');
  }));

  test('phone and desktop, light and dark: the toolbar opens where the selection is, inside the viewport; no axe violation', () => withPage(async (page) => {
    const long = Array.from({length: 30}, (_, k) => `Paragraph ${k + 1} about **tea** and the sea, with enough words to wrap on a phone.`).join('\n\n') + '\n';
    const d = await withText(long, 'Long text');
    await signIn(page, srv, key);
    for (const [vp, tag] of [[{width: 390, height: 844}, 'phone'], [{width: 1280, height: 800}, 'desktop']]) {
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({colorScheme: scheme});
        await page.setViewportSize(vp);
        await openEditor(page, d.id);
        await axe(page, `the editor, ${tag} ${scheme}`);
        const i = long.indexOf('Paragraph 24');
        await selectRange(page, i, i + 'Paragraph 24 about **tea**'.length);
        const box = await page.locator('.seltool').boundingBox();
        assert.ok(box.x >= 0 && box.y >= 0 && box.x + box.width <= vp.width && box.y + box.height <= vp.height, `toolbar in the viewport: ${JSON.stringify(box)}`);
        const sel = await page.evaluate(() => {
          const v = document.querySelector('.editor-host').editorView;
          const c = v.coordsAtPos(v.state.selection.main.head);
          return {top: c.top, bottom: c.bottom};
        });
        assert.ok(Math.abs(box.y - sel.bottom) < 120 || Math.abs(box.y + box.height - sel.top) < 120, 'next to the selection');
        await axe(page, `the selection toolbar, ${tag} ${scheme}`);
        await shot(page, `editor-toolbar-${tag}-${scheme}`);
        await page.keyboard.press('Escape');
        await page.click('button:text-is("Cancel")');
        await page.waitForSelector('button:text-is("Edit")');
      }
    }
  }));
});
