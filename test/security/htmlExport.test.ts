/**
 * HTML and script injection into the HTML exports (docs/architecture.md, Security: "the HTML export escapes source
 * text"; docs/reference/http.md: export_data html "escaped, no scripts", export_report html "escaped, no scripts"): code,
 * category, source, case and coder names, code and segment memos and the source text itself are hostile
 * markup put in by the researcher's files and by agents. The written pages, parsed as a browser parses them,
 * hold no script, no event handler, no javascript: URL, nothing that loads or navigates, one style element
 * (the page's own) and a Content-Security-Policy that allows no script; every hostile string shows as text.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cspDirectives, HOSTILE, inspectHtml, type HtmlReport } from './html';
import { AS_AGENT, raw, startStack, type Stack } from './stack';

describe('security: HTML and script injection into the HTML exports', function () {
  this.timeout(60_000);
  let s: Stack;
  /** the names as stored (names are trimmed and normalised) */
  const names: string[] = [];
  let sourceText: string;

  const asAgent = (tool: string, args: Record<string, unknown>, headers: Record<string, string> = {}) =>
    raw(s.port, 'POST', `/tools/${tool}`, { headers: { ...AS_AGENT, 'content-type': 'application/json', ...headers }, body: { arguments: args } });

  /** No active content at all, the page's one style element, a CSP without script sources. */
  function inert(r: HtmlReport, what: string): void {
    assert.deepEqual(r.scripts, [], `${what}: no script element`);
    assert.deepEqual(r.handlers, [], `${what}: no event handler attribute`);
    assert.deepEqual(r.scriptUrls, [], `${what}: no javascript: URL`);
    assert.deepEqual(r.active, [], `${what}: nothing that loads or navigates`);
    assert.equal(r.styles, 1, `${what}: only the page's own style element`);
    assert.equal(r.csp.length, 1, `${what}: one CSP meta`);
    const d = cspDirectives(r.csp[0] as string);
    assert.deepEqual(d.get('default-src'), ["'none'"], `${what}: default-src 'none'`);
    assert.ok(!d.has('script-src') && !d.has('script-src-elem') && !d.has('script-src-attr'), `${what}: no script source is allowed`);
  }

  before(async () => {
    s = await startStack();
    sourceText = `Interview.\n${HOSTILE.join('\n')}\nEnd.`;
    const src = await s.asResearcher('add_text_source', { name: '<script>alert("source")</script>.txt', content: sourceText });
    names.push((await s.asResearcher('list_sources', {})).sources[0].name);
    const cat = await s.asResearcher('create_category', { name: '<img src=x onerror=alert(1)> category', memo: HOSTILE[0] });
    names.push(cat.name);
    const codeIds: number[] = [];
    for (const [i, h] of HOSTILE.entries()) {
      const c = await s.asResearcher('create_code', {
        name: `${h.replace(/[\u2028\u2029]/g, ' ').slice(0, 90)} ${i}`,
        color: '#4E79A7',
        memo: `${h} memo`,
        ...(i % 2 === 0 ? { category_id: cat.category_id } : {}),
      });
      codeIds.push(c.code_id);
      names.push(c.name);
    }
    // codings by the researcher and by an agent whose coder name is hostile, with hostile segment memos
    const len = [...sourceText].length;
    for (const [i, id] of codeIds.entries()) {
      const start = (i * 7) % (len - 20);
      await s.asResearcher('apply_code', {
        code_id: id,
        source_id: src.source_id,
        start_position: start,
        end_position: start + 15,
        memo: HOSTILE[(i + 3) % HOSTILE.length],
      });
      const byAgent = await asAgent(
        'apply_code',
        { code_id: id, source_id: src.source_id, start_position: start + 2, end_position: start + 12 },
        { 'x-marginalia-user': '<script>coder</script>', 'x-marginalia-client': '<img src=x onerror=alert(9)>' },
      );
      assert.equal(byAgent.status, 200, byAgent.text);
    }
    const kase = await s.asResearcher('create_case', { name: '<svg onload=alert(1)> case' });
    await s.asResearcher('add_source_to_case', { case_id: kase.case_id, source_id: src.source_id });
    await s.asResearcher('set_case_attribute', { case_id: kase.case_id, attribute_name: '<b>attr</b>', value: HOSTILE[1] });
  });
  after(async () => {
    await s?.close();
  });

  it('export_data html: inert, every name, memo and passage shown as text', async () => {
    const file = path.join(s.dir, 'coded.html');
    const r = await asAgent('export_data', { format: 'html', output_path: file });
    assert.equal(r.status, 200, r.text);
    const html = fs.readFileSync(file, 'utf8');
    const report = inspectHtml(html);
    inert(report, 'export_data html');
    const shown = `${report.text}\n${report.attributeText}`;
    for (const n of names) assert.ok(shown.includes(n), `shown as text: ${n}`);
    for (const h of HOSTILE) assert.ok(report.text.includes(h.replace(/\r/g, '')), `the source text shows as text: ${h}`);
    assert.ok(!/<script/i.test(html.replace(/&lt;script/gi, '')), 'no raw <script in the file');
  });

  it('export_report html (frequency, co-occurrence, coder comparison): inert, names shown as text', async () => {
    const reports = [
      (await asAgent('generate_frequency_report', {})).body.data,
      (await asAgent('generate_cooccurrence_report', {})).body.data,
      (await asAgent('generate_coder_comparison', { coder_ids: ['<script>coder</script>', 'researcher-in-process'] })).body.data,
    ];
    for (const rep of reports) {
      assert.ok(rep?.report_id, JSON.stringify(rep));
      const file = path.join(s.dir, `report-${rep.report_id}.html`);
      const r = await asAgent('export_report', { report_id: rep.report_id, format: 'html', output_path: file });
      assert.equal(r.status, 200, r.text);
      const report = inspectHtml(fs.readFileSync(file, 'utf8'));
      inert(report, `export_report html ${rep.report_type}`);
      assert.ok(report.text.includes(names[2] as string), `${rep.report_type}: a hostile code name shows as text`);
    }
    const coders = inspectHtml(fs.readFileSync(path.join(s.dir, `report-${reports[2].report_id}.html`), 'utf8'));
    assert.ok(coders.text.includes('<script>coder</script>'), 'the coder name shows as text');
  });
});
