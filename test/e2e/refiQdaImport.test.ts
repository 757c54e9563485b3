/**
 * End-to-end (issue 15, items 3, 4 and 5 for REFI-QDA) over real HTTP against the built CLI (`bin/marginalia.js
 * serve`; run `npm run build` first): one qc-style `.qdpx` built here with jszip holds every REFI defect class
 * at once (a plain-text path without `internal://`, a missing source file, a codable parent code with children,
 * a 150-character code name, an ATLAS.ti-style selection whose offsets drifted from its quoted name, a selection
 * outside its text, typed `VariableValue`s on a source, a text beginning with two U+FEFF).
 * - `strict: true` refuses it: 422 IMPORT_FAILED naming the missing file, nothing written;
 * - without it the import answers 200 with `missing_sources`, `renamed`, `anchoring` and warnings naming source
 *   and code, and `read_source_content` returns the text exactly (BOMs kept, `total_length` its length);
 * - `export_data` writes a `.qdpx` valid against Project.xsd with as many `Code` elements as the file had, the
 *   same GUIDs, and the document attributes as typed `VariableValue`s; a second server imports it back with the
 *   same codings and attributes.
 * Expected values are computed here from the fixture's text.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import JSZip from 'jszip';
import { callTool, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';
import { PROJECT_XSD, requireXmllint, xmllintValidate } from '../unit/exchange/xmlSchema';

const g = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Code point range of `needle` in `text`. */
function cpRange(text: string, needle: string): [number, number] {
  const u = text.indexOf(needle);
  assert.ok(u >= 0, needle);
  const start = [...text.slice(0, u)].length;
  return [start, start + [...needle].length];
}

const INTERVIEW = '\uFEFF\uFEFFIntro added later. The bus never comes on time, she said. Then rain.';
const ORIGINAL = '\uFEFF\uFEFFThe bus never comes on time, she said. Then rain.';
const LONG = [...'Experiences of waiting for the bus 🚌 and what people do meanwhile; '.repeat(3)].slice(0, 150).join('');
const QUOTE = 'The bus never comes on time';

/** The project.qde of the fixture (see the module comment). */
function projectQde(): string {
  const sel = (guid: number, [s, e]: [number, number], code: number, name?: string) =>
    `<PlainTextSelection guid="${g(guid)}"${name ? ` name="${esc(name)}"` : ''} startPosition="${s}" endPosition="${e}"><Coding guid="${g(guid + 500)}"><CodeRef targetGUID="${g(code)}"/></Coding></PlainTextSelection>`;
  const vv = (variable: number, element: string, literal: string) =>
    `<VariableValue><VariableRef targetGUID="${g(variable)}"/><${element}>${literal}</${element}></VariableValue>`;
  return (
    `<?xml version="1.0" encoding="utf-8"?><Project xmlns="urn:QDA-XML:project:1.0" name="fixture" origin="qc 1.3.2">` +
    `<Users><User guid="${g(90)}" name="Ana"/></Users>` +
    `<CodeBook><Codes><Code guid="${g(1)}" name="Transport" isCodable="true"><Code guid="${g(2)}" name="Bus" isCodable="true"/>` +
    `<Code guid="${g(3)}" name="${esc(LONG)}" isCodable="true"/></Code></Codes></CodeBook>` +
    `<Variables><Variable guid="${g(60)}" name="age" typeOfVariable="Integer"/><Variable guid="${g(61)}" name="consented" typeOfVariable="Boolean"/>` +
    `<Variable guid="${g(62)}" name="recorded" typeOfVariable="Date"/></Variables>` +
    `<Sources>` +
    `<TextSource guid="${g(10)}" name="Interview 1" plainTextPath="sources/interview1.txt">` +
    sel(11, cpRange(ORIGINAL, QUOTE), 2, QUOTE) +
    sel(12, cpRange(INTERVIEW, 'Then rain'), 1) +
    sel(13, [10, 400], 3) +
    sel(14, cpRange(INTERVIEW, 'she said'), 3) +
    vv(60, 'IntegerValue', '44') +
    vv(61, 'BooleanValue', 'true') +
    vv(62, 'DateValue', '2024-05-01') +
    `</TextSource>` +
    `<TextSource guid="${g(20)}" name="Gone" plainTextPath="sources/gone.txt">${sel(21, [0, 4], 2)}</TextSource>` +
    `</Sources></Project>`
  );
}

describe('REFI-QDA import and export over HTTP (real CLI, issue 15)', function () {
  this.timeout(180_000);
  let dir = '';
  let server: ServerProcess | undefined;
  let second: ServerProcess | undefined;
  let base = '';
  const t = toolClient(() => base);
  let qdpx = '';

  before(async () => {
    dir = tmpDir('marginalia-refi-e2e-');
    const zip = new JSZip();
    zip.file('project.qde', projectQde());
    // the file: a UTF-8 signature, then the text (which begins with two U+FEFF of its own)
    zip.file('sources/interview1.txt', Buffer.from(`\uFEFF${INTERVIEW}`, 'utf8'));
    qdpx = path.join(dir, 'qc-export.qdpx');
    fs.writeFileSync(qdpx, await zip.generateAsync({ type: 'nodebuffer' }));
    server = await startServer(path.join(dir, 'study.qda'));
    base = server.base;
  });

  after(async () => {
    if (server) await server.stop();
    if (second) await second.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('strict: true refuses the file with 422 IMPORT_FAILED naming the missing file, and writes nothing', async () => {
    const r = await callTool(base, 'import_data', { format: 'refi_qda', source_path: qdpx, strict: true });
    assert.equal(r.status, 422, JSON.stringify(r.body).slice(0, 400));
    assert.equal(r.body.error_code, 'IMPORT_FAILED');
    assert.match(r.body.error ?? '', /gone\.txt/);
    assert.deepEqual((await t.ok('list_codes')).codes ?? [], []);
    assert.deepEqual((await t.ok('list_sources')).sources, []);
  });

  it('without strict it imports everything else and reports what it could not place, moved or cut', async () => {
    const r = await t.ok('import_data', { format: 'refi_qda', source_path: qdpx });
    assert.equal(r.created.sources, 1);
    assert.equal(r.created.codes, 3);
    assert.equal(r.created.segments, 3, 'the drifted one moved, the outside one left out');
    assert.deepEqual(
      r.missing_sources.map((m: any) => [m.source, m.file_missing, m.selections]),
      [['Gone', true, [{ selection_guid: g(21), start_position: 0, end_position: 4, codes: ['Bus'] }]]],
    );
    const cut = [...LONG].slice(0, 100).join('').trim();
    assert.deepEqual(r.renamed, [{ kind: 'code', from: LONG, to: cut }]);
    assert.ok(
      r.warnings.some((w: string) => w.startsWith("The code name 'Experiences of waiting") && w.includes('150')),
      r.warnings.join('\n'),
    );
    assert.ok(
      r.warnings.some((w: string) =>
        w.startsWith(`selection ${g(13)} of code '${LONG}' in source 'Interview 1' is outside its text (${[...INTERVIEW].length} code points)`),
      ),
      r.warnings.join('\n'),
    );
    const [s, e] = cpRange(INTERVIEW, QUOTE);
    const [ss, se] = cpRange(ORIGINAL, QUOTE);
    assert.deepEqual(r.anchoring.reanchored, [
      { source: 'Interview 1', code: 'Bus', start_pos: s, end_pos: e, stored_start_pos: ss, stored_end_pos: se, quote: QUOTE },
    ]);
    assert.deepEqual(r.anchoring_counts, { reanchored: 1, kept_offsets: 0, unplaceable: 1 });
    assert.equal(r.source_attributes_set, 3);

    const source = (await t.ok('list_sources')).sources.find((x: any) => x.name === 'Interview 1');
    const content = await t.ok('read_source_content', { source_id: source.source_id });
    assert.equal(content.content ?? content.text, INTERVIEW, 'the text exactly, both U+FEFF kept');
    assert.equal(content.total_length, [...INTERVIEW].length);
    assert.deepEqual(source.attributes, { age: 44, consented: true, recorded: '2024-05-01' });
    const segs = await t.ok('list_segments_for_source', { source_id: source.source_id });
    const texts = (segs.segments ?? segs).map((x: any) => x.text).sort();
    assert.deepEqual(texts, ['Then rain', QUOTE, 'she said'].sort());
  });

  it('exports a valid .qdpx with the same Code elements and GUIDs and typed VariableValues, and a second server imports it back', async function () {
    requireXmllint(this);
    const out = path.join(dir, 'out.qdpx');
    await t.ok('export_data', { format: 'refi_qda', output_path: out });
    const xml = await (await JSZip.loadAsync(fs.readFileSync(out))).file('project.qde')!.async('string');
    const v = xmllintValidate(xml, PROJECT_XSD);
    assert.ok(v.ok, v.output);
    const codes = [...xml.matchAll(/<Code guid="([^"]+)"[^>]*isCodable="(true|false)"/g)].map((m) => `${m[1]} ${m[2]}`).sort();
    assert.deepEqual(codes, [`${g(1)} true`, `${g(2)} true`, `${g(3)} true`], 'three codable Code elements, as in the file: the parent stays one');
    assert.match(xml.replace(/>\s+</g, '><'), new RegExp(`<VariableValue><VariableRef targetGUID="${g(60)}"/><IntegerValue>44</IntegerValue></VariableValue>`));
    assert.match(xml, new RegExp(`<Variable guid="${g(62)}" name="recorded" typeOfVariable="Date"/>`));

    second = await startServer(path.join(dir, 'second.qda'));
    const u = toolClient(() => second!.base);
    const back = await u.ok('import_data', { format: 'refi_qda', source_path: out });
    assert.deepEqual([back.created.codes, back.created.segments, back.source_attributes_set], [3, 3, 3]);
    assert.deepEqual(back.anchoring_counts, { reanchored: 0, kept_offsets: 0, unplaceable: 0 });
    const src = (await u.ok('list_sources')).sources[0];
    assert.equal((await u.ok('read_source_content', { source_id: src.source_id })).total_length, [...INTERVIEW].length);
    assert.deepEqual(src.attributes, { age: 44, consented: true, recorded: '2024-05-01' });
  });
});
