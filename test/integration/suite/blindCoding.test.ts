// Runs in the REAL VS Code extension host (test/integration/run.mjs): blind coding (issue 16 item 5). The
// researcher (this VS Code, coder name from marginalia.coder.name) codes one passage, a second human coder (the
// reviewer token's role under the coder name "Second Coder", who leads) codes the same passage with another code.
// With blind coding on, the Codes tree counts and the editor's decorations show only the researcher's coding and
// the status bar says so; when the lead ends it, both codings are counted and drawn again and the hint goes. The
// researcher can also start it as lead and end it with the commands Start Blind Coding... and End Blind Coding.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Caller } from '../../../src/agent/pipeline';
import type { MarginaliaApi } from '../../../src/extension';
import { until } from './support';

const EXTENSION_ID = 'marginalia.marginalia';
const TEXT = 'INTERVIEWER: What kept you coming back?\nAMARA: Knowing that the others would notice if I did not turn up.\n';
const PASSAGE = 'the others would notice';

describe('Blind coding in VS Code', function () {
  this.timeout(90_000);
  let api: MarginaliaApi;
  let editor: vscode.TextEditor;
  let sourceId = 0;
  const ids = { mine: 0, theirs: 0 };
  /** the second human coder: the reviewer token's caller under another coder name (as X-Marginalia-User names it over HTTP) */
  let SECOND: Caller;
  const ws = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  const file = () => path.join(ws(), 'blind-interview.txt');

  const invoke = async (tool: string, args: Record<string, unknown>, caller: Caller = api.workbench.caller()) => {
    const out = await api.workbench.pipeline.invoke(tool, args, caller);
    assert.ok(out.envelope.success, `${tool}: ${JSON.stringify(out.envelope)}`);
    return out.envelope.data as any;
  };
  /** segment_count per code name as the Codes tree shows it */
  const treeCounts = () =>
    Object.fromEntries(
      api.codesTree
        .getChildren()
        .flatMap((n) => (n.kind === 'code' ? [[n.code.name, n.code.segment_count] as const] : []))
        .filter(([name]) => name === 'Mine' || name === 'Theirs'),
    );
  /** the coded count the Sources view shows for the interview */
  const sourceCoded = () => {
    const node = api.sourcesTree.getChildren().find((n) => n.kind === 'source' && n.source.source_id === sourceId);
    return node?.kind === 'source' ? node.source.segment_count : undefined;
  };
  /** the code ids the editor's decorations draw */
  const drawnCodes = () => [...new Set((api.decorations.drawnFor(editor)?.underlines ?? []).flatMap((u) => u.code_ids))].sort((a, b) => a - b);

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    SECOND = api.agent.implicitCaller(`Bearer ${api.tokens.reviewer}`, 'integration', 'REST_CLIENT', 'Second Coder');
    await vscode.commands.executeCommand('marginalia.project.new', path.join(ws(), 'blind.qda'));
    fs.writeFileSync(file(), TEXT);
    const imported = (await vscode.commands.executeCommand('marginalia.sources.import', [vscode.Uri.file(file())])) as number[];
    sourceId = imported[0] as number;
    ids.mine = (await invoke('create_code', { name: 'Mine', color: '#4E79A7' })).code_id;
    ids.theirs = (await invoke('create_code', { name: 'Theirs', color: '#F28E2B' })).code_id;
    const start = TEXT.indexOf(PASSAGE); // ASCII: code points = UTF-16 units
    await invoke('apply_code', { code_id: ids.mine, source_id: sourceId, start_position: start, end_position: start + PASSAGE.length });
    await invoke('apply_code', { code_id: ids.theirs, source_id: sourceId, start_position: start, end_position: start + PASSAGE.length }, SECOND);
    await api.settled();
    editor = (await vscode.commands.executeCommand('marginalia.sources.open', sourceId)) as vscode.TextEditor;
    assert.ok(editor);
    await until('both codings drawn', () => (drawnCodes().length === 2 ? true : undefined));
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
    fs.rmSync(file(), { force: true });
  });

  it("without blind coding the tree counts and the editor draws both coders' codings; no hint", () => {
    assert.deepEqual(treeCounts(), { Mine: 1, Theirs: 1 });
    assert.deepEqual(
      drawnCodes(),
      [ids.mine, ids.theirs].sort((a, b) => a - b),
    );
    assert.equal(sourceCoded(), 2);
    assert.equal(api.blindCoding.text, '');
  });

  it('with blind coding on (another coder leads) the researcher sees only their own coding, and the status bar says so', async () => {
    const on = await invoke('set_blind_coding', { enabled: true, lead: 'Second Coder' }, SECOND);
    assert.equal(on.lead, 'Second Coder');
    await api.settled();
    await until("the editor drawing only the researcher's coding", () => (drawnCodes().length === 1 ? true : undefined));
    assert.deepEqual(drawnCodes(), [ids.mine]);
    assert.deepEqual(treeCounts(), { Mine: 1, Theirs: 0 });
    // the Sources view counts the researcher's own codings too
    await until('the Sources view counting one coding', () => (sourceCoded() === 1 ? true : undefined));
    assert.equal(api.blindCoding.text, '$(eye-closed) Blind coding: you see your codings only');
  });

  it('when the lead ends it, both codings are counted and drawn again and the hint goes', async () => {
    await invoke('end_blind_coding', {}, SECOND);
    await api.settled();
    await until('both codings drawn again', () => (drawnCodes().length === 2 ? true : undefined));
    assert.deepEqual(treeCounts(), { Mine: 1, Theirs: 1 });
    await until('the Sources view counting both codings', () => (sourceCoded() === 2 ? true : undefined));
    assert.equal(api.blindCoding.text, '');
  });

  it('the researcher starts it as lead from the command (still sees all) and ends it from the command', async () => {
    const me = api.workbench.caller().user;
    const on = (await vscode.commands.executeCommand('marginalia.team.startBlindCoding', me)) as { blind_coding: boolean; lead: string; you: { sees: string } };
    assert.deepEqual([on.blind_coding, on.lead, on.you.sees], [true, me, 'all']);
    await api.settled();
    assert.equal(api.blindCoding.text, "$(eye) Blind coding: you lead and see every coder's");
    assert.deepEqual(treeCounts(), { Mine: 1, Theirs: 1 });
    assert.equal(drawnCodes().length, 2);
    // the second coder, not the lead, sees only their own coding meanwhile
    const theirs = await invoke('list_segments', {}, SECOND);
    assert.deepEqual(
      (theirs.segments as { code_id: number }[]).map((x) => x.code_id),
      [ids.theirs],
    );
    const off = (await vscode.commands.executeCommand('marginalia.team.endBlindCoding')) as { blind_coding: boolean };
    assert.equal(off.blind_coding, false);
    await api.settled();
    assert.equal(api.blindCoding.text, '');
  });
  it("the open Reports are drawn again, with only the researcher's codings, when blind coding starts, and with both when it ends", async () => {
    const both = api.reports.whenRendered('frequency', 30_000);
    await vscode.commands.executeCommand('marginalia.reports.open');
    assert.equal((await both).items, 2, 'a bar per code both coders used');
    const mineOnly = api.reports.whenRendered('frequency', 30_000);
    await invoke('set_blind_coding', { enabled: true, lead: 'Second Coder' }, SECOND);
    assert.equal((await mineOnly).items, 1, "drawn again with the researcher's code only");
    const freq = api.reports.compute({ view: 'frequency' });
    assert.ok(freq.type === 'frequency');
    assert.deepEqual(
      freq.codes.filter((c) => c.segment_count > 0).map((c) => c.name),
      ['Mine'],
    );
    const again = api.reports.whenRendered('frequency', 30_000);
    await invoke('end_blind_coding', {}, SECOND);
    assert.equal((await again).items, 2, 'drawn again with both codes');
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });
});
