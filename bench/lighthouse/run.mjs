// bench/lighthouse.sh's driver: one Chromium, the session's cookies set in it (so the
// app sees XSRF-TOKEN in document.cookie, as after a real sign-in), the browser cache
// cleared before every run (a cold load), then Lighthouse on each page, desktop preset
// and mobile (the default config), RUNS times over the whole list (interleaved, so a
// burst of load on the machine does not land on one page's runs only). Prints one line
// per page and form: the median performance score, the lowest accessibility and best
// practices, the median CLS, TBT and LCP, every run's performance score, and whether the
// targets are met. usage: node run.mjs BASE JAR KEEP_DIR RUNS PAGE...
// JAR: curl's cookie file of a signed-in session.
import fs from 'node:fs';
import * as chromeLauncher from 'chrome-launcher';
import puppeteer from 'puppeteer-core';
import lighthouse from 'lighthouse';
import desktop from 'lighthouse/core/config/desktop-config.js';

const [base, jarFile, keep, runsArg, ...pages] = process.argv.slice(2);
const runs = Math.max(1, Number(runsArg) || 1);
const cookies = fs.readFileSync(jarFile, 'utf8').split('\n')
  .map((l) => l.replace(/^#HttpOnly_/, 'HTTPONLY ').split('\t')).filter((f) => f.length === 7 && !f[0].startsWith('#'))
  .map((f) => ({name: f[5], value: f[6], url: base, httpOnly: f[0].startsWith('HTTPONLY')}));
const chrome = await chromeLauncher.launch({chromePath: process.env.CHROME_PATH,
  chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu']});
const browser = await puppeteer.connect({browserURL: `http://127.0.0.1:${chrome.port}`});
const scope = ['accessibility', 'best-practices'];
const forms = ['desktop', 'mobile'];
const results = new Map(); // "page form" → [{perf, a11y, bp, cls, tbt, lcp, low, landed}]

async function once(page, form, rep) {
  const tab = await browser.newPage();
  const cdp = await tab.createCDPSession();
  await cdp.send('Network.clearBrowserCache');
  await cdp.send('Network.clearBrowserCookies');
  if (page !== '#/signin') await browser.setCookie(...cookies);
  const flags = {output: 'json', logLevel: 'error', disableStorageReset: true,
    onlyCategories: ['performance', ...scope]};
  let r;
  try { r = (await lighthouse(base + '/' + page, flags, form === 'desktop' ? desktop : undefined, tab)).lhr; }
  catch (err) { await tab.close(); return {error: err.message}; }
  await tab.close();
  if (keep) fs.writeFileSync(`${keep}/${page.replace(/[^a-z0-9]/g, '_')}-${form}-${rep}.json`, JSON.stringify(r));
  const c = r.categories, score = (k) => Math.round((c[k].score ?? 0) * 100);
  const low = Object.values(r.audits).filter((a) => a.score !== null && a.score < 1 &&
    scope.some((k) => c[k].auditRefs.some((x) => x.id === a.id && x.weight > 0))).map((a) => a.id);
  if (r.runtimeError) return {error: r.runtimeError.code}; // no trace (NO_NAVSTART...): no figures
  const landed = r.finalDisplayedUrl.slice(base.length + 1) === page ? '' : r.finalDisplayedUrl.slice(base.length + 1);
  const num = (id) => r.audits[id]?.numericValue ?? NaN;
  return {perf: score('performance'), a11y: score('accessibility'), bp: score('best-practices'),
    cls: num('cumulative-layout-shift'), tbt: num('total-blocking-time'), lcp: num('largest-contentful-paint'),
    low, landed};
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

try {
  for (let rep = 0; rep < runs; rep++)
    for (const page of pages)
      for (const form of forms) {
        const k = `${page} ${form}`;
        if (!results.has(k)) results.set(k, []);
        let x = await once(page, form, rep);
        if (x.error) x = await once(page, form, rep); // a run Lighthouse could not measure: once more
        results.get(k).push(x);
      }
  let missed = 0;
  for (const page of pages)
    for (const form of forms) {
      const all = results.get(`${page} ${form}`), ok = all.filter((x) => !x.error);
      if (!ok.length) { missed++; console.log(`${page.padEnd(20)} ${form.padEnd(8)} failed: ${all[0].error}  NOT met`); continue; }
      const perf = median(ok.map((x) => x.perf)), a11y = Math.min(...ok.map((x) => x.a11y)),
        bp = Math.min(...ok.map((x) => x.bp));
      const met = perf >= 95 && a11y === 100 && bp === 100 && ok.length === all.length;
      if (!met) missed++;
      const low = [...new Set(ok.flatMap((x) => x.low))], landed = [...new Set(ok.map((x) => x.landed).filter(Boolean))];
      console.log(`${page.padEnd(20)} ${form.padEnd(8)} ${String(perf).padStart(5)} ${String(a11y).padStart(5)} ${String(bp).padStart(5)} ` +
        `${median(ok.map((x) => x.cls)).toFixed(3).padStart(6)} ${String(Math.round(median(ok.map((x) => x.tbt)))).padStart(5)} ` +
        `${String(Math.round(median(ok.map((x) => x.lcp)))).padStart(6)}  ${ok.map((x) => x.perf).join(',').padEnd(3 * runs)} ` +
        `${met ? 'met' : 'NOT met'}${ok.length < all.length ? ` (${all.length - ok.length} runs failed)` : ''}` +
        `${landed.length ? ` (ended at ${landed.join(', ')})` : ''}${low.length ? ' ' + low.join(',') : ''}`);
    }
  console.log(`${missed ? missed + ' of ' + pages.length * forms.length + ' lines NOT met' : 'every line met'}`);
} finally {
  await browser.disconnect();
  chrome.kill();
}
