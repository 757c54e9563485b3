/**
 * The History view's diff in words (issue 13, item 9), from two canonical dumps built here by hand (the
 * history's file format: tables/<table>.jsonl, one JSON row per line; sources/<id>.txt): codes added,
 * renamed, moved, recoloured and removed; passages coded, uncoded and moved by a merge with their text;
 * edited source texts; other tables counted.
 */
import assert from 'node:assert/strict';
import { describeDumpDiff, MAX_PASSAGE_LINES, wordsToMarkdown } from '../../../src/vcs/diffInWords';

const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : '');

function dump(t: {
  codes?: object[];
  categories?: object[];
  sources?: object[];
  segments?: object[];
  case_attributes?: object[];
  texts?: Record<number, string>;
}): Map<string, string> {
  const m = new Map<string, string>();
  m.set('manifest.json', '{}');
  for (const k of ['codes', 'categories', 'sources', 'segments', 'case_attributes'] as const) if (t[k]) m.set(`tables/${k}.jsonl`, jsonl(t[k]!));
  for (const [id, text] of Object.entries(t.texts ?? {})) m.set(`sources/${id}.txt`, text);
  return m;
}

const SRC = { id: 1, name: 'interview-04', folder_id: null, memo: null };
const TEXT = 'Nobody trusted the council after the flood. We felt at home.';

describe('vcs/diffInWords', () => {
  it('names codes added, renamed, moved, recoloured and removed, and the passages coded with their text', () => {
    const a = dump({
      categories: [{ id: 1, name: 'Themes', parent_id: null, memo: null }],
      codes: [
        { id: 1, name: 'Trust', color: '#E15759', category_id: null, memo: null },
        { id: 2, name: 'Old', color: '#000000', category_id: null, memo: null },
      ],
      sources: [SRC],
      segments: [],
      texts: { 1: TEXT },
    });
    const b = dump({
      categories: [{ id: 1, name: 'Themes', parent_id: null, memo: null }],
      codes: [
        { id: 1, name: 'Distrust', color: '#4E79A7', category_id: 1, memo: null },
        { id: 3, name: 'Food security', color: '#59A14F', category_id: null, memo: null },
      ],
      sources: [SRC],
      segments: [{ id: 7, code_id: 1, source_id: 1, start_pos: 0, end_pos: 42, text: 'Nobody trusted the council after the flood', memo: null }],
      texts: { 1: TEXT },
    });
    assert.deepEqual(describeDumpDiff(a, b), [
      {
        heading: 'Codes',
        lines: [
          "Renamed the code 'Trust' to 'Distrust'",
          "Moved the code 'Distrust' to the category 'Themes'",
          "Recoloured the code 'Distrust' from #E15759 to #4E79A7",
          "Added the code 'Food security'",
          "Removed the code 'Old'",
        ],
      },
      { heading: 'Passages coded (1)', lines: ['\'Distrust\' in interview-04: "Nobody trusted the council after the flood"'] },
    ]);
  });

  it('says which passages a merge moved and which were uncoded, by the names they had', () => {
    const seg = (id: number, code: number, text: string) => ({ id, code_id: code, source_id: 1, start_pos: 0, end_pos: text.length, text, memo: null });
    const a = dump({
      codes: [
        { id: 1, name: 'Tension', color: '#E15759', category_id: null },
        { id: 2, name: 'Conflict', color: '#4E79A7', category_id: null },
      ],
      sources: [SRC],
      segments: [seg(1, 1, 'we argued'), seg(2, 1, 'the hose   rota\nagain'), seg(3, 2, 'gone now')],
    });
    const b = dump({
      codes: [{ id: 2, name: 'Conflict', color: '#4E79A7', category_id: null }],
      sources: [SRC],
      segments: [seg(1, 2, 'we argued'), seg(2, 2, 'the hose   rota\nagain')],
    });
    const words = describeDumpDiff(a, b);
    assert.deepEqual(words, [
      { heading: 'Codes', lines: ["Removed the code 'Tension'"] },
      { heading: 'Passages uncoded (1)', lines: ['\'Conflict\' in interview-04: "gone now"'] },
      {
        heading: 'Passages moved to another code (2)',
        lines: ["'Conflict' in interview-04: \"we argued\" (was 'Tension')", "'Conflict' in interview-04: \"the hose rota again\" (was 'Tension')"],
      },
    ]);
    assert.equal(wordsToMarkdown(words).split('\n')[0], '## Codes');
  });

  it('reports an edited source text, counts other tables, caps long passage lists and says when nothing changed', () => {
    const many = Array.from({ length: MAX_PASSAGE_LINES + 5 }, (_, i) => ({
      id: i + 1,
      code_id: 1,
      source_id: 1,
      start_pos: i,
      end_pos: i + 1,
      text: `p${i}`,
    }));
    const a = dump({ codes: [{ id: 1, name: 'A', color: '#000000' }], sources: [SRC], segments: [], case_attributes: [], texts: { 1: 'blob 1111' } });
    const b = dump({
      codes: [{ id: 1, name: 'A', color: '#000000' }],
      sources: [SRC],
      segments: many,
      case_attributes: [{ case_id: 1, name: 'age', value_number: 40 }],
      texts: { 1: 'blob 2222' },
    });
    const words = describeDumpDiff(a, b);
    assert.deepEqual(
      words.map((s) => s.heading),
      ['Sources', `Passages coded (${MAX_PASSAGE_LINES + 5})`, 'Other changes'],
    );
    assert.deepEqual(words[0]!.lines, ["Edited the text of 'interview-04'"]);
    assert.equal(words[1]!.lines.length, MAX_PASSAGE_LINES + 1);
    assert.equal(words[1]!.lines.at(-1), '… and 5 more passages');
    assert.deepEqual(words[2]!.lines, ['case attributes: 1 row added or changed']);
    assert.deepEqual(describeDumpDiff(a, a), []);
    assert.equal(wordsToMarkdown([]), 'No changes.\n');
  });
});
