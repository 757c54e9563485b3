/**
 * The Case Attributes webview (webview-ui/caseAttributes.ts, page src/ui/cases/caseAttributesPage.ts) in
 * headless Chromium under its real CSP: hostile case and attribute names and values are rendered as text and
 * nothing runs; the grid is keyboard-usable (arrow keys move the one focusable cell, typing edits, Enter
 * saves as a typed `setCell` message, a value not of the column's type is refused in the cell without a
 * message, Delete clears, Space toggles a boolean); a host error for a cell is shown in that cell. Skips
 * (with the reason) without Chromium, fails under CI=true.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { caseAttributesHtml } from '../../src/ui/cases/caseAttributesPage';
import { newNonce } from '../../src/ui/webviewHtml';
import { HOSTILE } from './html';
import { waitInPage } from './pageWait';

const ROOT = path.resolve(__dirname, '..', '..');
const CSP_SOURCE = 'https://webview.test';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('security and keyboard: the Case Attributes webview in headless Chromium', function () {
  this.timeout(120_000);
  let browser: import('playwright-core').Browser | undefined;
  let bundle = '';
  let profile = '';

  before(async function () {
    if (!fs.existsSync(CHROMIUM)) {
      const why = `Chromium is missing at ${CHROMIUM} (CHROMIUM_PATH)`;
      if (process.env.CI === 'true') throw new Error(`${why} (required under CI=true)`);
      console.log(`      skipped: ${why}`);
      this.skip();
    }
    const out = await esbuild.build({
      entryPoints: [path.join(ROOT, 'webview-ui', 'caseAttributes.ts')],
      bundle: true,
      platform: 'browser',
      format: 'iife',
      target: 'es2022',
      write: false,
      logLevel: 'silent',
    });
    bundle = out.outputFiles[0]?.text ?? '';
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-case-attributes-chromium-'));
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-dev-shm-usage',
        '--disable-breakpad',
        '--disable-crash-reporter',
      ],
      env: { ...process.env, HOME: profile, XDG_CONFIG_HOME: profile, XDG_CACHE_HOME: profile },
    });
  });
  after(async () => {
    await browser?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
  });

  async function open() {
    const html = caseAttributesHtml(CSP_SOURCE, `${CSP_SOURCE}/caseAttributes.js`, newNonce());
    const page = await (browser as import('playwright-core').Browser).newPage({ viewport: { width: 1400, height: 1200 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.route(`${CSP_SOURCE}/**`, (route) => {
      const url = new URL(route.request().url());
      if (url.pathname === '/index.html') return route.fulfill({ status: 200, contentType: 'text/html', body: html });
      if (url.pathname === '/caseAttributes.js') return route.fulfill({ status: 200, contentType: 'application/javascript', body: bundle });
      return route.fulfill({ status: 404, body: '' });
    });
    const elsewhere: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(CSP_SOURCE)) elsewhere.push(r.url());
    });
    await page.addInitScript(`
      window.__posted = [];
      window.__violations = [];
      window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__posted.push(m), getState: () => undefined, setState: () => undefined });
      document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
    `);
    await page.goto(`${CSP_SOURCE}/index.html`);
    await waitInPage(page, `(window.__posted || []).some((m) => m.type === 'ready')`);
    const post = (m: unknown) => page.evaluate(`window.postMessage(${JSON.stringify(m)}, '*')`);
    const posted = async () => ((await page.evaluate('window.__posted')) as { type: string }[]).filter((m) => m.type !== 'ready');
    return { page, post, posted, errors, elsewhere };
  }

  it('renders hostile case and attribute names and values as text; nothing runs, nothing loads', async () => {
    const { page, post, errors, elsewhere } = await open();
    const names = HOSTILE.slice(0, 6);
    await post({
      type: 'model',
      model: {
        columns: names.map((n) => ({ name: n, type: 'text', case_count: 1 })),
        rows: names.map((n, i) => ({ case_id: i + 1, name: n, values: { [names[i] as string]: { type: 'text', value: n } } })),
      },
    });
    await waitInPage(page, `document.querySelectorAll('#grid tbody tr').length === ${names.length}`);
    const a = (await page.evaluate(`(() => {
      const all = [...document.querySelectorAll('*')];
      return {
        pwned: window.__pwned ?? null,
        violations: window.__violations,
        scripts: document.querySelectorAll('script').length,
        injected: all.filter((e) => ['IMG', 'SVG', 'svg', 'IFRAME', 'FORM', 'A', 'BASE', 'OBJECT', 'EMBED', 'STYLE', 'META'].includes(e.tagName) && e.closest('head') === null).map((e) => e.tagName),
        handlers: all.flatMap((e) => [...e.attributes].filter((x) => x.name.startsWith('on')).map((x) => e.tagName + '.' + x.name)),
        text: document.body.innerText,
      };
    })()`)) as { pwned: unknown; violations: string[]; scripts: number; injected: string[]; handlers: string[]; text: string };
    assert.equal(a.pwned, null);
    assert.deepEqual(a.violations, []);
    assert.equal(a.scripts, 1);
    assert.deepEqual(a.injected, []);
    assert.deepEqual(a.handlers, []);
    assert.deepEqual(errors, []);
    assert.deepEqual(elsewhere, []);
    for (const h of names) assert.ok(a.text.includes(h.trim().replace(/\s+/g, ' ').slice(0, 20)) || a.text.includes(h.slice(0, 20)), `shown as text: ${h}`);
    await page.close();
  });

  it('is keyboard-usable: arrows move, typing edits, Enter saves typed values, a bad number stays in the page, Delete clears, Space toggles; a host error shows in its cell', async () => {
    const { page, post, posted, errors } = await open();
    await post({
      type: 'model',
      model: {
        columns: [
          { name: 'Age', type: 'number', case_count: 1 },
          { name: 'Interviewed', type: 'date', case_count: 1 },
          { name: 'Urban', type: 'boolean', case_count: 1 },
        ],
        rows: [
          { case_id: 7, name: 'Ana', values: { Age: { type: 'number', value: 34 }, Urban: { type: 'boolean', value: false } } },
          { case_id: 9, name: 'Ben', values: { Interviewed: { type: 'date', value: '2024-03-05' } } },
        ],
      },
    });
    await waitInPage(page, `document.querySelectorAll('#grid tbody tr').length === 2`);
    // one cell is in the tab order: Ana's Age
    assert.equal(await page.evaluate(`document.querySelectorAll('#grid [tabindex="0"]').length`), 1);
    await page.focus('#grid [tabindex="0"]');
    await page.keyboard.type('41');
    await page.keyboard.press('Enter');
    await page.keyboard.press('ArrowDown'); // Ben's Age (no value)
    await page.keyboard.type('forty');
    await page.keyboard.press('Enter');
    await page.keyboard.press('ArrowRight'); // Ben's Interviewed
    await page.keyboard.press('Delete');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowRight'); // Ana's Urban
    await page.keyboard.press(' ');
    assert.deepEqual(await posted(), [
      { type: 'setCell', case_id: 7, attribute: 'Age', attribute_type: 'number', value: 41 },
      { type: 'setCell', case_id: 9, attribute: 'Interviewed', attribute_type: 'date', value: null },
      { type: 'setCell', case_id: 7, attribute: 'Urban', attribute_type: 'boolean', value: true },
    ]);
    // the refused "forty" is explained in Ben's Age cell
    assert.match((await page.textContent('#grid tbody tr:nth-child(2) td:nth-child(2)')) ?? '', /Enter a number/);
    // the host's answer for a cell shows in that cell
    await post({ type: 'cellResult', case_id: 7, attribute: 'Age', error: 'The value "41x" is not a number' });
    await waitInPage(page, `document.querySelector('#grid tbody tr:nth-child(1) td.error') !== null`);
    assert.match((await page.textContent('#grid tbody tr:nth-child(1) td:nth-child(2)')) ?? '', /is not a number/);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
