// Runs in the REAL VS Code extension host (test/integration/run.mjs): codes you can see (issue 13, item 2).
// Two overlapping codes on one passage, coded from the editor, are drawn as two distinguishable marks that
// carry both names: two opaque underlines of different colours on different lanes, a coding stripe each in
// the gutter, and a label per code at the end of the line; no translucent tints stacked on the overlap. The
// setting marginalia.coding.display switches tints / stripes / both live. Checked through what the
// decorations module says it drew (api.decorations.drawnFor) and through VS Code's hover providers.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MarginaliaApi } from '../../../src/extension';
import type { DrawnDecorations, PaintReport } from '../../../src/ui/decorations/codedSegmentDecorations';

const EXTENSION_ID = 'marginalia.marginalia';
const FOOD = { name: 'Food security', color: '#4E79A7' };
const TRUST = { name: 'Trust', color: '#F28E2B' };

const TRANSCRIPT = [
  'INTERVIEWER: What kept you coming back to the garden?',
  'AMARA: Knowing that the others would notice if I did not turn up, and that the vegetables fed three families on our street.',
  'INTERVIEWER: Thank you.',
  '',
].join('\n');

/** Two ranges share at least one character. */
const intersects = (a: vscode.Range, b: vscode.Range): boolean => {
  const i = a.intersection(b);
  return !!i && !i.isEmpty;
};

describe('Codes you can see', function () {
  this.timeout(90_000);
  let api: MarginaliaApi;
  let editor: vscode.TextEditor;
  let sourceId = 0;
  const ids = { food: 0, trust: 0 };
  const ws = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  const file = path.join(ws(), 'stripes-interview.txt');
  // "the others would notice if I did not turn up, and" (Trust) overlaps
  // "turn up, and that the vegetables fed three families" (Food security) on "turn up, and"
  const trustText = 'the others would notice if I did not turn up, and';
  const foodText = 'turn up, and that the vegetables fed three families';
  const overlapText = 'turn up, and';

  const display = vscode.workspace.getConfiguration('marginalia.coding');
  /** Sets the display and waits for the repaint it causes in our editor. */
  async function setDisplay(value: string | undefined): Promise<DrawnDecorations> {
    const repainted = api.decorations.painted(sourceId, (r: PaintReport) => r.reason === 'display');
    await display.update('display', value, vscode.ConfigurationTarget.Global);
    await repainted;
    const drawn = api.decorations.drawnFor(editor);
    assert.ok(drawn);
    return drawn;
  }

  /** Selects `text` in the editor and codes it with `codeId` through the researcher's command. */
  async function code(text: string, codeId: number): Promise<void> {
    const doc = editor.document;
    const at = doc.getText().indexOf(text);
    assert.ok(at >= 0, text);
    const before = api.decorations.drawnFor(editor)?.labels.length ?? 0;
    const repainted = api.decorations.painted(sourceId, (r) => r.reason === 'data' && r.segments > 0);
    editor.selection = new vscode.Selection(doc.positionAt(at), doc.positionAt(at + text.length));
    await vscode.commands.executeCommand('marginalia.coding.codeSelection', { codeId });
    await api.settled();
    const report = await repainted;
    assert.ok(report.ms >= 0 && report.segments >= 1);
    assert.ok((api.decorations.drawnFor(editor)?.labels.length ?? 0) >= before);
  }

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    await vscode.commands.executeCommand('marginalia.project.new', path.join(ws(), 'stripes.qda'));
    fs.writeFileSync(file, TRANSCRIPT);
    const imported = (await vscode.commands.executeCommand('marginalia.sources.import', [vscode.Uri.file(file)])) as number[];
    sourceId = imported[0] as number;
    for (const [key, c] of [
      ['food', FOOD],
      ['trust', TRUST],
    ] as const) {
      const out = await api.workbench.pipeline.invoke('create_code', c, api.workbench.caller());
      assert.ok(out.envelope.success, JSON.stringify(out.envelope));
      ids[key] = (out.envelope.data as { code_id: number }).code_id;
    }
    await api.settled();
    editor = (await vscode.commands.executeCommand('marginalia.sources.open', sourceId)) as vscode.TextEditor;
    assert.ok(editor);
    await code(trustText, ids.trust);
    await code(foodText, ids.food);
  });

  after(async () => {
    await display.update('display', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it('by default (both): two overlapping codes are two opaque underlines of different colours, two stripes and two labels naming them', () => {
    assert.equal(vscode.workspace.getConfiguration('marginalia.coding').inspect('display')?.defaultValue, 'both');
    const drawn = api.decorations.drawnFor(editor)!;
    assert.equal(drawn.display, 'both');
    const doc = editor.document;
    const rangeOf = (t: string) => {
      const at = doc.getText().indexOf(t);
      return new vscode.Range(doc.positionAt(at), doc.positionAt(at + t.length));
    };
    const overlap = rangeOf(overlapText);
    const line = overlap.start.line;

    // underlines: one per code, each on its own lane, both covering the overlap, in distinct opaque colours
    const trustLine = drawn.underlines.find((u) => u.code_ids.includes(ids.trust));
    const foodLine = drawn.underlines.find((u) => u.code_ids.includes(ids.food));
    assert.ok(trustLine && foodLine, JSON.stringify(drawn.underlines));
    assert.equal(trustLine.color, TRUST.color);
    assert.equal(foodLine.color, FOOD.color);
    assert.notEqual(trustLine.lane, foodLine.lane, 'different lanes: two separate lines under the text');
    assert.deepEqual(new Set([trustLine.style, foodLine.style]), new Set(['bottom-border', 'underline']));
    assert.ok(trustLine.ranges.some((r) => r.isEqual(rangeOf(trustText))));
    assert.ok(foodLine.ranges.some((r) => r.isEqual(rangeOf(foodText))));
    for (const u of [trustLine, foodLine]) {
      assert.match(u.color, /^#[0-9A-F]{6}$/, 'an opaque colour, no alpha');
      assert.ok(
        u.ranges.some((r) => r.contains(overlap)),
        `${u.color} covers the overlap`,
      );
    }

    // labels at the end of the coded line: both names, each on its own code colour, readable text
    const labels = drawn.labels.filter((l) => l.line === line);
    assert.deepEqual(labels.map((l) => l.text).sort(), [FOOD.name, TRUST.name].sort());
    assert.deepEqual(new Set(labels.map((l) => l.color)), new Set([FOOD.color, TRUST.color]));
    for (const l of labels) assert.match(l.textColor, /^#(000000|FFFFFF)$/);

    // coding stripes: the line's gutter image has a column in each code colour
    const stripes = drawn.stripes.find((s) => s.lines.includes(line));
    assert.ok(stripes, JSON.stringify(drawn.stripes));
    assert.deepEqual(new Set(stripes.columns), new Set([TRUST.color, FOOD.color]));
    assert.ok(!drawn.stripes.some((s) => s.lines.includes(line - 1) || s.lines.includes(line + 1)), 'uncoded lines have no stripes');

    // tints: light, and never two on one character (no blended colour on the overlap)
    const tintRanges = drawn.tints.flatMap((t) => t.ranges.map((r) => ({ r, t })));
    for (const t of drawn.tints) assert.match(t.background, /^#[0-9A-F]{6}1A$/);
    for (let i = 0; i < tintRanges.length; i++)
      for (let j = i + 1; j < tintRanges.length; j++) assert.ok(!intersects(tintRanges[i]!.r, tintRanges[j]!.r), 'tints do not stack');
    assert.equal(tintRanges.filter((x) => x.r.contains(overlap)).length, 1, 'the overlap is tinted once, in one code colour');

    // what the coding test relies on: the segment ranges by code
    assert.ok(
      api.decorations
        .drawnIn(editor)
        .get(ids.food)
        ?.some((r) => r.isEqual(rangeOf(foodText))),
    );
  });

  it('the hover over the overlap still names both codes', async () => {
    const doc = editor.document;
    const pos = doc.positionAt(doc.getText().indexOf(overlapText) + 2);
    const hovers = (await vscode.commands.executeCommand('vscode.executeHoverProvider', doc.uri, pos)) as vscode.Hover[];
    const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
    assert.match(text, /\*\*Food security\*\*/);
    assert.match(text, /\*\*Trust\*\*/);
  });

  it('marginalia.coding.display switches live between tints, stripes and both', async () => {
    const tints = await setDisplay('tints');
    assert.equal(tints.display, 'tints');
    assert.deepEqual([tints.underlines.length, tints.labels.length, tints.stripes.length], [0, 0, 0]);
    assert.deepEqual(new Set(tints.tints.map((t) => t.background)), new Set([`${FOOD.color}33`, `${TRUST.color}33`]));

    const stripes = await setDisplay('stripes');
    assert.equal(stripes.display, 'stripes');
    assert.equal(stripes.tints.length, 0);
    assert.deepEqual(new Set(stripes.underlines.map((u) => u.color)), new Set([FOOD.color, TRUST.color]));
    assert.deepEqual(stripes.labels.map((l) => l.text).sort(), [FOOD.name, TRUST.name].sort());
    assert.equal(stripes.stripes.length, 1);

    const both = await setDisplay(undefined);
    assert.equal(both.display, 'both');
    assert.ok(both.tints.length > 0 && both.underlines.length === 2 && both.labels.length === 2);
  });

  it('a recoloured code is redrawn in its new colour; a code deleted with its codings leaves no marks', async () => {
    const repainted = api.decorations.painted(sourceId, (r) => r.reason === 'data');
    const out = await api.workbench.pipeline.invoke('set_code_color', { code_id: ids.trust, color: '#59A14F' }, api.workbench.caller());
    assert.ok(out.envelope.success, JSON.stringify(out.envelope));
    await api.settled();
    await repainted;
    let drawn = api.decorations.drawnFor(editor)!;
    assert.ok(drawn.underlines.some((u) => u.color === '#59A14F' && u.code_ids.includes(ids.trust)));
    assert.ok(!drawn.underlines.some((u) => u.color === TRUST.color));
    assert.deepEqual(drawn.labels.find((l) => l.code_id === ids.trust)?.color, '#59A14F');

    const again = api.decorations.painted(sourceId, (r) => r.reason === 'data');
    const del = await api.workbench.pipeline.invoke('delete_code', { code_id: ids.trust, delete_segments: true }, api.workbench.caller());
    assert.ok(del.envelope.success, JSON.stringify(del.envelope));
    await api.settled();
    await again;
    drawn = api.decorations.drawnFor(editor)!;
    assert.deepEqual(
      drawn.labels.map((l) => l.text),
      [FOOD.name],
    );
    assert.ok(!drawn.underlines.some((u) => u.code_ids.includes(ids.trust)));
  });
});
