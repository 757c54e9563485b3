import assert from 'node:assert/strict';
import type { Segment } from '../../../src/domain/model';
import type { CodeWithCounts } from '../../../src/domain/ports';
import { LineIndex, computeSegmentDecorations, segmentHover } from '../../../src/ui/decorations/segmentDecorationModel';
import { openFixture } from '../domain/projectFixture';

const code = (code_id: number, color: string, memo: string | null = null) => ({ code_id, name: `c_${code_id}`, color, memo }) as unknown as CodeWithCounts;
const seg = (segment_id: number, code_id: number, start_pos: number, end_pos: number, session_id: string | null = 'local') =>
  ({
    segment_id,
    code_id,
    source_id: 1,
    start_pos,
    end_pos,
    text: '',
    memo: null,
    importance: 0,
    owner: 'ana',
    session_id,
    created_at: '2026-01-02T03:04:05Z',
  }) as Segment;

describe('ui/decorations/segmentDecorationModel (pure)', () => {
  it('groups by colour, converts code points to UTF-16 past astral characters, skips unknown codes', () => {
    const text = 'a🌱bc\nde';
    const codes = new Map([
      [1, code(1, '#ff0000')],
      [2, code(2, '#00ff00')],
    ]);
    const out = computeSegmentDecorations(text, [seg(1, 1, 0, 2), seg(2, 2, 2, 4), seg(3, 1, 5, 7), seg(4, 9, 0, 1)], codes, (s) => s !== 'local');
    assert.deepEqual([...out.keys()], ['#ff0000', '#00ff00']);
    assert.deepEqual(
      out.get('#ff0000')?.map((d) => [d.start, d.end]),
      [
        [0, 3],
        [6, 8],
      ],
    );
    assert.deepEqual(
      out.get('#00ff00')?.map((d) => [d.start, d.end]),
      [[3, 5]],
    );
  });

  it('hover: escaped name, AI badge and session for agents, coder and time', () => {
    const h = segmentHover(seg(1, 1, 0, 1, 'agent-1'), code(1, '#fff', 'm*emo'), (s) => s !== 'local');
    assert.equal(h, '**c\\_1** $(sparkle) AI\n\n*Code memo:* m\\*emo\n\nCoded by ana (agent session agent\\-1) · 2026\\-01\\-02 03:04');
  });

  it('LineIndex matches positionAt over \\n, \\r\\n and \\r', () => {
    const idx = new LineIndex('ab\ncd\r\nef\rg');
    assert.deepEqual(idx.positionAt(0), { line: 0, character: 0 });
    assert.deepEqual(idx.positionAt(4), { line: 1, character: 1 });
    assert.deepEqual(idx.positionAt(7), { line: 2, character: 0 });
    assert.deepEqual(idx.positionAt(10), { line: 3, character: 0 });
    assert.deepEqual(idx.positionAt(99), { line: 3, character: 1 });
  });
});

describe('store: listSegmentMarksForSource (what the decorations read)', () => {
  it('is listSegmentsForSource without the text, in the same order', async () => {
    const fx = await openFixture();
    try {
      const src = (await fx.ok('import_text', { name: 'T', content: 'We grew 🌱 beans and argued about the rota.' })).source_id as number;
      const other = (await fx.ok('import_text', { name: 'U', content: 'Another source entirely.' })).source_id as number;
      const a = (await fx.ok('create_code', { name: 'Growing', color: '#112233' })).code_id as number;
      const b = (await fx.ok('create_code', { name: 'Conflict', color: '#445566' })).code_id as number;
      await fx.ok('apply_code', { code_id: b, source_id: src, start_pos: 20, end_pos: 40 });
      await fx.ok('apply_code', { code_id: a, source_id: src, start_pos: 3, end_pos: 15 });
      await fx.ok('apply_code', { code_id: b, source_id: src, start_pos: 3, end_pos: 9 });
      await fx.ok('apply_code', { code_id: a, source_id: other, start_pos: 0, end_pos: 7 });
      const full = fx.handle.repo.listSegmentsForSource(src);
      const marks = fx.handle.repo.listSegmentMarksForSource(src);
      assert.equal(marks.length, 3);
      assert.deepEqual(
        marks,
        full.map(({ text: _text, ...rest }) => rest),
      );
      assert.ok(marks.every((m) => !('text' in m)));
      assert.deepEqual(
        marks.map((m) => m.start_pos),
        [3, 3, 20],
      );
    } finally {
      await fx.close();
    }
  });
});
