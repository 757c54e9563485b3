/**
 * End-to-end test of the merge conflict tools (issue 16 item 4: list_merge_conflicts, resolve_merge_conflict) over
 * HTTP against the real built CLI (`bin/marginalia.js serve`; run `npm run build` first).
 *
 * Setup, in this process, with the real store and engine: a project is copied (as a clone of its history gives),
 * both copies diverge through the real tools (the code "Worry" renamed "Anxiety" here and "Concern" there, its memo
 * edited on both sides, the same transcript passage rewritten on both sides, a coding made on the other side), the
 * two canonical dumps are merged (src/vcs/merge), the merged dump restored into the first project and the
 * conflicts stored through the repository, as a sync does. Then the server serves that project.
 *
 * Covered: the stored conflicts are listed with their three values and choices, and still after a restart; an
 * agent's resolve waits for the researcher (Require); the researcher resolves a rename with theirs (the codes list
 * shows the new name), a text conflict with theirs (the transcript holds theirs' passage, the coding made on
 * theirs' side stays on its words), a memo with both; an unknown or already resolved conflict fails with
 * MERGE_CONFLICT_NOT_FOUND (404), a choice the kind does not take with INVALID_ARGUMENTS (400); the resolutions
 * survive a restart.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Caller } from '../../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../src/cli/compose';
import { silentLogger } from '../../src/core/log';
import { StoreDumpAccess } from '../../src/store/dumpAccess';
import { canonicalDump, parseDump, planRestore, readProjectTables } from '../../src/vcs/canonicalDump';
import { mergeDumps } from '../../src/vcs/merge/mergeDumps';
import { AS_AGENT, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

const ALICE: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'alice' };
const BOB: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'bob' };
const TEXT = 'We lived near the river. The flood came in May. Nobody helped us.';

async function open(file: string) {
  const handle = await openProjectHandle(file, { create: !fs.existsSync(file), checkpointIdleMs: 0 });
  const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger });
  const ok = async (name: string, args: unknown, caller: Caller): Promise<any> => {
    const out = await pipeline.invoke(name, args, caller);
    if (!out.envelope.success) assert.fail(`${name}: ${out.envelope.error_code}: ${out.envelope.error}`);
    return out.envelope.data;
  };
  return { handle, ok };
}

const dumpOf = (h: ProjectHandle) => parseDump(canonicalDump(readProjectTables(new StoreDumpAccess(h.store))));

describe('merge conflict tools over HTTP (real CLI)', function () {
  this.timeout(120_000);
  let server: ServerProcess | undefined;
  let base = '';
  let project = '';
  const t = toolClient(() => base);
  let codeId = 0;
  let sourceId = 0;

  before(async () => {
    const dir = tmpDir('marginalia-merge-conflicts-e2e-');
    project = path.join(dir, 'ours.qda');
    const theirsFile = path.join(dir, 'theirs.qda');
    const ours = await open(project);
    sourceId = (await ours.ok('add_text_source', { name: 'Flood', content: TEXT }, ALICE)).source_id;
    codeId = (await ours.ok('create_code', { name: 'Worry', color: '#4E79A7', memo: 'fear of what comes' }, ALICE)).code_id;
    const baseDump = dumpOf(ours.handle);
    ours.handle.store.checkpoint();
    fs.copyFileSync(project, theirsFile);
    const theirs = await open(theirsFile);
    // ours
    await ours.ok('rename_code', { code_id: codeId, new_name: 'Anxiety' }, ALICE);
    await ours.ok('update_code_memo', { code_id: codeId, memo: 'fear of the next flood' }, ALICE);
    await ours.ok(
      'apply_source_edits',
      { source_id: sourceId, edits: [{ start_pos: TEXT.indexOf('in May'), end_pos: TEXT.indexOf('in May') + 6, text: 'in early May' }] },
      ALICE,
    );
    // theirs
    await theirs.ok('rename_code', { code_id: codeId, new_name: 'Concern' }, BOB);
    await theirs.ok('update_code_memo', { code_id: codeId, memo: 'worry about money' }, BOB);
    await theirs.ok(
      'apply_source_edits',
      { source_id: sourceId, edits: [{ start_pos: TEXT.indexOf('in May'), end_pos: TEXT.indexOf('in May') + 6, text: 'in June' }] },
      BOB,
    );
    const tText: string = (await theirs.ok('read_source_content', { source_id: sourceId }, BOB)).content;
    await theirs.ok(
      'apply_code',
      { code_id: codeId, source_id: sourceId, start_pos: tText.indexOf('Nobody helped'), end_pos: tText.indexOf('Nobody helped') + 13 },
      BOB,
    );
    // merge, restore into ours, store the conflicts (what a sync does)
    const { merged, conflicts } = mergeDumps(baseDump, dumpOf(ours.handle), dumpOf(theirs.handle), { now: new Date().toISOString() });
    const access = new StoreDumpAccess(ours.handle.store);
    ours.handle.store.transaction(() => {
      access.applyChanges(planRestore(readProjectTables(access), merged));
      ours.handle.repo.saveMergeConflicts(conflicts, 'theirs@e2e', new Date().toISOString());
    });
    await ours.handle.close();
    await theirs.handle.close();
    server = await startServer(project);
    base = server.base;
  });

  after(async () => {
    await server?.stop();
  });

  async function restart() {
    assert.equal(await server!.stop(), 0);
    server = await startServer(project);
    base = server.base;
  }

  const byKind = (list: any[], kind: string) => list.find((c) => c.kind === kind);

  it('lists the stored conflicts with their three values and choices, before and after a restart', async () => {
    const first = await t.ok('list_merge_conflicts');
    assert.equal(first.open, 3);
    assert.equal(first.resolved, 0);
    assert.deepEqual(first.conflicts.map((c: any) => c.kind).sort(), ['code_renamed_both', 'memo_edited_both', 'source_text_overlap']);
    const rename = byKind(first.conflicts, 'code_renamed_both');
    assert.deepEqual([rename.ours, rename.theirs, rename.base, rename.status, rename.merge_ref], ['Anxiety', 'Concern', 'Worry', 'open', 'theirs@e2e']);
    assert.deepEqual(rename.entity.local_id, codeId);
    assert.deepEqual(rename.choices, ['ours', 'theirs', 'edit']);
    const text = byKind(first.conflicts, 'source_text_overlap');
    assert.deepEqual([text.ours.text, text.theirs.text, text.base.text], ['early May', 'June', 'May']);
    assert.deepEqual(text.choices, ['ours', 'theirs', 'both', 'edit']);
    await restart();
    assert.deepEqual(await t.ok('list_merge_conflicts'), first);
    // an agent sees them too
    assert.equal((await t.ok('list_merge_conflicts', {}, AS_AGENT)).open, 3);
  });

  it("an agent's resolve waits for the researcher (Require)", async () => {
    const { conflicts } = await t.ok('list_merge_conflicts');
    await t.pending('resolve_merge_conflict', { conflict_id: byKind(conflicts, 'code_renamed_both').conflict_id, choice: 'theirs' }, AS_AGENT);
    assert.equal((await t.ok('list_merge_conflicts')).open, 3, 'nothing resolved while the request waits');
  });

  it('the researcher resolves a rename with theirs, a text conflict with theirs, a memo with both', async () => {
    const { conflicts } = await t.ok('list_merge_conflicts');
    const rename = await t.ok('resolve_merge_conflict', { conflict_id: byKind(conflicts, 'code_renamed_both').conflict_id, choice: 'theirs' });
    assert.equal(rename.conflict.status, 'resolved');
    assert.equal(rename.conflict.choice, 'theirs');
    assert.deepEqual(
      ((await t.ok('list_codes')).codes as any[]).map((c) => c.name),
      ['Concern'],
    );

    await t.ok('resolve_merge_conflict', { conflict_id: byKind(conflicts, 'source_text_overlap').conflict_id, choice: 'theirs' });
    const content: string = (await t.ok('read_source_content', { source_id: sourceId })).content;
    assert.equal(content, 'We lived near the river. The flood came in June. Nobody helped us.');
    const segs = (await t.ok('list_segments_for_source', { source_id: sourceId })).segments as any[];
    assert.deepEqual(
      segs.map((s) => [...content].slice(s.start_pos, s.end_pos).join('')),
      ['Nobody helped'],
    );

    await t.fails('resolve_merge_conflict', { conflict_id: byKind(conflicts, 'code_renamed_both').conflict_id, choice: 'ours' }, 'MERGE_CONFLICT_NOT_FOUND');
    await t.fails('resolve_merge_conflict', { conflict_id: 'no-such-conflict', choice: 'ours' }, 'MERGE_CONFLICT_NOT_FOUND');
    await t.fails('resolve_merge_conflict', { conflict_id: byKind(conflicts, 'memo_edited_both').conflict_id, choice: 'edit' }, 'INVALID_ARGUMENTS');
    await t.fails('resolve_merge_conflict', { conflict_id: byKind(conflicts, 'memo_edited_both').conflict_id, choice: 'sideways' }, 'INVALID_ARGUMENTS');
    await t.ok('resolve_merge_conflict', { conflict_id: byKind(conflicts, 'memo_edited_both').conflict_id, choice: 'both' });
    const code = await t.ok('get_code', { code_id: codeId });
    assert.equal(code.memo ?? code.code?.memo, 'fear of the next flood\n\nworry about money');
  });

  it('the resolutions survive a restart', async () => {
    await restart();
    const all = await t.ok('list_merge_conflicts', { status: 'all' });
    assert.equal(all.open, 0);
    assert.equal(all.resolved, 3);
    assert.deepEqual(all.conflicts.map((c: any) => [c.kind, c.choice]).sort(), [
      ['code_renamed_both', 'theirs'],
      ['memo_edited_both', 'both'],
      ['source_text_overlap', 'theirs'],
    ]);
    assert.deepEqual((await t.ok('list_merge_conflicts')).conflicts, []);
  });
});
