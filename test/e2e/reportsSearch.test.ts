/**
 * End-to-end test of the report and search tools over HTTP against the real built CLI
 * (`bin/marginalia.js serve`; run `npm run build` first): generate_frequency_report,
 * generate_cooccurrence_report, generate_coder_comparison, export_report (with get_report and list_reports to
 * read the jobs back), search_codes, search_semantic and find_similar_segments.
 *
 * - Reports run as jobs: each call stores analysis.report_started then analysis.report_completed (read back
 *   over REST, GET /events/history) and its result is the resource qda://reports/<id> (read over MCP,
 *   resources/read on /mcp) and get_report.
 * - The expected numbers are counted by hand from the codings the test makes (see the comments at SEGMENTS):
 *   frequencies per code, overlapping pairs of different codes on a source (touching ranges do not count),
 *   and a coder comparison of two coders. Over HTTP a coder is the segment owner, the caller's user, which
 *   a client names with the X-Marginalia-User header.
 * - export_report writes CSV, JSON and HTML whose contents are checked (RFC 4180 quoting, HTML escaping).
 * - search_semantic and find_similar_segments rank by embeddings from a fake Ollama endpoint served by this
 *   test (MARGINALIA_EMBEDDINGS_ENDPOINT): it maps words to a few concepts, so "bureaucracy", a word no text
 *   contains, finds the council passages; when the endpoint fails the tools fall back to BM25 and say so.
 *
 * Error codes with their HTTP statuses: REPORT_NOT_FOUND 404, UNKNOWN_FORMAT 400, EXPORT_FAILED 422,
 * SOURCE_NOT_FOUND / CODE_NOT_FOUND / CASE_NOT_FOUND / FOLDER_NOT_FOUND 404 (filters), SEGMENT_NOT_FOUND 404,
 * INVALID_ARGUMENTS 400. Failing report calls are checked to store no report and no event.
 * The texts are ASCII, so UTF-16 indices are code points.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { AS_AGENT, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

const P = 'The water tank runs dry. The council wants forms. We share tools. Water rota on Mondays.';
const Q = 'Council rules. Dry summer. Dry soil.';
/** The coder-comparison source: exactly 20 characters. */
const K = 'Rain came late again';

const UNKNOWN = 987654;

function at(text: string, part: string): { start_pos: number; end_pos: number } {
  const i = text.indexOf(part);
  assert.ok(i >= 0, `"${part}" not in the text`);
  return { start_pos: i, end_pos: i + part.length };
}

/** The fake embedding model's concepts: a word's vector is the concept it belongs to. */
const CONCEPTS: readonly (readonly string[])[] = [
  ['water', 'irrigation', 'hose', 'tank', 'rota', 'rain', 'mondays'],
  ['dry', 'drought', 'summer'],
  ['council', 'forms', 'rules', 'permission', 'bureaucracy', 'wants'],
  ['tools', 'share', 'spade'],
  ['soil'],
];
function embed(text: string): number[] {
  const v = [0.05, 0, 0, 0, 0, 0];
  for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const i = CONCEPTS.findIndex((c) => c.includes(w));
    if (i >= 0) v[i + 1] = (v[i + 1] as number) + 1;
  }
  return v;
}

describe('reports and search over HTTP (real CLI)', function () {
  this.timeout(120_000);
  let dir = '';
  let server: ServerProcess | undefined;
  let fake: http.Server | undefined;
  let base = '';
  let embeddingsFail = false;
  let embedCalls = 0;
  const t = toolClient(() => base);
  const src: Record<string, any> = {};
  const code: Record<string, any> = {};
  const seg: Record<string, any> = {};
  const as = (user: string) => ({ 'x-marginalia-user': user });

  /** The stored reports: what a failing report call must leave unchanged. */
  const reportsSnapshot = () => t.ok('list_reports');

  /** Generates a report and checks the job's events and its qda://reports/<id> resource; returns the call's data. */
  async function job(tool: string, args: Record<string, unknown>, type: string): Promise<any> {
    const seq = await t.headSeq();
    const r = await t.ok(tool, args);
    assert.deepEqual([r.report_type, r.status, r.result_uri, r.job_id], [type, 'completed', `qda://reports/${r.report_id}`, r.report_id]);
    const events = await t.events(seq, 'analysis.*');
    assert.deepEqual(
      events.map((e) => [e.event_type, e.aggregate_id, e.payload.report_id, e.payload.report_type]),
      [
        ['analysis.report_started', String(r.report_id), r.report_id, type],
        ['analysis.report_completed', String(r.report_id), r.report_id, type],
      ],
    );
    assert.equal(events[1].payload.result_uri, `qda://reports/${r.report_id}`);
    assert.ok(events[0].metadata.sequence_number < events[1].metadata.sequence_number);
    const stored = await t.ok('get_report', { report_id: r.report_id });
    assert.deepEqual([stored.status, stored.report_type], ['completed', type]);
    assert.deepEqual(stored.result, r.result);
    // the resource over MCP (Streamable HTTP, one stateless request)
    const mcp = await request(
      base,
      'POST',
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: r.result_uri } },
      { accept: 'application/json, text/event-stream' },
    );
    assert.equal(mcp.status, 200, String(mcp.body));
    const rpc = typeof mcp.body === 'string' ? JSON.parse(/^data: (.*)$/m.exec(mcp.body)?.[1] ?? 'null') : mcp.body;
    const content = rpc.result.contents[0];
    assert.equal(content.uri, r.result_uri);
    assert.deepEqual(JSON.parse(content.text).result, r.result);
    return r;
  }

  before(async () => {
    dir = tmpDir('marginalia-reports-e2e-');
    fake = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        embedCalls++;
        if (embeddingsFail || req.url !== '/api/embeddings') {
          res.writeHead(503, { 'content-type': 'text/plain' }).end('model is loading');
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; prompt: string };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ embedding: embed(body.prompt) }));
      });
    });
    await new Promise<void>((resolve) => fake?.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    server = await startServer(path.join(dir, 'study.qda'), [], { MARGINALIA_EMBEDDINGS_ENDPOINT: endpoint, MARGINALIA_EMBEDDINGS_MODEL: 'fake-embed' });
    base = server.base;

    src.p = (await t.ok('import_text', { name: 'Plot P', content: P })).source_id;
    src.q = (await t.ok('import_text', { name: 'Plot Q', content: Q })).source_id;
    src.k = (await t.ok('import_text', { name: 'Plot K', content: K })).source_id;
    for (const [key, name, memo] of [
      ['water', 'Water', 'irrigation, hoses and the tank'],
      ['drought', 'Drought', 'dry spells and rationing'],
      ['council', 'Council, "red tape"', 'forms and permission'],
      ['tools', 'Tools & <Sheds>', null],
      ['soil', 'Soil', null],
      ['unused', 'Unused', null],
      ['tank', 'Tank repairs', null],
    ] as const) {
      code[key] = (await t.ok('create_code', { name, color: '#4E79A7', ...(memo ? { memo } : {}) })).code_id;
    }
  });

  after(async () => {
    if (server) await server.stop();
    await new Promise<void>((resolve) => (fake ? fake.close(() => resolve()) : resolve()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('codes three sources as three coders (X-Marginalia-User)', async () => {
    // SEGMENTS, by hand:
    //  Plot P (carol): 1 Water "The water tank runs dry."   2 Drought "water tank runs dry" (overlaps 1)
    //                  3 Council "The council wants forms. " (ends where 5 starts: touching, no overlap)
    //                  4 Water "Water rota on Mondays."      5 Tools "We share tools. Water rota" (overlaps 4)
    //  Plot Q (carol): 6 Council "Council rules."            7 Drought "Dry summer."
    //                  8 Drought "Dry summer. Dry soil." (overlaps 7: same code)  9 Soil "Dry soil." (overlaps 8)
    //  Plot K (20 characters): alice Water [0,12) and Soil [0,10); bob Water [4,16) and Soil [0,10)
    const apply = async (key: string, user: string, code_id: number, source_id: number, range: { start_pos: number; end_pos: number }) => {
      seg[key] = (await t.ok('apply_code', { code_id, source_id, ...range }, as(user))).segment_id;
    };
    await apply('s1', 'carol', code.water, src.p, at(P, 'The water tank runs dry.'));
    await apply('s2', 'carol', code.drought, src.p, at(P, 'water tank runs dry'));
    await apply('s3', 'carol', code.council, src.p, at(P, 'The council wants forms. '));
    await apply('s4', 'carol', code.water, src.p, at(P, 'Water rota on Mondays.'));
    await apply('s5', 'carol', code.tools, src.p, at(P, 'We share tools. Water rota'));
    await apply('s6', 'carol', code.council, src.q, at(Q, 'Council rules.'));
    await apply('s7', 'carol', code.drought, src.q, at(Q, 'Dry summer.'));
    await apply('s8', 'carol', code.drought, src.q, at(Q, 'Dry summer. Dry soil.'));
    await apply('s9', 'carol', code.soil, src.q, at(Q, 'Dry soil.'));
    await apply('ka_water', 'alice', code.water, src.k, { start_pos: 0, end_pos: 12 });
    await apply('ka_soil', 'alice', code.soil, src.k, { start_pos: 0, end_pos: 10 });
    await apply('kb_water', 'bob', code.water, src.k, { start_pos: 4, end_pos: 16 });
    await apply('kb_soil', 'bob', code.soil, src.k, { start_pos: 0, end_pos: 10 });
    assert.equal(at(P, 'The council wants forms. ').end_pos, at(P, 'We share tools. Water rota').start_pos, 'segments 3 and 5 touch');
    assert.equal(K.length, 20);
  });

  it('generate_frequency_report counts segments, sources and coders per code, as coded (job events, qda://reports/<id>)', async () => {
    const r = await job('generate_frequency_report', {}, 'frequency');
    const rows = Object.fromEntries(
      r.result.codes.map((c: any) => [c.name, [c.segment_count, c.source_count, Object.fromEntries(c.coders.map((k: any) => [k.coder, k.segment_count]))]]),
    );
    assert.deepEqual(rows, {
      Water: [4, 2, { carol: 2, alice: 1, bob: 1 }],
      Drought: [3, 2, { carol: 3 }],
      'Council, "red tape"': [2, 2, { carol: 2 }],
      'Tools & <Sheds>': [1, 1, { carol: 1 }],
      Soil: [3, 2, { carol: 1, alice: 1, bob: 1 }],
      Unused: [0, 0, {}],
      'Tank repairs': [0, 0, {}],
    });
    assert.deepEqual(
      [r.result.totals.codes, r.result.totals.codes_used, r.result.totals.segments, r.result.totals.sources, [...r.result.totals.coders].sort()],
      [7, 5, 13, 3, ['alice', 'bob', 'carol']],
    );
    // most used first
    const counts = r.result.codes.map((c: any) => c.segment_count);
    assert.deepEqual(
      counts,
      [...counts].sort((a: number, b: number) => b - a),
    );

    // filters: one coder; one source; a case holding Plot Q
    const carol = await job('generate_frequency_report', { filters: { coder: 'carol' } }, 'frequency');
    assert.equal(carol.result.totals.segments, 9);
    assert.equal(carol.result.codes.find((c: any) => c.name === 'Water').segment_count, 2);
    const kase = (await t.ok('create_case', { name: 'Q garden' })).case_id;
    await t.ok('add_source_to_case', { case_id: kase, source_id: src.q });
    const inCase = await job('generate_frequency_report', { filters: { case_ids: [kase], code_ids: [code.drought, code.soil, code.water] } }, 'frequency');
    assert.deepEqual(Object.fromEntries(inCase.result.codes.map((c: any) => [c.name, c.segment_count])), { Drought: 2, Soil: 1, Water: 0 });
  });

  it('generate_cooccurrence_report counts overlapping segments of two codes on one source; touching ranges do not count', async () => {
    const matrixOf = (r: any) => {
      const names = r.result.codes.map((c: any) => c.name);
      const cells: Record<string, number> = {};
      names.forEach((a: string, i: number) =>
        names.forEach((b: string, j: number) => {
          const n = r.result.matrix[i][j];
          if (n > 0) cells[`${a} x ${b}`] = n;
        }),
      );
      return { names: [...names].sort(), cells };
    };
    // Plots P and Q only: pairs 1-2 (Water, Drought), 4-5 (Water, Tools), 8-9 (Drought, Soil); 7-8 same code
    const pq = await job('generate_cooccurrence_report', { filters: { source_ids: [src.p, src.q] } }, 'cooccurrence');
    assert.deepEqual(matrixOf(pq), {
      names: ['Council, "red tape"', 'Drought', 'Soil', 'Tools & <Sheds>', 'Water'],
      cells: {
        'Water x Drought': 1,
        'Drought x Water': 1,
        'Water x Tools & <Sheds>': 1,
        'Tools & <Sheds> x Water': 1,
        'Drought x Soil': 1,
        'Soil x Drought': 1,
        'Drought x Drought': 1,
      },
    });
    assert.deepEqual([pq.result.total_overlaps, pq.result.same_code_overlaps], [3, 1]);
    // the whole project adds Plot K: Water x Soil four times (each of alice's and bob's Water with each Soil),
    // Water x Water (alice's and bob's) and Soil x Soil once each
    const all = await job('generate_cooccurrence_report', {}, 'cooccurrence');
    const m = matrixOf(all);
    assert.equal(m.cells['Water x Soil'], 4);
    assert.equal(m.cells['Soil x Water'], 4);
    assert.equal(m.cells['Water x Water'], 1);
    assert.equal(m.cells['Soil x Soil'], 1);
    assert.deepEqual([all.result.total_overlaps, all.result.same_code_overlaps], [7, 3]);
    const top = all.result.top_pairs[0];
    assert.deepEqual([[top.code_a_name, top.code_b_name].sort(), top.count], [['Soil', 'Water'], 4]);
  });

  it("generate_coder_comparison gives per-code percent agreement and Cohen's kappa as computed by hand", async () => {
    // Plot K is the only source both alice and bob coded: 20 characters.
    // Water: alice [0,12), bob [4,16) -> both [4,12) = 8, only alice [0,4) = 4, only bob [12,16) = 4, neither [16,20) = 4.
    //   po = (8 + 4) / 20 = 0.6; pA = 12/20 = 0.6, pB = 0.6; pe = 0.6*0.6 + 0.4*0.4 = 0.52;
    //   kappa = (0.6 - 0.52) / (1 - 0.52) = 0.08 / 0.48 = 1/6; percent agreement 60.
    // Soil: both [0,10) -> both 10, neither 10: po = 1; pA = pB = 0.5; pe = 0.5; kappa = (1 - 0.5) / 0.5 = 1.
    // All codes pooled: both 18, only alice 4, only bob 4, neither 14 of 40: po = 32/40 = 0.8;
    //   pA = pB = 22/40 = 0.55; pe = 0.3025 + 0.2025 = 0.505; kappa = 0.295 / 0.495 = 59/99.
    const r = await job('generate_coder_comparison', { coder_ids: ['alice', 'bob'] }, 'coder_comparison');
    const res = r.result;
    assert.deepEqual(res.coders, ['alice', 'bob']);
    assert.deepEqual(
      res.sources.map((s: any) => [s.source_id, s.characters]),
      [[src.k, 20]],
    );
    assert.equal(res.total_characters, 20);
    const close = (got: number, want: number, what: string) => assert.ok(Math.abs(got - want) < 1e-9, `${what}: ${got} != ${want}`);
    const byName = Object.fromEntries(res.codes.map((c: any) => [c.name, c]));
    assert.deepEqual(Object.keys(byName).sort(), ['Soil', 'Water']);
    const w = byName.Water;
    assert.deepEqual([w.both, w.only_a, w.only_b, w.neither, w.characters], [8, 4, 4, 4, 20]);
    close(w.po, 0.6, 'Water po');
    close(w.pe, 0.52, 'Water pe');
    close(w.kappa, 1 / 6, 'Water kappa');
    close(w.percent_agreement, 60, 'Water agreement');
    const s = byName.Soil;
    assert.deepEqual([s.both, s.only_a, s.only_b, s.neither], [10, 0, 0, 10]);
    close(s.kappa, 1, 'Soil kappa');
    close(s.percent_agreement, 100, 'Soil agreement');
    assert.deepEqual([res.overall.both, res.overall.only_a, res.overall.only_b, res.overall.neither, res.overall.characters], [18, 4, 4, 14, 40]);
    close(res.overall.po, 0.8, 'overall po');
    close(res.overall.pe, 0.505, 'overall pe');
    close(res.overall.kappa, 59 / 99, 'overall kappa');
    // the coders swapped: only_a and only_b swap, agreement stays
    const swapped = await job('generate_coder_comparison', { coder_ids: ['bob', 'alice'], filters: { code_ids: [code.water] } }, 'coder_comparison');
    assert.deepEqual(
      swapped.result.codes.map((c: any) => [c.name, c.both, c.only_a, c.only_b, c.neither]),
      [['Water', 8, 4, 4, 4]],
    );
    close(swapped.result.codes[0].kappa, 1 / 6, 'swapped kappa');
  });

  it('refuses bad filters and coders (404 for unknown ids, 400 INVALID_ARGUMENTS), storing no report and no event', async () => {
    await t.writesNothing(
      reportsSnapshot,
      async () => {
        await t.fails('generate_frequency_report', { filters: { source_ids: [UNKNOWN] } }, 'SOURCE_NOT_FOUND');
        await t.fails('generate_frequency_report', { filters: { code_ids: [UNKNOWN] } }, 'CODE_NOT_FOUND');
        await t.fails('generate_cooccurrence_report', { filters: { case_ids: [UNKNOWN] } }, 'CASE_NOT_FOUND');
        await t.fails('generate_cooccurrence_report', { filters: { colour: 'red' } }, 'INVALID_ARGUMENTS');
        await t.fails('generate_coder_comparison', { coder_ids: ['alice', 'alice'] }, 'INVALID_ARGUMENTS');
        await t.fails('generate_coder_comparison', { coder_ids: ['alice'] }, 'INVALID_ARGUMENTS');
        const nobody = await t.fails('generate_coder_comparison', { coder_ids: ['alice', 'dave'] }, 'INVALID_ARGUMENTS');
        assert.match(nobody.error, /dave/);
        await t.fails('generate_coder_comparison', { coder_ids: ['alice', 'bob'], filters: { coder: 'alice' } }, 'INVALID_ARGUMENTS');
        await t.fails('generate_coder_comparison', { coder_ids: ['alice', 'bob'], filters: { source_ids: [UNKNOWN] } }, 'SOURCE_NOT_FOUND');
        await t.fails('get_report', { report_id: UNKNOWN }, 'REPORT_NOT_FOUND');
      },
      'failing report calls',
    );
  });

  it('an agent generates reports at once (trust category report: auto)', async () => {
    const r = await t.ok('generate_frequency_report', { filters: { source_ids: [src.k] } }, AS_AGENT);
    assert.equal(r.status, 'completed');
    assert.equal(r.result.totals.segments, 4);
  });

  it("export_report writes CSV, JSON and HTML files with the report's content", async () => {
    const freq = (await t.ok('list_reports', { report_type: 'frequency', limit: 1000 })).reports.find((x: any) => JSON.stringify(x.filters) === '{}');
    assert.ok(freq, 'the unfiltered frequency report');
    const stored = await t.ok('get_report', { report_id: freq.report_id });
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);

    const csv = await t.ok('export_report', { report_id: freq.report_id, format: 'csv', output_path: path.join(out, 'freq.csv') });
    assert.equal(csv.file_path, path.join(out, 'freq.csv'));
    const csvText = fs.readFileSync(csv.file_path, 'utf8');
    assert.equal(csv.bytes, Buffer.byteLength(csvText));
    const lines = csvText.split('\r\n');
    assert.equal(lines.pop(), '', 'CRLF after the last row');
    assert.equal(lines[0], 'code_id,code,segments,sources,coders');
    assert.equal(lines.length, 1 + 7);
    // RFC 4180: the name with a comma and quotes is quoted, its quotes doubled
    const council = lines.find((l) => l.startsWith(`${code.council},`));
    assert.equal(council, `${code.council},"Council, ""red tape""",2,2,carol (2)`);
    assert.ok(lines.includes(`${code.unused},Unused,0,0,`));
    assert.ok(lines.some((l) => l.startsWith(`${code.water},Water,4,2,`)));

    const json = await t.ok('export_report', { report_id: freq.report_id, format: 'json', output_path: path.join(out, 'freq.json') });
    assert.deepEqual(JSON.parse(fs.readFileSync(json.file_path, 'utf8')), stored);

    const html = await t.ok('export_report', { report_id: freq.report_id, format: 'html', output_path: path.join(out, 'freq.html') });
    const page = fs.readFileSync(html.file_path, 'utf8');
    assert.match(page, /^<!DOCTYPE html>/);
    assert.ok(page.includes('Tools &amp; &lt;Sheds&gt;'), 'the code name is escaped');
    assert.ok(!page.includes('<Sheds>'), 'no raw markup from a code name');
    assert.ok(!/<script/i.test(page), 'no scripts');
    assert.equal((page.match(/<tr>/g) ?? []).length, 1 + 7, 'a header row and one row per code');

    // without output_path: .marginalia/reports/ beside the project
    const dflt = await t.ok('export_report', { report_id: freq.report_id, format: 'csv' });
    assert.equal(dflt.file_path, path.join(dir, '.marginalia', 'reports', `report-${freq.report_id}-frequency.csv`));
    assert.equal(fs.readFileSync(dflt.file_path, 'utf8'), csvText);

    // the coder comparison as CSV: the hand-computed agreement, rounded
    const cmp = (await t.ok('list_reports', { report_type: 'coder_comparison' })).reports.find((x: any) => JSON.stringify(x.filters) === '{}');
    const cmpCsv = await t.ok('export_report', { report_id: cmp.report_id, format: 'csv', output_path: path.join(out, 'kappa.csv') });
    const cmpLines = fs.readFileSync(cmpCsv.file_path, 'utf8').split('\r\n');
    assert.equal(cmpLines[0], 'code_id,code,both,only alice,only bob,neither,percent_agreement,kappa');
    assert.ok(cmpLines.includes(`${code.water},Water,8,4,4,4,60,0.1667`), cmpLines.join('\n'));
    assert.ok(cmpLines.includes(`${code.soil},Soil,10,0,0,10,100,1`), cmpLines.join('\n'));
    assert.ok(cmpLines.includes(',(all codes),18,4,4,14,80,0.596'), cmpLines.join('\n'));
  });

  it('export_report refuses unknown reports (404), unknown formats (UNKNOWN_FORMAT, 400) and bad paths (EXPORT_FAILED, 422), writing no file', async () => {
    const id = (await t.ok('list_reports', { limit: 1 })).reports[0].report_id;
    const out = path.join(dir, 'out');
    const before = fs.readdirSync(out).sort();
    await t.fails('export_report', { report_id: UNKNOWN, format: 'csv', output_path: path.join(out, 'x.csv') }, 'REPORT_NOT_FOUND');
    for (const format of ['xml', 'pdf', 'CSV!']) {
      const f = await t.fails('export_report', { report_id: id, format, output_path: path.join(out, `x.${format}`) }, 'UNKNOWN_FORMAT');
      assert.match(f.error, /csv, json, html/);
    }
    await t.fails('export_report', { report_id: id, format: 'csv', output_path: 'relative/x.csv' }, 'EXPORT_FAILED');
    await t.fails('export_report', { report_id: id, format: 'csv', output_path: path.join(out, 'x.json') }, 'EXPORT_FAILED');
    await t.fails('export_report', { report_id: id, format: 'csv', output_path: path.join(out, 'missing', 'x.csv') }, 'EXPORT_FAILED');
    await t.fails('export_report', { report_id: id, format: 'csv', output_path: out + path.sep }, 'EXPORT_FAILED');
    // an existing file is replaced only with overwrite: true
    const existing = path.join(out, 'freq.csv');
    const kept = fs.readFileSync(existing, 'utf8');
    await t.fails('export_report', { report_id: id, format: 'csv', output_path: existing }, 'EXPORT_FAILED');
    assert.equal(fs.readFileSync(existing, 'utf8'), kept);
    assert.deepEqual(fs.readdirSync(out).sort(), before, 'no file written');
    const replaced = await t.ok('export_report', { report_id: id, format: 'csv', output_path: existing, overwrite: true });
    assert.equal(replaced.report_id, id);
    // the spec's exchange tools answer an unknown format the same way
    await t.fails('export_data', { format: 'docx', output_path: path.join(out, 'x.docx') }, 'UNKNOWN_FORMAT');
    await t.fails('import_data', { format: 'nvivo', source_path: existing }, 'UNKNOWN_FORMAT');
    assert.ok(!fs.existsSync(path.join(out, 'x.docx')));
  });

  it('search_codes finds codes by word prefixes of names and memos, names first', async () => {
    const names = async (query: string) => (await t.ok('search_codes', { query })).codes.map((c: any) => [c.name, c.matched_in]);
    assert.deepEqual(await names('wat'), [['Water', ['name']]]);
    assert.deepEqual(await names('DRY'), [['Drought', ['memo']]]);
    // "tank": a name beats a memo
    assert.deepEqual(await names('tank'), [
      ['Tank repairs', ['name']],
      ['Water', ['memo']],
    ]);
    assert.deepEqual(await names('red tape'), [['Council, "red tape"', ['name']]]);
    assert.deepEqual(await names('volcano'), []);
    const limited = await t.ok('search_codes', { query: 'tank', limit: 1 });
    assert.deepEqual([limited.count, limited.total], [1, 2]);
    const w = (await t.ok('search_codes', { query: 'water' })).codes[0];
    assert.equal(w.segment_count, 4);
    await t.fails('search_codes', { query: '!!! ???' }, 'INVALID_ARGUMENTS');
    await t.fails('search_codes', { query: '' }, 'INVALID_ARGUMENTS');
  });

  it('search_semantic ranks coded segments by the configured embeddings: "bureaucracy" finds the council passages', async () => {
    const r = await t.ok('search_semantic', { query: 'bureaucracy', k: 2 });
    assert.equal(r.method, 'embeddings:fake-embed');
    assert.deepEqual(r.matches.map((m: any) => m.text).sort(), ['Council rules.', 'The council wants forms. ']);
    assert.ok(r.matches.every((m: any) => m.codes.some((c: any) => c.code_id === code.council)));
    // Plot K's two identical Soil passages (alice's and bob's) are one match with both codings
    assert.deepEqual(r.index, { segments: 13, embedded: 13, not_embedded: 0 });
    const soil = await t.ok('search_semantic', { query: 'soil', k: 10, filters: { source_ids: [src.k], code_ids: [code.soil] } });
    assert.equal(soil.count, 1);
    assert.deepEqual(soil.matches[0].codes.map((c: any) => c.segment_id).sort(), [seg.ka_soil, seg.kb_soil].sort());
    await t.fails('search_semantic', { query: 'x', filters: { source_ids: [UNKNOWN] } }, 'SOURCE_NOT_FOUND');
    await t.fails('search_semantic', { query: 'x', filters: { code_ids: [UNKNOWN] } }, 'CODE_NOT_FOUND');
    await t.fails('search_semantic', { query: 'x', filters: { folder_id: UNKNOWN } }, 'FOLDER_NOT_FOUND');
    await t.fails('search_semantic', { query: 'x', k: 0 }, 'INVALID_ARGUMENTS');
  });

  it('find_similar_segments finds passages like a segment in other places, by embeddings', async () => {
    const r = await t.ok('find_similar_segments', { segment_id: seg.s6, k: 3 });
    assert.equal(r.method, 'embeddings:fake-embed');
    assert.deepEqual([r.segment.segment_id, r.segment.text], [seg.s6, 'Council rules.']);
    assert.equal(r.segments[0].text, 'The council wants forms. ');
    assert.ok(
      r.segments.every((s: any) => !(s.source_id === src.q && s.start_pos < at(Q, 'Council rules.').end_pos)),
      'nothing overlapping the segment itself',
    );
    await t.fails('find_similar_segments', { segment_id: UNKNOWN }, 'SEGMENT_NOT_FOUND');
  });

  it('when the embedding endpoint fails, both searches fall back to BM25 and say so', async () => {
    embeddingsFail = true;
    const calls = embedCalls;
    const sem = await t.ok('search_semantic', { query: 'bureaucracy' });
    assert.equal(sem.method, 'lexical:bm25');
    assert.match(sem.fallback_reason, /503/);
    assert.equal(sem.count, 0, 'no text contains the word');
    const lex = await t.ok('search_semantic', { query: 'council' });
    assert.deepEqual(lex.matches.map((m: any) => m.text).sort(), ['Council rules.', 'The council wants forms. ']);
    // every segment text is cached already: find_similar_segments needs no new vector and still uses them
    assert.equal((await t.ok('find_similar_segments', { segment_id: seg.s7 })).method, 'embeddings:fake-embed');
    // a new segment's text is not cached, and the endpoint fails: BM25 over its words ("runs", "dry")
    const fresh = (await t.ok('apply_code', { code_id: code.drought, source_id: src.p, ...at(P, 'runs dry') }, as('carol'))).segment_id;
    const sim = await t.ok('find_similar_segments', { segment_id: fresh });
    assert.equal(sim.method, 'lexical:bm25');
    assert.match(sim.fallback_reason, /503/);
    // the passages sharing "dry" elsewhere; "water tank runs dry" and "The water tank runs dry." overlap it and are left out
    assert.deepEqual(sim.segments.map((s: any) => s.text).sort(), ['Dry summer.', 'Dry summer. Dry soil.', 'Dry soil.'].sort());
    assert.ok(embedCalls > calls, 'the endpoint was asked');
    embeddingsFail = false;
  });

  it('has answered every report and search error code it set out to', () => {
    for (const c of [
      'REPORT_NOT_FOUND',
      'UNKNOWN_FORMAT',
      'EXPORT_FAILED',
      'SOURCE_NOT_FOUND',
      'CODE_NOT_FOUND',
      'CASE_NOT_FOUND',
      'FOLDER_NOT_FOUND',
      'SEGMENT_NOT_FOUND',
      'INVALID_ARGUMENTS',
    ])
      assert.ok(t.seen.has(c), c);
  });
});
