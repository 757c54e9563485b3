import * as assert from 'node:assert/strict';
import type { Caller } from '../../../src/agent/pipeline';
import { mapEnd, mapStart } from '../../../src/domain/sourceEdits';
import { openFixture, snapshot, type Fixture } from './projectFixture';

/** The researcher's own session: the only one that may call the editor's bookkeeping tools. */
const RESEARCHER: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'researcher' };

/** Code points of a JavaScript string. */
const cp = (s: string) => [...s].length;

describe('codings follow edits (apply_source_edits, reconcile_source_text)', () => {
  let fx: Fixture;
  let sourceId: number;
  let codeId: number;
  // "😀" is one code point and two UTF-16 units: positions after it differ between the two counts
  const TEXT = 'Intro 😀 line.\nWe water the beds on Sundays.\nThe council never answers.\n';
  const W = 'water the beds';
  const C = 'council never answers';

  async function coding(quote: string): Promise<number> {
    const at = cp(TEXT.slice(0, TEXT.indexOf(quote)));
    const r = await fx.ok('batch_apply_codes', { operations: [{ code_id: codeId, source_id: sourceId, start_position: at, end_position: at + cp(quote) }] });
    return r.results[0].segment_id;
  }
  async function segments(): Promise<{ segment_id: number; start_pos: number; end_pos: number; text: string }[]> {
    return (await fx.ok('list_segments_for_source', { source_id: sourceId })).segments;
  }
  async function content(): Promise<string> {
    return (await fx.ok('read_source_content', { source_id: sourceId })).content;
  }

  beforeEach(async () => {
    fx = await openFixture();
    sourceId = (await fx.ok('add_text_source', { name: 'garden.txt', content: TEXT })).source_id;
    codeId = (await fx.ok('create_code', { name: 'Care', color: '#59A14F' })).code_id;
  });
  afterEach(() => fx.close());

  it('maps positions: text typed at a segment edge stays outside it, inside it joins it', () => {
    // replace [10, 12) by 5 code points
    assert.equal(mapStart(4, 10, 12, 5), 4);
    assert.equal(mapStart(12, 10, 12, 5), 15);
    assert.equal(mapStart(11, 10, 12, 5), 15);
    assert.equal(mapEnd(10, 10, 12, 5), 10);
    assert.equal(mapEnd(11, 10, 12, 5), 10);
    assert.equal(mapEnd(20, 10, 12, 5), 23);
    // pure insertion of 3 at 7: a start at 7 moves, an end at 7 stays
    assert.equal(mapStart(7, 7, 7, 3), 10);
    assert.equal(mapEnd(7, 7, 7, 3), 7);
  });

  it('moves segments after an insertion by its length in code points, text and positions exact', async () => {
    const w = await coding(W);
    const c = await coding(C);
    const before = await segments();
    const insert = 'Note 🌱: ';
    await fx.ok(
      'apply_source_edits',
      { source_id: sourceId, edits: [{ start_pos: 0, end_pos: 0, text: insert }], expected_length: cp(insert + TEXT) },
      RESEARCHER,
    );
    const after = await segments();
    for (const id of [w, c]) {
      const b = before.find((s) => s.segment_id === id)!;
      const a = after.find((s) => s.segment_id === id)!;
      assert.equal(a.start_pos, b.start_pos + cp(insert));
      assert.equal(a.end_pos, b.end_pos + cp(insert));
      assert.equal(a.text, b.text);
    }
    assert.equal(await content(), insert + TEXT);
  });

  it('grows a segment for text typed inside it and shrinks it for text deleted inside it', async () => {
    const w = await coding(W);
    const at = cp(TEXT.slice(0, TEXT.indexOf(W))) + cp('water');
    await fx.ok('apply_source_edits', { source_id: sourceId, edits: [{ start_pos: at, end_pos: at, text: ' and weed' }] }, RESEARCHER);
    let seg = (await segments()).find((s) => s.segment_id === w)!;
    assert.equal(seg.text, 'water and weed the beds');
    await fx.ok('apply_source_edits', { source_id: sourceId, edits: [{ start_pos: at, end_pos: at + cp(' and weed'), text: '' }] }, RESEARCHER);
    seg = (await segments()).find((s) => s.segment_id === w)!;
    assert.equal(seg.text, W);
  });

  it('removes a segment whose text is deleted entirely, reports it, and keeps the others', async () => {
    const w = await coding(W);
    const c = await coding(C);
    const start = cp(TEXT.slice(0, TEXT.indexOf('We water')));
    const end = cp(TEXT.slice(0, TEXT.indexOf('The council')));
    const out = await fx.call('apply_source_edits', { source_id: sourceId, edits: [{ start_pos: start, end_pos: end, text: '' }] }, RESEARCHER);
    assert.ok(out.envelope.success);
    const data = out.envelope.data as { removed: { segment_id: number; text: string }[] };
    assert.deepEqual(
      data.removed.map((r) => [r.segment_id, r.text]),
      [[w, W]],
    );
    assert.deepEqual(
      out.events.map((e) => e.event_type),
      ['coding.segment_uncoded', 'source.text_edited'],
    );
    const left = await segments();
    assert.deepEqual(
      left.map((s) => s.segment_id),
      [c],
    );
    assert.equal(left[0]!.text, C);
  });

  it('applies simultaneous edits sent last-first, as the editor tracker sends them', async () => {
    const c = await coding(C);
    const t = TEXT;
    const e1 = cp(t.slice(0, t.indexOf('Intro')));
    const e2 = cp(t.slice(0, t.indexOf('The council')));
    await fx.ok(
      'apply_source_edits',
      {
        source_id: sourceId,
        edits: [
          { start_pos: e2, end_pos: e2, text: '> ' },
          { start_pos: e1, end_pos: e1, text: '> ' },
        ],
      },
      RESEARCHER,
    );
    const seg = (await segments()).find((s) => s.segment_id === c)!;
    assert.equal(seg.text, C);
    assert.equal(await content(), `> ${t.slice(0, t.indexOf('The council'))}> ${t.slice(t.indexOf('The council'))}`);
  });

  it('refuses an edit when the editor and the project disagree, writing nothing', async () => {
    await coding(W);
    const before = await snapshot(fx);
    await fx.fails(
      'apply_source_edits',
      { source_id: sourceId, edits: [{ start_pos: 0, end_pos: 0, text: 'x' }], expected_length: 3 },
      'INVALID_ARGUMENTS',
      RESEARCHER,
    );
    await fx.fails('apply_source_edits', { source_id: sourceId, edits: [{ start_pos: 0, end_pos: 9999, text: '' }] }, 'INVALID_POSITION', RESEARCHER);
    assert.deepEqual(await snapshot(fx), before);
  });

  it('exists for the researcher only: agents get TOOL_NOT_FOUND and GET /tools does not list it', async () => {
    await fx.fails('apply_source_edits', { source_id: sourceId, edits: [{ start_pos: 0, end_pos: 0, text: 'x' }] }, 'TOOL_NOT_FOUND');
    await fx.fails('reconcile_source_text', { source_id: sourceId, text: 'x' }, 'TOOL_NOT_FOUND');
    const names = fx.pipeline.listTools().map((t) => t.name);
    assert.ok(!names.includes('apply_source_edits') && !names.includes('reconcile_source_text'));
  });

  it('moves the source ranges cases hold, as it moves segments', async () => {
    const caseId = (await fx.ok('create_case', { name: 'Participant 1' })).case_id;
    const at = cp(TEXT.slice(0, TEXT.indexOf(C)));
    await fx.ok('add_segment_to_case', { case_id: caseId, source_id: sourceId, start_pos: at, end_pos: at + cp(C) });
    const insert = 'Header 🌱\n';
    await fx.ok('apply_source_edits', { source_id: sourceId, edits: [{ start_pos: 0, end_pos: 0, text: insert }] }, RESEARCHER);
    const c = await fx.ok('get_case', { case_id: caseId });
    const range = c.segments[0];
    assert.equal(range.start_pos, at + cp(insert));
    assert.equal(range.end_pos, at + cp(insert) + cp(C));
    assert.equal(range.text, C);
  });

  it('re-anchors segments by their text after an outside edit and sets aside those it cannot find', async () => {
    const w = await coding(W);
    const c = await coding(C);
    // outside VS Code: a paragraph was added before both passages and the council sentence was rewritten
    const changed = `Preface 🌻 added later.\n${TEXT.replace('The council never answers.', 'The council replied at last.')}`;
    const out = await fx.ok('reconcile_source_text', { source_id: sourceId, text: changed }, RESEARCHER);
    assert.equal(out.kept, 0);
    assert.equal(out.relocated, 1);
    assert.deepEqual(
      out.orphaned.map((o: { segment_id: number; text: string }) => [o.segment_id, o.text]),
      [[c, C]],
    );
    const segs = await segments();
    assert.deepEqual(
      segs.map((s) => s.segment_id),
      [w],
    );
    assert.equal(segs[0]!.text, W);
    assert.equal(segs[0]!.start_pos, cp(changed.slice(0, changed.indexOf(W))));
    assert.equal(await content(), changed);
    // the set-aside coding is kept in the project, not dropped
    const orphans = fx.handle.store.all<{ segment_id: number; text: string }>('SELECT segment_id, text FROM orphan_segments');
    assert.deepEqual(orphans, [{ segment_id: c, text: C }]);
  });
});
