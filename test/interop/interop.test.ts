/**
 * The round-trip kit (issue #15, item 10; `npm run test:interop`).
 *
 * Every file of ../shared/corpus that Marginalia imports goes through:
 *   foreign file --import--> project A --export REFI-QDA--> .qdpx (validated against Project.xsd)
 *                --import--> project B
 * and a lossiness table is printed for each: element, in (what the foreign file holds, counted here by an
 * independent reading: SQL on the foreign database, regular expressions on project.qde, csv-parse), imported
 * (project A), out (project B), lost, why.
 *
 * What it asserts:
 * - nothing is dropped silently: an element the import did not bring in is explained by the import report
 *   (`skipped` by reason, or a warning naming it);
 * - the REFI-QDA export of every imported project validates against the official Project.xsd;
 * - the REFI-QDA round trip A -> B loses nothing REFI-QDA can carry: the same counts of sources, codes,
 *   categories, codings, cases, case and document attributes, memos and coders, and every coding the same
 *   text on the same source with the same code;
 * - plain transcripts keep their bytes: the source text equals the file's text exactly.
 *
 * Runs in process through the one pipeline on real project files on disk (test/unit/domain/projectFixture.ts).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'csv-parse/sync';
import JSZip from 'jszip';
import { withForeignDb } from '../../src/exchange/sqlite';
import { CORPUS, requireCorpus } from '../helpers/serverProcess';
import { openFixture, type Fixture } from '../unit/domain/projectFixture';
import { PROJECT_XSD, requireXmllint, xmllintValidate } from '../unit/exchange/xmlSchema';

/** The elements of the lossiness table, in print order. */
const ELEMENTS = ['sources', 'codes', 'categories', 'codings', 'cases', 'case_attributes', 'document_attributes', 'memos', 'coders'] as const;
type Element = (typeof ELEMENTS)[number];
type Counts = Partial<Record<Element, number>>;

/** What each element of the table may be called in an import report's `skipped` keys and warnings. */
const EXPLAINS: Record<Element, RegExp> = {
  sources: /source|file|document|media/i,
  codes: /code|tag/i,
  categories: /categor|code/i,
  codings: /coding|selection|segment|highlight|quote/i,
  cases: /case/i,
  case_attributes: /attribute|variable|case/i,
  document_attributes: /attribute|variable/i,
  memos: /memo|note|description/i,
  coders: /user|coder|owner/i,
};

// ----- Marginalia's side: counted with SQL on the project file ------------------------------------------

function hasTable(fx: Fixture, table: string): boolean {
  return fx.handle.store.all<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?", [table])[0]!.n > 0;
}

function countOf(fx: Fixture, sql: string): number {
  return fx.handle.store.all<{ n: number }>(sql)[0]!.n;
}

/** The counts of project `fx`, table by table. */
function projectCounts(fx: Fixture): Counts {
  const memoTables = ['sources', 'codes', 'categories', 'segments', 'cases'];
  return {
    sources: countOf(fx, 'SELECT count(*) AS n FROM sources'),
    codes: countOf(fx, 'SELECT count(*) AS n FROM codes'),
    categories: countOf(fx, 'SELECT count(*) AS n FROM categories'),
    codings: countOf(fx, 'SELECT (SELECT count(*) FROM segments) + (SELECT count(*) FROM av_segments) AS n'),
    cases: countOf(fx, 'SELECT count(*) AS n FROM cases'),
    case_attributes: countOf(fx, 'SELECT count(*) AS n FROM case_attributes'),
    document_attributes: hasTable(fx, 'source_attributes') ? countOf(fx, 'SELECT count(*) AS n FROM source_attributes') : 0,
    memos: memoTables.reduce((n, t) => n + countOf(fx, `SELECT count(*) AS n FROM ${t} WHERE memo IS NOT NULL AND memo <> ''`), 0),
    coders: countOf(fx, 'SELECT count(DISTINCT owner) AS n FROM segments'),
  };
}

/** Every text coding of `fx` as "source | code | text", sorted: what a round trip must keep. */
function codings(fx: Fixture): string[] {
  return fx.handle.store
    .all<{ k: string }>(
      "SELECT s.name || ' | ' || c.name || ' | ' || g.text AS k FROM segments g JOIN sources s ON s.id = g.source_id JOIN codes c ON c.id = g.code_id",
    )
    .map((r) => r.k)
    .sort();
}

// ----- the foreign side: an independent reading of each format ------------------------------------------

async function qualcoderCounts(file: string): Promise<Counts> {
  return withForeignDb(file, 'a QualCoder project', (db) => {
    const n = (sql: string) => db.all<{ n: number }>(sql)[0]!.n;
    return {
      sources: n('SELECT count(*) AS n FROM source'),
      codes: n('SELECT count(*) AS n FROM code_name'),
      categories: n('SELECT count(*) AS n FROM code_cat'),
      codings: n('SELECT (SELECT count(*) FROM code_text) + (SELECT count(*) FROM code_av) + (SELECT count(*) FROM code_image) AS n'),
      cases: n('SELECT count(*) AS n FROM cases'),
      case_attributes: n("SELECT count(*) AS n FROM attribute WHERE attr_type = 'case' AND value IS NOT NULL AND value <> ''"),
      document_attributes: n("SELECT count(*) AS n FROM attribute WHERE attr_type = 'file' AND value IS NOT NULL AND value <> ''"),
      coders: n('SELECT count(DISTINCT owner) AS n FROM code_text'),
    };
  });
}

async function rqdaCounts(file: string): Promise<Counts> {
  return withForeignDb(file, 'an RQDA project', (db) => {
    const n = (sql: string) => db.all<{ n: number }>(sql)[0]!.n;
    // RQDA shows only rows with status = 1 (Unmark and deletion set other values)
    return {
      sources: n('SELECT count(*) AS n FROM source WHERE status = 1'),
      codes: n('SELECT count(*) AS n FROM freecode WHERE status = 1'),
      categories: n('SELECT count(*) AS n FROM codecat WHERE status = 1'),
      codings: n(
        'SELECT count(*) AS n FROM coding c JOIN freecode f ON f.id = c.cid AND f.status = 1 JOIN source s ON s.id = c.fid AND s.status = 1 WHERE c.status = 1',
      ),
      cases: n('SELECT count(*) AS n FROM cases WHERE status = 1'),
      case_attributes: n("SELECT count(*) AS n FROM caseAttr WHERE status = 1 AND value IS NOT NULL AND value NOT IN ('', 'NA')"),
      document_attributes: n("SELECT count(*) AS n FROM fileAttr WHERE status = 1 AND value IS NOT NULL AND value NOT IN ('', 'NA')"),
      coders: n('SELECT count(DISTINCT owner) AS n FROM coding WHERE status = 1'),
    };
  });
}

async function taguetteCounts(file: string): Promise<Counts> {
  return withForeignDb(file, 'a Taguette project', (db) => {
    const n = (sql: string) => db.all<{ n: number }>(sql)[0]!.n;
    return {
      sources: n('SELECT count(*) AS n FROM documents'),
      codes: n('SELECT count(*) AS n FROM tags'),
      codings: n('SELECT count(*) AS n FROM highlight_tags'),
    };
  });
}

async function qdeOf(file: string): Promise<string> {
  const zip = await JSZip.loadAsync(fs.readFileSync(file));
  const entry = Object.keys(zip.files).find((n) => n.toLowerCase().endsWith('.qde'));
  assert.ok(entry, `${path.basename(file)} holds a .qde`);
  return zip.file(entry)!.async('string');
}

async function qdpxCounts(file: string): Promise<Counts> {
  const xml = await qdeOf(file);
  const count = (re: RegExp) => [...xml.matchAll(re)].length;
  const sources = xml.match(/<Sources>[\s\S]*<\/Sources>/)?.[0] ?? '';
  const cases = xml.match(/<Cases>[\s\S]*<\/Cases>/)?.[0] ?? '';
  const codings = new Set<string>();
  for (const sel of sources.matchAll(/<(\w+Selection)\b[^>]*\bguid="([^"]+)"[\s\S]*?<\/\1>/g)) {
    for (const c of sel[0].matchAll(/<CodeRef\b[^>]*targetGUID="([^"]+)"/g)) codings.add(`${sel[2]} ${c[1]}`);
  }
  const codes = [...xml.matchAll(/<Code\b[^>]*>/g)].map((m) => m[0]);
  return {
    sources: count(/<(Text|PDF|Picture|Audio|Video)Source\b/g),
    codes: codes.filter((c) => /isCodable="true"/.test(c)).length,
    codings: codings.size,
    cases: count(/<Case\b/g),
    case_attributes: [...cases.matchAll(/<VariableValue\b/g)].length,
    document_attributes: [...sources.matchAll(/<VariableValue\b/g)].length,
    // coders: the users the Coding elements name (who applied a code; a segment's owner). A selection's own
    // creatingUser may differ (NVivo 12 names another user on 297 of 303 selections) and is not a coder.
    coders: new Set([...sources.matchAll(/<Coding\b[^>]*\bcreatingUser="([^"]+)"/g)].map((m) => m[1]!.toLowerCase())).size,
  };
}

/**
 * A survey CSV: one case per row; each non-empty cell but the name becomes a case attribute, or, in a column
 * of open-ended answers, a text source linked to its case: both are counted as `case_attributes` on either
 * side (see {@link importedAs}).
 */
function csvCounts(file: string): Counts {
  const rows = parse(fs.readFileSync(file), { bom: true, skip_empty_lines: true, relax_column_count: true }) as string[][];
  const data = rows.slice(1);
  return { cases: data.length, case_attributes: data.reduce((n, r) => n + r.slice(1).filter((c) => c.trim() !== '').length, 0) };
}

// ----- the corpus ------------------------------------------------------------------------------------

interface CorpusFile {
  label: string;
  file: string;
  format: string;
  counts: (file: string) => Promise<Counts> | Counts;
}

function corpusFiles(): CorpusFile[] {
  const out: CorpusFile[] = [];
  const qdpx = path.join(CORPUS, 'refi-qda', 'qdpx');
  for (const f of fs
    .readdirSync(qdpx)
    .filter((f) => f.endsWith('.qdpx'))
    .sort())
    out.push({ label: f, file: path.join(qdpx, f), format: 'refi_qda', counts: qdpxCounts });
  const inDir = (dir: string, ext: string) =>
    fs
      .readdirSync(path.join(CORPUS, dir))
      .filter((f) => f.endsWith(ext))
      .sort()
      .map((f) => path.join(CORPUS, dir, f));
  for (const f of inDir('qualcoder', '.qda')) out.push({ label: path.basename(f), file: f, format: 'qualcoder', counts: qualcoderCounts });
  for (const f of inDir('rqda', '.rqda')) out.push({ label: path.basename(f), file: f, format: 'rqda', counts: rqdaCounts });
  for (const f of inDir('taguette', '.sqlite3')) out.push({ label: path.basename(f), file: f, format: 'taguette', counts: taguetteCounts });
  for (const f of inDir('surveys', '.csv')) out.push({ label: path.basename(f), file: f, format: 'csv', counts: csvCounts });
  return out;
}

interface Row {
  element: Element;
  in: number | undefined;
  imported: number;
  out: number;
  lost: number;
  why: string;
}

function printTable(label: string, rows: Row[]): void {
  const cells = [
    ['element', 'in', 'imported', 'out', 'lost', 'why'],
    ...rows.map((r) => [r.element, r.in === undefined ? '-' : String(r.in), String(r.imported), String(r.out), String(r.lost), r.why]),
  ];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  console.log(`\n      ${label}`);
  for (const c of cells) console.log(`      ${c.map((v, i) => (i === 5 ? v : v.padEnd(widths[i]!))).join('  ')}`);
}

/**
 * What a project holds of `element` in the foreign format's terms: a survey CSV's cells are case attributes
 * or, for open-ended answers, text sources linked to the case (src/exchange/importers/csv.ts).
 */
function importedAs(format: string, element: Element, counts: Counts): number {
  if (format === 'csv' && element === 'case_attributes') return (counts.case_attributes ?? 0) + (counts.sources ?? 0);
  return counts[element] ?? 0;
}

/** Whether the import report explains a loss of `element`: a `skipped` reason or a warning that names it. */
function explanation(report: { skipped?: Record<string, number>; warnings?: string[] }, element: Element): string | undefined {
  const reasons = Object.entries(report.skipped ?? {}).filter(([k, n]) => n > 0 && EXPLAINS[element].test(k));
  if (reasons.length > 0) return reasons.map(([k, n]) => `${k}: ${n}`).join(', ');
  const warning = (report.warnings ?? []).find((w) => EXPLAINS[element].test(w));
  return warning === undefined ? undefined : warning.slice(0, 100);
}

describe('interop: every corpus file imported, exported as REFI-QDA, validated and imported again', function () {
  this.timeout(600_000);
  const fixtures: Fixture[] = [];
  after(async () => {
    for (const f of fixtures) await f.close();
  });
  const fresh = async () => {
    const f = await openFixture();
    fixtures.push(f);
    return f;
  };

  it('prints a lossiness table for each file; nothing is lost silently and the REFI-QDA round trip loses nothing', async function () {
    requireCorpus(this, 'refi-qda');
    requireXmllint(this);
    const failures: string[] = [];
    for (const c of corpusFiles()) {
      const a = await fresh();
      const imp = await a.call('import_data', { format: c.format, source_path: c.file });
      if (!imp.envelope.success) {
        failures.push(`${c.label}: import failed: ${imp.envelope.error_code} ${imp.envelope.error}`);
        continue;
      }
      const report = (imp.envelope as { data: { skipped?: Record<string, number>; warnings?: string[] } }).data;
      const foreign = await c.counts(c.file);
      const imported = projectCounts(a);

      let out: Counts = {};
      let roundTripCodings: string[] | undefined;
      const qdpx = path.join(a.dir, 'roundtrip.qdpx');
      const exp = await a.call('export_data', { format: 'refi_qda', output_path: qdpx });
      if (!exp.envelope.success) {
        failures.push(`${c.label}: REFI-QDA export failed: ${exp.envelope.error_code} ${exp.envelope.error}`);
      } else {
        const v = xmllintValidate(await qdeOf(qdpx), PROJECT_XSD);
        if (!v.ok) failures.push(`${c.label}: the REFI-QDA export does not validate against Project.xsd: ${v.output.slice(0, 400)}`);
        const b = await fresh();
        const back = await b.call('import_data', { format: 'refi_qda', source_path: qdpx });
        if (!back.envelope.success) failures.push(`${c.label}: re-import of the export failed: ${back.envelope.error_code} ${back.envelope.error}`);
        else {
          out = projectCounts(b);
          roundTripCodings = codings(b);
        }
      }

      const rows: Row[] = ELEMENTS.map((element) => {
        const inCount = foreign[element];
        const imp = importedAs(c.format, element, imported);
        const o = importedAs(c.format, element, out);
        const lostAtImport = inCount === undefined ? 0 : Math.max(0, inCount - imp);
        const lostInRoundTrip = Math.max(0, imp - o);
        const why: string[] = [];
        if (lostAtImport > 0) {
          const e = explanation(report, element);
          why.push(e === undefined ? 'import: NOT EXPLAINED' : `import: ${e}`);
          if (e === undefined) failures.push(`${c.label}: ${lostAtImport} ${element} of the file were dropped silently (the import report names no reason)`);
        }
        if (lostInRoundTrip > 0) {
          why.push('REFI-QDA round trip');
          failures.push(`${c.label}: the REFI-QDA round trip lost ${lostInRoundTrip} ${element} (${imp} -> ${o})`);
        }
        return { element, in: inCount, imported: imp, out: o, lost: lostAtImport + lostInRoundTrip, why: why.join('; ') };
      });
      printTable(`${c.label} (${c.format})`, rows);
      if (roundTripCodings !== undefined) {
        const before = codings(a);
        if (JSON.stringify(before) !== JSON.stringify(roundTripCodings)) {
          const missing = before.filter((k) => !roundTripCodings!.includes(k)).slice(0, 3);
          failures.push(`${c.label}: codings differ after the REFI-QDA round trip (e.g. ${JSON.stringify(missing)})`);
        }
      }
    }
    assert.deepEqual(failures, []);
  });

  it('plain transcripts keep their text exactly', async function () {
    requireCorpus(this, 'transcripts');
    const fx = await fresh();
    const files = [
      ...fs
        .readdirSync(path.join(CORPUS, 'transcripts'))
        .filter((f) => f.endsWith('.txt'))
        .map((f) => path.join(CORPUS, 'transcripts', f)),
    ];
    assert.ok(files.length >= 5, 'the corpus transcripts');
    const rows: string[] = [];
    for (const f of files) {
      const src = await fx.ok('import_file_source', { file_path: f });
      const text = fx.handle.store.all<{ content: string }>('SELECT content FROM sources WHERE id = ?', [src.source_id])[0]!.content;
      const want = fs.readFileSync(f, 'utf8');
      rows.push(`      ${path.basename(f).padEnd(50)} ${[...want].length} code points -> ${[...text].length}${text === want ? '' : '  DIFFERS'}`);
      assert.equal(text, want, `${path.basename(f)}: the stored text is the file's text`);
    }
    console.log(rows.join('\n'));
  });
});
