import { strict as assert } from 'node:assert';
import { conflictInWords, short } from '../../../src/ui/merge/conflictWords';

/** The Merge Conflicts view's rows in words (src/ui/merge/conflictWords.ts), one per kind of conflict. */
describe('merge conflicts in words', () => {
  const entity = (table: string, name: string, field?: string) => ({ table, guid: 'g', name, local_id: 7, ...(field ? { field } : {}) });

  it('a rename on both sides names the base and both new names, the other side by its coder', () => {
    const c = {
      kind: 'code_renamed_both' as const,
      entity: entity('codes', 'Mutual trust'),
      ours: 'Mutual trust',
      theirs: 'Trust in neighbours',
      base: 'Trust',
    };
    assert.equal(conflictInWords(c, { them: 'Ana' }), "'Trust' renamed on both sides: 'Trust' ← you: 'Mutual trust', Ana: 'Trust in neighbours'");
    assert.equal(conflictInWords(c), "'Trust' renamed on both sides: 'Trust' ← you: 'Mutual trust', theirs: 'Trust in neighbours'");
  });

  it('delete versus use says who deleted and who used it', () => {
    const mine = { kind: 'code_deleted_used' as const, entity: entity('codes', 'Food'), ours: null, theirs: { name: 'Food' }, base: { name: 'Food' } };
    assert.equal(conflictInWords(mine, { them: 'Ben' }), "Code 'Food' deleted by you while Ben used it (kept for now)");
    const theirs = { ...mine, ours: { name: 'Food' }, theirs: null };
    assert.equal(conflictInWords(theirs, { them: 'Ben' }), "Code 'Food' deleted by Ben while you used it (kept for now)");
  });

  it('a move names the categories, "none" for the top level', () => {
    const c = { kind: 'code_moved_both' as const, entity: entity('codes', 'Trust'), ours: 3, theirs: null, base: 1 };
    const names: Record<number, string> = { 3: 'Relations' };
    assert.equal(
      conflictInWords(c, { them: 'Ana', placeName: (t, id) => (t === 'categories' ? names[id] : undefined) }),
      "Code 'Trust' moved on both sides: you: 'Relations', Ana: none",
    );
  });

  it('a passage edited on both sides quotes both versions, shortened to one line', () => {
    const c = {
      kind: 'source_text_overlap' as const,
      entity: entity('sources', 'interview-01'),
      ours: { text: 'We shared\nseeds.', start_pos: 10, end_pos: 26 },
      theirs: { text: 'Neighbours shared seeds every spring.', start_pos: 10, end_pos: 47 },
      base: { text: 'Neighbours shared seeds.' },
    };
    assert.equal(
      conflictInWords(c, { them: 'Ana' }),
      "The same passage of 'interview-01' edited on both sides: you: 'We shared seeds.', Ana: 'Neighbours shared seeds every spring.'",
    );
  });

  it('memos, name clashes and other fields', () => {
    assert.equal(
      conflictInWords({ kind: 'memo_edited_both', entity: entity('codes', 'Trust'), ours: 'mine', theirs: 'hers', base: null }, { them: 'Ana' }),
      "Memo of code 'Trust' edited on both sides: you: 'mine', Ana: 'hers'",
    );
    assert.equal(
      conflictInWords({ kind: 'name_clash', entity: entity('codes', 'Care (2)'), ours: 'Care', theirs: 'Care (2)', base: null }, { them: 'Ana' }),
      "Two codes named 'Care': Ana's is now 'Care (2)'",
    );
    assert.equal(
      conflictInWords(
        { kind: 'field_edited_both', entity: entity('codes', 'Trust', 'color'), ours: '#111111', theirs: '#222222', base: '#000000' },
        { them: 'Ana' },
      ),
      "Color of code 'Trust' changed on both sides: you: '#111111', Ana: '#222222'",
    );
  });

  it('short cuts at the limit with an ellipsis', () => {
    assert.equal(short('abcdefghij', 5), 'abcd…');
    assert.equal(short('  a\n b  ', 5), 'a b');
  });
});
