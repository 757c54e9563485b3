/**
 * Every webview (docs/architecture.md, Security: "Webviews use a nonce CSP and escape everything they render"):
 * - the pages the extension builds (Agent Activity: src/ui/activity/activityPage.ts; Reports:
 *   src/ui/reports/reportsPage.ts; both through src/ui/webviewHtml.ts): a CSP with `default-src 'none'` and
 *   `script-src 'nonce-…'` (no 'unsafe-inline', no 'unsafe-eval'), one script carrying the nonce and nothing
 *   inline, no event-handler attributes, a fresh nonce per page;
 * - the sources: every `webview.html =` in src/ui goes through such a page builder; no 'unsafe-inline' or
 *   'unsafe-eval' anywhere in src/ui; every webview limits its local resources; the webview bundles
 *   (webview-ui/*.ts) use no HTML sink (innerHTML, insertAdjacentHTML, document.write, eval, ...); Markdown
 *   tooltips escape agent-controlled names;
 * - the real bundles in headless Chromium, on the real pages with their CSP: activity rows and every Reports
 *   view fed hostile code, coder, case, attribute and client names render them as text, nothing injected
 *   runs or appears in the DOM, and the CSP is never violated.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { activityHtml } from '../../src/ui/activity/activityPage';
import { reportsHtml } from '../../src/ui/reports/reportsPage';
import { retrievalHtml } from '../../src/ui/retrieval/retrievalPage';
import { caseAttributesHtml } from '../../src/ui/cases/caseAttributesPage';
import { newNonce, webviewDocument } from '../../src/ui/webviewHtml';
import { cspDirectives, HOSTILE, inspectHtml } from './html';
import { waitInPage } from './pageWait';

const ROOT = path.resolve(__dirname, '..', '..');
const CSP_SOURCE = 'https://webview.test';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The text of the call starting at `open` (the index of its opening parenthesis), balanced. */
function callText(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

/** `text` without every balanced `escapeMd(...)` call. */
function withoutEscapes(text: string): string {
  let out = text;
  for (let at = out.indexOf('escapeMd('); at >= 0; at = out.indexOf('escapeMd('))
    out = out.slice(0, at) + out.slice(at + callText(out, at + 'escapeMd'.length).length + 'escapeMd'.length);
  return out;
}

function pageChecks(html: string, nonce: string, what: string): void {
  const r = inspectHtml(html);
  assert.equal(r.csp.length, 1, `${what}: one CSP meta`);
  const d = cspDirectives(r.csp[0] as string);
  assert.deepEqual(d.get('default-src'), ["'none'"], `${what}: default-src 'none'`);
  assert.deepEqual(d.get('script-src'), [`'nonce-${nonce}'`], `${what}: scripts only with the nonce`);
  for (const [name, values] of d) {
    assert.ok(!values.includes("'unsafe-eval'"), `${what}: ${name} without 'unsafe-eval'`);
    if (name.startsWith('script')) assert.ok(!values.includes("'unsafe-inline'") && !values.includes('*'), `${what}: ${name} without 'unsafe-inline' or *`);
  }
  assert.ok(!d.has('script-src-attr') && !d.has('script-src-elem'), `${what}: no looser script directives`);
  assert.equal(r.scripts.length, 1, `${what}: one script`);
  const [script] = r.scripts;
  assert.equal(script?.nonce, nonce, `${what}: the script carries the nonce`);
  assert.ok(script?.src && script.inline.trim() === '', `${what}: the script is the bundle, nothing inline`);
  assert.deepEqual(r.handlers, [], `${what}: no event-handler attribute`);
  assert.deepEqual(r.scriptUrls, [], `${what}: no javascript: URL`);
  assert.ok(/<style nonce="[^"]+">/.test(html), `${what}: the style carries the nonce`);
}

describe('security: webviews (CSP with a nonce, no inline script, names rendered as text)', function () {
  this.timeout(120_000);

  describe('the pages the extension builds', () => {
    const pages: [string, (nonce: string) => string][] = [
      ['Agent Activity', (n) => activityHtml(CSP_SOURCE, `${CSP_SOURCE}/activity.js`, n)],
      ['Reports', (n) => reportsHtml(CSP_SOURCE, `${CSP_SOURCE}/reports.js`, 'body{}', n)],
      ['Retrieval', (n) => retrievalHtml(CSP_SOURCE, `${CSP_SOURCE}/retrieval.js`, n)],
      ['Case Attributes', (n) => caseAttributesHtml(CSP_SOURCE, `${CSP_SOURCE}/caseAttributes.js`, n)],
    ];
    for (const [name, build] of pages) {
      it(`${name}: nonce CSP, one nonce'd script, nothing inline`, () => {
        const nonce = newNonce();
        pageChecks(build(nonce), nonce, name);
      });
    }

    it('a fresh nonce per page; a malformed nonce is refused; a hostile script URI or title stays an attribute value', () => {
      assert.notEqual(activityHtml(CSP_SOURCE, 'x'), activityHtml(CSP_SOURCE, 'x'));
      for (const bad of ['', 'abc', `${newNonce()}' 'unsafe-inline`, `${newNonce()}"><script>`]) {
        assert.throws(() => webviewDocument({ cspSource: CSP_SOURCE, nonce: bad, scriptUri: 'x', style: '', body: '' }), /nonce/, bad);
      }
      const nonce = newNonce();
      const html = webviewDocument({
        cspSource: CSP_SOURCE,
        nonce,
        scriptUri: '"><script>alert(1)</script>',
        style: '',
        body: '',
        title: '</title><script>alert(2)</script>',
      });
      pageChecks(html, nonce, 'hostile script URI and title');
    });
  });

  describe('the sources', () => {
    const ui = sources(path.join(ROOT, 'src', 'ui'));
    const bundles = sources(path.join(ROOT, 'webview-ui'));

    it('every webview.html in src/ui is built by a page builder over webviewDocument', () => {
      let seen = 0;
      for (const file of ui) {
        const text = fs.readFileSync(file, 'utf8');
        const rel = path.relative(ROOT, file);
        for (const m of text.matchAll(/\.html\s*=\s*([^;]+);/g)) {
          seen++;
          // the one shared loader (src/ui/webviewScript.ts) sets the html its caller's page builder makes: its callers are checked below
          if (rel === path.join('src', 'ui', 'webviewScript.ts') && /^\s*html\(/.test(m[1] as string)) continue;
          assert.match(
            m[1] as string,
            /^\s*(activityHtml|reportsHtml|retrievalHtml|caseAttributesHtml|webviewDocument)\(/,
            `${rel}: webview.html = ${(m[1] as string).slice(0, 60)}`,
          );
        }
        for (const m of rel === path.join('src', 'ui', 'webviewScript.ts') ? [] : text.matchAll(/loadWebviewScript\(([^;]+)\);/g)) {
          seen++;
          assert.match(
            m[1] as string,
            /,\s*(activityHtml|reportsHtml|retrievalHtml|caseAttributesHtml)\s*$/,
            `${rel}: loadWebviewScript(${(m[1] as string).slice(0, 80)})`,
          );
        }
      }
      assert.ok(seen >= 2, 'the Activity and Reports webviews were found');
      for (const builder of ['src/ui/activity/activityPage.ts', 'src/ui/reports/reportsPage.ts']) {
        assert.match(fs.readFileSync(path.join(ROOT, builder), 'utf8'), /webviewDocument\(/, builder);
      }
    });

    it("no 'unsafe-inline' or 'unsafe-eval' in src/ui; every webview limits its local resources; no command links", () => {
      for (const file of ui) {
        const text = fs.readFileSync(file, 'utf8');
        const rel = path.relative(ROOT, file);
        assert.ok(!/unsafe-inline|unsafe-eval/.test(text), `${rel}: no unsafe CSP source`);
        // localResourceRoots set here, or by the shared loader (src/ui/webviewScript.ts, checked itself)
        if (/createWebviewPanel|resolveWebviewView|loadWebviewScript/.test(text))
          assert.match(text, /localResourceRoots|loadWebviewScript\(view\.webview/, `${rel}: localResourceRoots`);
        assert.ok(!/enableCommandUris\s*:\s*true/.test(text), `${rel}: no command URIs`);
        assert.ok(!/isTrusted\s*=\s*true|isTrusted\s*:\s*true|supportHtml\s*=\s*true/.test(text), `${rel}: no trusted or HTML Markdown`);
      }
    });

    it('the webview bundles use no HTML sink', () => {
      const sinks =
        /\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|createContextualFragment|DOMParser|srcdoc|setAttribute\(\s*['"]on|\.on[a-z]+\s*=\s*['"`]/;
      assert.ok(bundles.length >= 2);
      for (const file of bundles) {
        const code = fs
          .readFileSync(file, 'utf8')
          .split('\n')
          .filter((l) => !/^\s*(\/\/|\*)/.test(l))
          .join('\n');
        assert.ok(!sinks.test(code), `${path.relative(ROOT, file)}: ${sinks.exec(code)?.[0]}`);
      }
    });

    it('Markdown tooltips and tool-call confirmations escape the names agents control (client, code, source, owner, session, memo)', () => {
      // the tooltips and hovers of src/ui, and the confirmation of language-model tool calls (src/adapters/lm)
      for (const file of [...ui, ...sources(path.join(ROOT, 'src', 'adapters', 'lm'))]) {
        const text = fs.readFileSync(file, 'utf8');
        for (let at = text.indexOf('appendMarkdown('); at >= 0; at = text.indexOf('appendMarkdown(', at + 1)) {
          const call = withoutEscapes(callText(text, at + 'appendMarkdown'.length));
          const bare = /\$\{[^}]*\b(client_name|description|session_id|name|memo|owner|user|text|arguments)\b/.exec(call);
          assert.ok(!bare, `${path.relative(ROOT, file)}: ${bare?.[0]} unescaped in appendMarkdown${call.slice(0, 80)}`);
        }
      }
    });
  });

  describe('the real bundles in headless Chromium', () => {
    let browser: import('playwright-core').Browser | undefined;
    const bundled = new Map<string, string>();
    let profile: string;

    before(async function () {
      if (!fs.existsSync(CHROMIUM)) {
        const why = `Chromium is missing at ${CHROMIUM} (CHROMIUM_PATH)`;
        if (process.env.CI === 'true') throw new Error(`${why} (required under CI=true)`);
        console.log(`      skipped: ${why}`);
        this.skip();
      }
      for (const name of ['activity', 'reports', 'retrieval']) {
        const out = await esbuild.build({
          entryPoints: [path.join(ROOT, 'webview-ui', `${name}.ts`)],
          bundle: true,
          platform: 'browser',
          format: 'iife',
          target: 'es2022',
          write: false,
          logLevel: 'silent',
        });
        bundled.set(name, out.outputFiles[0]?.text ?? '');
      }
      profile = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-sec-chromium-'));
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

    /** Opens `html` at https://webview.test/ with the bundle `name` as its script and a stub of acquireVsCodeApi. */
    async function open(name: string, html: string) {
      const page = await (browser as import('playwright-core').Browser).newPage({ viewport: { width: 1400, height: 1600 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.route(`${CSP_SOURCE}/**`, (route) => {
        const url = new URL(route.request().url());
        if (url.pathname === '/index.html') return route.fulfill({ status: 200, contentType: 'text/html', body: html });
        if (url.pathname === `/${name}.js`) return route.fulfill({ status: 200, contentType: 'application/javascript', body: bundled.get(name) ?? '' });
        return route.fulfill({ status: 404, body: '' });
      });
      // anything else (an injected <img src>, <iframe>, a navigation) would be a request elsewhere
      const elsewhere: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(CSP_SOURCE)) elsewhere.push(r.url());
      });
      // scripts for the page are strings: functions compiled by tsx carry helpers (__name) the page lacks
      await page.addInitScript(`
        window.__posted = [];
        window.__violations = [];
        window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__posted.push(m), getState: () => undefined, setState: () => undefined });
        document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
      `);
      await page.goto(`${CSP_SOURCE}/index.html`);
      await waitInPage(page, `(window.__posted || []).some((m) => m.type === 'ready')`);
      const post = (m: unknown) => page.evaluate(`window.postMessage(${JSON.stringify(m)}, '*')`);
      /** what the page holds that it should not, and its text */
      const audit = (): Promise<{ pwned: unknown; violations: string[]; scripts: number; injected: string[]; handlers: string[]; text: string }> =>
        page.evaluate(`(() => {
          const all = [...document.querySelectorAll('*')];
          return {
            pwned: window.__pwned ?? null,
            violations: window.__violations,
            scripts: document.querySelectorAll('script').length,
            injected: all.filter((e) => ['IMG', 'SVG', 'svg', 'IFRAME', 'FORM', 'A', 'BASE', 'OBJECT', 'EMBED', 'STYLE', 'META'].includes(e.tagName) && e.closest('head') === null).map((e) => e.tagName),
            handlers: all.flatMap((e) => [...e.attributes].filter((a) => a.name.startsWith('on')).map((a) => e.tagName + '.' + a.name)),
            text: document.body.innerText + '\\n' + all.map((e) => e.getAttribute('title') ?? '').join('\\n'),
          };
        })()`);
      return { page, post, audit, errors, elsewhere };
    }

    it('Agent Activity renders hostile client names, tools and descriptions as text; nothing runs', async () => {
      const nonce = newNonce();
      const { page, post, audit, errors, elsewhere } = await open('activity', activityHtml(CSP_SOURCE, `${CSP_SOURCE}/activity.js`, nonce));
      const items = HOSTILE.map((h, i) => ({
        id: `${h}-${i}`,
        time: '2026-01-01T00:00:00.000Z',
        session_id: h,
        client_name: h,
        tool: h,
        description: `${h} description`,
        status: i % 2 === 0 ? 'PENDING_APPROVAL' : 'COMPLETED',
        request_id: h,
        error_code: h,
        undoable: true,
      }));
      await post({ type: 'items', items });
      await post({ type: 'upsert', item: { ...items[0], id: 'new', tool: '<img src=x onerror="window.__pwned=99">' } });
      await waitInPage(page, `document.querySelectorAll('.row').length > 0`);
      // clicking Approve posts the request id back as data, nothing else
      await page.click('.row .act');
      const a = await audit();
      assert.equal(a.pwned, null, 'no injected script ran');
      assert.deepEqual(a.violations, [], 'the CSP was never violated');
      assert.equal(a.scripts, 1, 'only the bundle');
      assert.deepEqual(a.injected, [], 'no injected element');
      assert.deepEqual(a.handlers, [], 'no event-handler attribute');
      assert.deepEqual(errors, [], 'no page error');
      assert.deepEqual(elsewhere, [], 'nothing loaded from elsewhere');
      for (const h of HOSTILE.slice(0, 12))
        assert.ok(a.text.includes(h.trim().replace(/\s+/g, ' ').slice(0, 20)) || a.text.includes(h.slice(0, 20)), `shown as text: ${h}`);
      const posted = (await page.evaluate('window.__posted')) as unknown[];
      assert.ok(
        posted.some((m) => (m as { type: string }).type === 'approve'),
        'the button works',
      );
      // the harness really enforces the page's CSP: an inline script added now is blocked and reported
      await page.evaluate(`(() => { const s = document.createElement('script'); s.textContent = 'window.__inlineRan = 1'; document.body.append(s); })()`);
      await waitInPage(page, 'window.__violations.length > 0');
      assert.equal(await page.evaluate('window.__inlineRan ?? null'), null, 'an inline script does not run under the CSP');
      assert.match(((await page.evaluate('window.__violations')) as string[])[0] ?? '', /^script-src/);
      await page.close();
    });

    it('Reports renders hostile code, coder, case and attribute names in every view as text; nothing runs', async () => {
      const nonce = newNonce();
      const { page, post, audit, errors, elsewhere } = await open('reports', reportsHtml(CSP_SOURCE, `${CSP_SOURCE}/reports.js`, 'body{}', nonce));
      const codes = HOSTILE.slice(0, 8).map((h, i) => ({
        code_id: i + 1,
        name: h,
        color: i === 3 ? 'red;background:url(https://evil.example/x)' : '#4E79A7',
        segment_count: i + 1,
        source_count: 1,
      }));
      const heat = (labels: string[]) => ({
        rows: codes.map(({ code_id, name, color }) => ({ code_id, name, color })),
        columns: labels.map((l, j) => ({ key: `k${j}`, label: l, case_ids: [j + 1], code_id: j + 1 })),
        matrix: codes.map((_c, i) => labels.map((_l, j) => (i + j) % 3)),
      });
      const row = (name: string, code_id: number) => ({ code_id, name, percent_agreement: 50, kappa: 0.1, both: 1, only_a: 1, only_b: 1 });
      const iv = { value: 0.5, ci_low: 0.25, ci_high: 0.75 };
      const outcome = (coder: string, label: string) => ({
        coder,
        label,
        suggested: 4,
        accepted: 1,
        edited: 1,
        rejected: 1,
        pending: 1,
        acceptance_rate: 1 / 3,
        edit_rate: 1 / 3,
        rejection_rate: 1 / 3,
      });
      const messages: [string, Record<string, unknown>][] = [
        ['frequency', { type: 'frequency', project: HOSTILE[0], codes, unused: 1, segments: 10, sources: 2 }],
        ['cooccurrence', { type: 'cooccurrence', project: HOSTILE[1], heat: heat(codes.map((c) => c.name)), total_overlaps: 3, same_code_overlaps: 1 }],
        [
          'agreement',
          {
            type: 'agreement',
            project: HOSTILE[2],
            coders: [HOSTILE[0], HOSTILE[1], HOSTILE[2]],
            pair: [HOSTILE[0], HOSTILE[1]],
            rows: codes.map((c) => row(c.name, c.code_id)),
            overall: row(HOSTILE[4] as string, 0),
            total_characters: 100,
            source_count: 1,
            method: HOSTILE[5],
            tables: codes.slice(0, 3).map((c) => ({
              code_id: c.code_id,
              name: c.name,
              units: 10,
              measures: [{ measure: HOSTILE[6], coders: HOSTILE[7], ...iv }],
            })),
            disagreements: [
              { code: HOSTILE[8], source: HOSTILE[9], start_pos: 0, end_pos: 3, text: HOSTILE[10], coded_by: [HOSTILE[0]], not_coded_by: [HOSTILE[1]] },
            ],
          },
        ],
        [
          'disagreements',
          {
            type: 'disagreements',
            project: HOSTILE[6],
            coders: HOSTILE.slice(0, 3),
            selected: HOSTILE.slice(0, 3),
            unit: 'character',
            total: 2,
            passages: [
              {
                code: HOSTILE[7],
                color: 'red;background:url(https://evil.example/x)',
                source_id: 1,
                source: HOSTILE[8],
                start_pos: 0,
                end_pos: 40,
                text: HOSTILE.slice(0, 3).join(' '),
                disputed: [{ start: 0, end: 5 }],
                coders: HOSTILE.slice(0, 3).map((c, i) => ({
                  coder: c,
                  coded: i === 0,
                  spans: [{ start: 0, end: 12, code: HOSTILE[i + 3], color: i === 1 ? 'url(https://evil.example/y)' : '#4E79A7', disputed: i === 0 }],
                })),
              },
            ],
          },
        ],
        [
          'human_ai',
          {
            type: 'human_ai',
            project: HOSTILE[9],
            unit: 'segment',
            agents: [HOSTILE[0], HOSTILE[3]],
            humans: [HOSTILE[1]],
            pairs: [
              {
                agent: HOSTILE[0],
                human: HOSTILE[1],
                sources: 1,
                codes: codes.map((c) => ({ code: c.name, units: 3, percent_agreement: iv, cohen_kappa: iv, krippendorff_alpha: iv })),
                overall: null,
                note: HOSTILE[2],
              },
            ],
            by_code: [outcome(HOSTILE[0] as string, HOSTILE[2] as string), outcome(HOSTILE[3] as string, HOSTILE[4] as string)],
            by_week: [outcome(HOSTILE[0] as string, '2026-01-05'), outcome(HOSTILE[0] as string, HOSTILE[5] as string)],
          },
        ],
        ['case', { type: 'case', project: HOSTILE[3], heat: heat(HOSTILE.slice(6, 10)) }],
        ['attribute', { type: 'attribute', project: HOSTILE[4], attributes: HOSTILE.slice(0, 4), attribute: HOSTILE[0], heat: heat(HOSTILE.slice(10, 14)) }],
        [
          'document_attribute',
          {
            type: 'document_attribute',
            project: HOSTILE[5],
            attributes: HOSTILE.slice(4, 8),
            attribute: HOSTILE[4],
            heat: { ...heat(HOSTILE.slice(8, 12)), columns: HOSTILE.slice(8, 12).map((l, j) => ({ key: `k${j}`, label: l, source_ids: [j + 1] })) },
          },
        ],
      ];
      for (const [view, data] of messages) {
        await page.evaluate('window.__posted.length = 0');
        await post({ type: 'show', view });
        await post(data);
        await waitInPage(page, `window.__posted.some((m) => m.type === 'rendered' && m.view === ${JSON.stringify(view)})`, 15_000);
        const a = await audit();
        assert.equal(a.pwned, null, `${view}: no injected script ran`);
        assert.deepEqual(a.violations, [], `${view}: the CSP was never violated`);
        assert.equal(a.scripts, 1, `${view}: only the bundle`);
        assert.deepEqual(
          a.injected.filter((t) => t !== 'STYLE'),
          [],
          `${view}: no injected element`,
        );
        assert.deepEqual(a.handlers, [], `${view}: no event-handler attribute`);
      }
      // the agreement table and the attribute picker are DOM text: their hostile names show literally
      await post({ type: 'show', view: 'agreement' });
      await post(messages[2]?.[1]);
      await waitInPage(page, `document.querySelectorAll('#table tr').length > 1`);
      const a = await audit();
      for (const c of codes) assert.ok(a.text.includes(c.name.trim().slice(0, 20)), `agreement row shown as text: ${c.name}`);
      // the disagreements' passages and the human-vs-AI tables are DOM text too
      for (const [view, probe, shown] of [
        ['disagreements', `document.querySelectorAll('.disagreement .coder').length === 3`, HOSTILE.slice(0, 3)],
        ['human_ai', `document.querySelectorAll('#details table').length >= 3`, [HOSTILE[0], HOSTILE[2], HOSTILE[5]]],
      ] as const) {
        await post({ type: 'show', view });
        await post(messages.find(([v]) => v === view)?.[1]);
        await waitInPage(page, probe);
        const b = await audit();
        for (const h of shown) assert.ok(b.text.includes((h as string).trim().slice(0, 20)), `${view} shows as text: ${h}`);
      }
      assert.deepEqual(errors, [], 'no page error');
      assert.deepEqual(elsewhere, [], 'nothing loaded from elsewhere');
      await page.close();
    });

    it('Retrieval renders hostile code, source, case, attribute and coder names and passage texts as text; nothing runs', async () => {
      const nonce = newNonce();
      const { page, post, audit, errors, elsewhere } = await open('retrieval', retrievalHtml(CSP_SOURCE, `${CSP_SOURCE}/retrieval.js`, nonce));
      const codes = HOSTILE.slice(0, 8).map((h, i) => ({
        code_id: i + 1,
        name: h,
        color: i === 3 ? 'red;background:url(https://evil.example/x)' : '#4E79A7',
        category: HOSTILE[i + 1] ?? null,
        count: i,
      }));
      await post({
        type: 'options',
        project: true,
        query: { code_ids: [1, 2, 4], combine: 'or', coder: HOSTILE[0], source_attribute: { name: HOSTILE[1], value: HOSTILE[2] } },
        options: {
          codes,
          sources: HOSTILE.slice(0, 6).map((h, i) => ({ source_id: i + 1, name: h })),
          folders: HOSTILE.slice(2, 6).map((h, i) => ({ folder_id: i + 1, name: h })),
          cases: HOSTILE.slice(4, 8).map((h, i) => ({ case_id: i + 1, name: h })),
          source_attributes: [{ name: HOSTILE[1], values: [HOSTILE[2], 3, true] }],
          case_attributes: [{ name: HOSTILE[3], values: [HOSTILE[4]] }],
          coders: HOSTILE.slice(0, 3),
        },
      });
      const passages = HOSTILE.slice(0, 10).map((h, i) => ({
        source_name: h,
        place: HOSTILE[(i + 3) % HOSTILE.length],
        codes: [{ name: h, color: codes[3]!.color }],
        coders: [h],
        text: `${h}\n${'long '.repeat(i === 0 ? 200 : 1)}`,
        by_agent: i % 2 === 0,
      }));
      await post({ type: 'result', title: HOSTILE[5], filters: HOSTILE.slice(0, 3), summary: HOSTILE[6], passages });
      await waitInPage(page, `document.querySelectorAll('.passage').length === ${passages.length}`);
      // a click on a passage posts its index; Show more toggles without opening
      await page.click('.passage .more');
      await page.click('.passage >> nth=1');
      const a = await audit();
      assert.equal(a.pwned, null, 'no injected script ran');
      assert.deepEqual(a.violations, [], 'the CSP was never violated');
      assert.equal(a.scripts, 1, 'only the bundle');
      assert.deepEqual(a.injected, [], 'no injected element');
      assert.deepEqual(a.handlers, [], 'no event-handler attribute');
      assert.deepEqual(errors, [], 'no page error');
      assert.deepEqual(elsewhere, [], 'nothing loaded from elsewhere');
      for (const h of HOSTILE.slice(0, 10))
        assert.ok(a.text.includes(h.trim().replace(/\s+/g, ' ').slice(0, 20)) || a.text.includes(h.slice(0, 20)), `shown as text: ${h}`);
      const posted = (await page.evaluate('window.__posted')) as { type: string; index?: number }[];
      assert.deepEqual(
        posted.filter((m) => m.type === 'open'),
        [{ type: 'open', index: 1 }],
        'one open, of the passage clicked',
      );
      await page.close();
    });
  });
});
