// Runs in the REAL VS Code extension host (test/integration/run.mjs): a line carrying three codes shows one or
// two code names and a "+N" chip at its end, never a row of every name running past the editor's edge (issue 13,
// item 2 defect: with 3+ codes the end-of-line labels were cut). The chip's hover names every code of the line.
// Checked through what the decorations module says it drew (api.decorations.drawnFor); the expected names are
// the ones this test gives its codes.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { MarginaliaApi } from '../../../src/extension';
import { openInterview, until } from './support';

const EXTENSION_ID = 'marginalia.marginalia';
const TEXT = 'Participant 2: The same things my husband grew, and the seeds came from his village in 1983.\nINTERVIEWER: Thank you.\n';

describe('Crowded coding labels', function () {
  this.timeout(90_000);
  let api: MarginaliaApi;

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it('three codes on a line: the first name, "+2", and all three names for the hover; two codes: both names, no chip', async () => {
    api = await vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID)!.activate();
    const names = ['Grief and loss', 'Food and cultural identity', 'Seed saving and heritage'];
    const { sourceId, codeIds, editor } = await openInterview(api, { project: 'crowded.qda', sourceFile: 'interview-02.txt', text: TEXT, codes: names });
    const ids = names.map((n) => codeIds[n]!);
    const code = async (codeId: number, phrase: string) => {
      const at = TEXT.indexOf(phrase);
      const r = await api.workbench.pipeline.invoke(
        'apply_code',
        { code_id: codeId, source_id: sourceId, start_pos: at, end_pos: at + phrase.length },
        api.workbench.caller(),
      );
      assert.ok(r.envelope.success, JSON.stringify(r.envelope));
    };
    // whole passage, then two overlapping parts of it (code points = UTF-16 here: ASCII only)
    await code(ids[0]!, 'The same things my husband grew');
    await code(ids[1]!, 'my husband grew, and the seeds');
    await code(ids[2]!, 'the seeds came from his village in 1983');
    const drawn = await until('three codes drawn on line 0', () => {
      const d = api.decorations.drawnFor(editor);
      return d && d.more.length === 1 ? d : undefined;
    });
    assert.deepEqual(
      drawn.labels.filter((l) => l.line === 0).map((l) => l.text),
      ['Grief and loss'],
      'the first name only: the first two are longer than 26 characters together',
    );
    assert.equal(drawn.more[0]!.line, 0);
    assert.equal(drawn.more[0]!.count, 2);
    assert.deepEqual([...drawn.more[0]!.names].sort(), [...names].sort(), 'the hover names every code of the line');

    // a line with two codes keeps both names and no chip
    const r = await api.workbench.pipeline.invoke(
      'delete_segment',
      {
        segment_id: api.workbench
          .repo()!
          .listSegmentsForSource(sourceId!)
          .find((s) => s.code_id === ids[2])!.segment_id,
      },
      api.workbench.caller(),
    );
    assert.ok(r.envelope.success);
    const two = await until('two codes drawn on line 0', () => {
      const d = api.decorations.drawnFor(editor);
      return d && d.more.length === 0 && d.labels.length === 2 ? d : undefined;
    });
    assert.deepEqual(two.labels.map((l) => l.text).sort(), [names[0], names[1]].sort());
  });
});
