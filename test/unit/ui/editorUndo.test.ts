/**
 * Undo in the editor (issue 13, item 1): the editor's undo order kept by src/ui/undo/editorUndoFrames.ts,
 * driven through sequences a researcher produces (type, code, Ctrl+Z, Ctrl+Shift+Z), and the keybindings
 * package.json contributes (Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y, Cmd variants on macOS, only in source editors).
 * Clocks stand for the store's last event sequence number; the expected decisions are written by hand.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EditorUndoFrames, MAX_FRAMES } from '../../../src/ui/undo/editorUndoFrames';

const DOC = 'file:///ws/interview-04.txt';

describe('Undo in the editor: the order of typing and Marginalia actions', () => {
  it('typing after the last action comes first; the action (later than the typing) is undone before the typing', () => {
    const f = new EditorUndoFrames();
    assert.equal(f.undoStamp(DOC), null, 'nothing typed: nothing for the editor');
    // typed "workshops " at clock 10 (the researcher's last action had sequence number 4), two bursts
    f.typed(DOC, 'the - were', 'the w - were', 10, 4);
    f.typed(DOC, 'the w - were', 'the workshops - were', 12, 4);
    assert.equal(f.undoStamp(DOC), 10, 'one frame from the first edit');
    // the researcher codes (sequence number 13): an action with a higher number came after the typing
    const codingSeq = 13;
    assert.ok(codingSeq > (f.undoStamp(DOC) as number), 'Ctrl+Z undoes the coding first');
    // once the coding is undone, the researcher's next action is older (4): the editor's turn
    assert.ok(4 <= (f.undoStamp(DOC) as number));
    // the editor's undo goes back in two steps; the frame is done when the text is back
    f.undone(DOC, 'the w - were', 15);
    assert.equal(f.undoStamp(DOC), 10, 'partly undone: still the editor');
    assert.equal(f.redoStamp(DOC), 15);
    f.undone(DOC, 'the - were', 16);
    assert.equal(f.undoStamp(DOC), null, 'all typing undone');
    assert.equal(f.redoStamp(DOC), 16, 'the editor can redo; its undo happened at 16');
  });

  it('a Marginalia action between two bursts of typing splits them, so undo alternates in the order acted', () => {
    const f = new EditorUndoFrames();
    f.typed(DOC, 'a', 'ab', 5, 1); // typing 1 after action 1
    f.typed(DOC, 'ab', 'abc', 8, 6); // action 6 (a coding) came in between: a new frame
    assert.equal(f.undoStamp(DOC), 8);
    f.undone(DOC, 'ab', 9);
    assert.equal(f.undoStamp(DOC), 5, 'the older typing is next, after action 6 (6 > 5: Marginalia first)');
    f.undone(DOC, 'a', 11);
    assert.equal(f.undoStamp(DOC), null);
    // redo: the last undone comes back first
    assert.equal(f.redoStamp(DOC), 11);
    f.redone(DOC, 'ab');
    assert.equal(f.undoStamp(DOC), 5);
    assert.equal(f.redoStamp(DOC), 9);
    f.redone(DOC, 'abc');
    assert.equal(f.redoStamp(DOC), null);
    assert.equal(f.undoStamp(DOC), 8);
  });

  it('typing clears the redo side; typing after a partial undo starts a new frame', () => {
    const f = new EditorUndoFrames();
    f.typed(DOC, '', 'one two', 3, 0);
    f.undone(DOC, 'one ', 4); // the editor took back "two" only
    assert.equal(f.redoStamp(DOC), 4);
    f.typed(DOC, 'one ', 'one three', 5, 0);
    assert.equal(f.redoStamp(DOC), null, 'the editor dropped its redo');
    assert.equal(f.undoStamp(DOC), 5, 'a new frame for "three"');
    f.undone(DOC, 'one ', 6);
    assert.equal(f.undoStamp(DOC), 3, 'then what is left of the first');
    f.undone(DOC, '', 7);
    assert.equal(f.undoStamp(DOC), null);
  });

  it('one editor undo step over two frames moves both to the redo side', () => {
    const f = new EditorUndoFrames();
    f.typed(DOC, 'x', 'xy', 2, 1);
    f.typed(DOC, 'xy', 'xyz', 4, 3);
    f.undone(DOC, 'x', 5);
    assert.equal(f.undoStamp(DOC), null);
    f.redone(DOC, 'xyz');
    assert.equal(f.undoStamp(DOC), 4);
    assert.equal(f.redoStamp(DOC), null);
  });

  it('forgets what the editor no longer has; keeps at most MAX_FRAMES frames per document', () => {
    const f = new EditorUndoFrames();
    f.typed(DOC, 'a', 'b', 1, 0);
    f.forgetUndo(DOC);
    assert.equal(f.undoStamp(DOC), null);
    let text = '';
    for (let i = 0; i < MAX_FRAMES + 5; i++) f.typed(DOC, text, (text += 'x'), i, i);
    let frames = 0;
    while (f.undoStamp(DOC) !== null) {
      text = text.slice(0, -1);
      f.undone(DOC, text, 1000);
      frames++;
    }
    assert.equal(frames, MAX_FRAMES);
    f.forgetRedo(DOC);
    assert.equal(f.redoStamp(DOC), null);
  });
});

describe('Undo in the editor: keybindings', () => {
  const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
    contributes: { commands: { command: string; title: string }[]; keybindings: { command: string; key: string; mac?: string; when?: string }[] };
  };
  const bound = (key: string, mac = false) =>
    pkg.contributes.keybindings.filter(
      (k) => (mac ? (k.mac ?? k.key) : k.key) === key && !(mac && /!isMac/.test(k.when ?? '')) && !(!mac && /(^|&&\s*)isMac/.test(k.when ?? '')),
    );

  it('Ctrl+Z, Ctrl+Shift+Z and Ctrl+Y (Cmd+Z, Cmd+Shift+Z on macOS) run Marginalia: Undo / Redo only in a source editor', () => {
    const cases: [string, boolean, string][] = [
      ['ctrl+z', false, 'marginalia.undo'],
      ['ctrl+shift+z', false, 'marginalia.redo'],
      ['ctrl+y', false, 'marginalia.redo'],
      ['cmd+z', true, 'marginalia.undo'],
      ['cmd+shift+z', true, 'marginalia.redo'],
    ];
    for (const [key, mac, command] of cases) {
      const ks = bound(key, mac);
      assert.deepEqual(
        ks.map((k) => k.command),
        [command],
        `${key}${mac ? ' (macOS)' : ''}`,
      );
      assert.match(ks[0]?.when ?? '', /editorTextFocus && marginalia\.sourceEditorFocus/);
    }
    assert.deepEqual(bound('ctrl+y', true), [], 'Ctrl+Y is not redo on macOS');
    const titles = new Map(pkg.contributes.commands.map((c) => [c.command, c.title]));
    assert.equal(titles.get('marginalia.undo'), 'Undo');
    assert.equal(titles.get('marginalia.redo'), 'Redo');
  });
});
