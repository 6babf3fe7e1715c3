// bench/lighthouse.sh's driver: one Chromium, the session's cookies set in it (so the
// app sees XSRF-TOKEN in document.cookie, as after a real sign-in), the browser cache
// cleared before every run (a cold load), then Lighthouse on each page, desktop preset
// and mobile (the default config). usage: node run.mjs BASE JAR KEEP_DIR PAGE...
// JAR: curl's cookie file of a signed-in session. Prints one line per run.
import fs from 'node:fs';
import * as chromeLauncher from 'chrome-launcher';
import puppeteer from 'puppeteer-core';
import lighthouse from 'lighthouse';
import desktop from 'lighthouse/core/config/desktop-config.js';

const [base, jarFile, keep, ...pages] = process.argv.slice(2);
const cookies = fs.readFileSync(jarFile, 'utf8').split('\n')
  .map((l) => l.replace(/^#HttpOnly_/, 'HTTPONLY ').split('\t')).filter((f) => f.length === 7 && !f[0].startsWith('#'))
  .map((f) => ({name: f[5], value: f[6], url: base, httpOnly: f[0].startsWith('HTTPONLY')}));
const chrome = await chromeLauncher.launch({chromePath: process.env.CHROME_PATH,
  chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu']});
const browser = await puppeteer.connect({browserURL: `http://127.0.0.1:${chrome.port}`});
const scope = ['accessibility', 'best-practices'];
try {
  for (const page of pages) {
    for (const form of ['desktop', 'mobile']) {
      const tab = await browser.newPage();
      const cdp = await tab.createCDPSession();
      await cdp.send('Network.clearBrowserCache');
      await cdp.send('Network.clearBrowserCookies');
      if (page !== '#/signin') await browser.setCookie(...cookies);
      const flags = {output: 'json', logLevel: 'error', disableStorageReset: true,
        onlyCategories: ['performance', ...scope]};
      let r;
      try { r = (await lighthouse(base + '/' + page, flags, form === 'desktop' ? desktop : undefined, tab)).lhr; }
      catch (err) { console.log(`${page.padEnd(20)} ${form.padEnd(8)} failed: ${err.message}`); await tab.close(); continue; }
      await tab.close();
      if (keep) fs.writeFileSync(`${keep}/${page.replace(/[^a-z0-9]/g, '_')}-${form}.json`, JSON.stringify(r));
      const c = r.categories, s = (k) => String(Math.round(c[k].score * 100)).padStart(5);
      const low = Object.values(r.audits).filter((a) => a.score !== null && a.score < 1 &&
        scope.some((k) => c[k].auditRefs.some((x) => x.id === a.id && x.weight > 0))).map((a) => a.id);
      if (r.runtimeError) low.unshift(`error: ${r.runtimeError.code}`);
      const landed = r.finalDisplayedUrl.slice(base.length + 1) === page ? '' : ` (ended at ${r.finalDisplayedUrl.slice(base.length + 1)})`;
      console.log(`${page.padEnd(20)} ${form.padEnd(8)} ${s('performance')} ${s('accessibility')} ${s('best-practices')} ` +
        `${(r.audits['cumulative-layout-shift'].numericValue?.toFixed(3) ?? 'n/a').padStart(6)}${landed}${low.length ? ' ' + low.join(',') : ''}`);
    }
  }
} finally {
  await browser.disconnect();
  chrome.kill();
}
