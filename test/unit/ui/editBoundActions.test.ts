/**
 * Which codings VS Code's own undo of a text edit cannot bring back by itself (src/ui/undo/editBoundActions.ts):
 * those whose whole text the edit deletes and those whose edge it cuts. The edit tracker takes exactly these off as
 * undoable actions. Ranges are code points; every expected range is worked out by hand from the store's rules
 * (text typed at a coding's edge stays outside it; a deleted edge moves to the deletion's start).
 */
import * as assert from 'node:assert/strict';
import { codingsUndoCannotRestore, EditBoundActions } from '../../../src/ui/undo/editBoundActions';

// a coding on [8, 21) of a text at least 45 code points long
const seg = (start_pos: number, end_pos: number) => ({ start_pos, end_pos });

describe('Codings an undo cannot restore', () => {
  it('typing that only inserts never cuts a coding, for any codings and any batch of insertions (the edit tracker skips reading them)', () => {
    let state = 7; // a fixed linear congruential sequence: the same cases every run
    const rnd = (n: number) => (state = (state * 1103515245 + 12345) % 2147483648) % n;
    for (let t = 0; t < 20_000; t++) {
      const codings = Array.from({ length: 1 + rnd(4) }, () => {
        const a = rnd(30);
        return seg(a, a + 1 + rnd(10));
      });
      let length = 50;
      const inserts = Array.from({ length: 1 + rnd(3) }, () => {
        const at = rnd(length + 1);
        const text = 'x'.repeat(1 + rnd(5));
        length += text.length;
        return { start_pos: at, end_pos: at, text };
      });
      assert.deepEqual(codingsUndoCannotRestore(codings, inserts), [], JSON.stringify({ codings, inserts }));
    }
  });

  it('edits strictly inside a coding, before or after it, or insertions at its edges: none (the inverse edit restores them)', () => {
    const s = seg(8, 21);
    assert.deepEqual(codingsUndoCannotRestore([s], [{ start_pos: 12, end_pos: 15, text: 'XYZWV' }]), []);
    assert.deepEqual(codingsUndoCannotRestore([s], [{ start_pos: 0, end_pos: 3, text: '' }]), []);
    assert.deepEqual(codingsUndoCannotRestore([s], [{ start_pos: 30, end_pos: 40, text: 'no' }]), []);
    assert.deepEqual(codingsUndoCannotRestore([s], [{ start_pos: 8, end_pos: 8, text: 'all ' }]), []);
    assert.deepEqual(codingsUndoCannotRestore([s], [{ start_pos: 21, end_pos: 21, text: ' again' }]), []);
  });

  it('a deletion covering the whole coding: removed (after null)', () => {
    const s = seg(8, 21);
    assert.deepEqual(codingsUndoCannotRestore([s], [{ start_pos: 5, end_pos: 24, text: '' }]), [{ segment: s, after: null }]);
    // replaced by other text: the coding does not take the new text
    assert.deepEqual(codingsUndoCannotRestore([s], [{ start_pos: 8, end_pos: 21, text: 'the garden' }]), [{ segment: s, after: null }]);
  });

  it('typing over its end or its start: cut, with the range left', () => {
    const s = seg(8, 21);
    // [18, 25) replaced by 3 code points: the end moves to 18
    assert.deepEqual(codingsUndoCannotRestore([s], [{ start_pos: 18, end_pos: 25, text: 'abc' }]), [{ segment: s, after: { start_pos: 8, end_pos: 18 } }]);
    // [5, 12) replaced by 2 code points: the start moves after them (7), the end by -5 (16)
    assert.deepEqual(codingsUndoCannotRestore([s], [{ start_pos: 5, end_pos: 12, text: 'ab' }]), [{ segment: s, after: { start_pos: 7, end_pos: 16 } }]);
  });

  it('edits apply in order, each in the coordinates the previous left; code points, not UTF-16 units', () => {
    const a = seg(8, 21);
    const b = seg(30, 40);
    // first delete [25, 45) (b goes), then insert 2 emoji (2 code points) at 0: a is only moved
    assert.deepEqual(
      codingsUndoCannotRestore(
        [a, b],
        [
          { start_pos: 25, end_pos: 45, text: '' },
          { start_pos: 0, end_pos: 0, text: '😀😀' },
        ],
      ),
      [{ segment: b, after: null }],
    );
  });
});

describe('Edit-bound actions', () => {
  it('remembers actions and the undo/redo calls that followed them; forgets a closed document', () => {
    const r = new EditBoundActions();
    r.add({ correlation_id: 'a', kind: 'removal', key: 'file:///x', before: 'ab', after: 'a' });
    r.add({ correlation_id: 'b', kind: 'reshape', key: 'file:///y', before: 'ab', after: 'a' });
    r.addFollower('u');
    assert.equal(r.isBound('a'), true);
    assert.equal(r.isBound('u'), true);
    assert.equal(r.isBound('z'), false);
    assert.equal(r.get('u'), undefined, 'a follower is not an action');
    r.forgetDocument('file:///x');
    assert.equal(r.get('a'), undefined);
    assert.equal(r.get('b')?.kind, 'reshape');
    r.clear();
    assert.equal(r.isBound('b'), false);
    assert.equal(r.isBound('u'), false);
  });
});
