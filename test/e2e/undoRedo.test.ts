/**
 * End-to-end test of undo and redo (issue 13 item 1; src/domain/undoRedo.ts) over HTTP against the real built
 * CLI (`bin/marginalia.js serve`; run `npm run build` first): the researcher (reviewer token) codes a passage,
 * undoes it (the coding is gone, the answer says what was undone in words, the undo's event is in
 * GET /events/history marked undo_of the coding's correlation id) and redoes it; an agent's undo and redo are
 * refused with APPROVAL_FORBIDDEN (403) and the researcher's undo never touches the agent's coding; a caller
 * with nothing to undo gets NOTHING_TO_UNDO (409), an import on top of the stack NOT_UNDOABLE (409); the
 * stacks survive a server restart; undoing a code's creation is refused while the agent's coding uses it.
 * Researcher and agent call under the same default client name here (user http-client): only the session's
 * token role tells their actions apart. One project; the `it` blocks run in order and build on each other.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AS_AGENT, AS_RESEARCHER, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

describe('undo and redo over HTTP (real CLI)', function () {
  this.timeout(120_000);
  let dir = '';
  let project = '';
  let server: ServerProcess | undefined;
  let base = '';
  const t = toolClient(() => base);
  let src = 0;
  let food = 0;
  let codingCorrelation = '';
  /** the last action the researcher undid before the restart (the redo of the coding: an action of its own) */
  let undoneBeforeRestart = '';

  const segments = async () => (await t.ok('list_segments_for_source', { source_id: src })).segments as any[];

  before(async () => {
    dir = tmpDir('marginalia-undo-e2e-');
    project = path.join(dir, 'study.qda');
    server = await startServer(project);
    base = server.base;
    src = (await t.ok('add_text_source', { name: 'interview-04', content: 'We grew beans and shared food with neighbours.' })).source_id;
    food = (await t.ok('create_code', { name: 'Food security', color: '#4E79A7' })).code_id;
  });

  after(async () => {
    if (server) await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the researcher codes a passage, undoes it (described in words, undo_of in /events/history) and redoes it', async () => {
    const since = await t.headSeq();
    const seg = await t.ok('apply_code', { code_id: food, source_id: src, start_position: 18, end_position: 29 });
    const [coded] = await t.events(since, 'coding.*');
    assert.equal(coded.event_type, 'coding.segment_coded');
    codingCorrelation = coded.metadata.correlation_id;

    const afterCoding = await t.headSeq();
    const undone = (await t.ok('undo')).undone;
    assert.deepEqual(undone, {
      correlation_id: codingCorrelation,
      description: "coded 'Food security' in interview-04",
      changes: [
        {
          event_type: 'coding.segment_uncoded',
          aggregate_type: 'segment',
          aggregate_id: String(seg.segment_id),
          description: "removed the coding 'Food security' from interview-04",
        },
      ],
    });
    assert.deepEqual(await segments(), []);
    const undoEvents = await t.events(afterCoding);
    assert.deepEqual(
      undoEvents.map((e) => [e.event_type, e.payload.undo_of, e.payload.segment_id, e.payload.text]),
      [['coding.segment_uncoded', codingCorrelation, seg.segment_id, 'shared food']],
    );
    assert.notEqual(undoEvents[0].metadata.correlation_id, codingCorrelation, 'the undo is an action of its own');

    const afterUndo = await t.headSeq();
    const redone = (await t.ok('redo')).redone;
    assert.equal(redone.correlation_id, codingCorrelation);
    assert.equal(redone.description, "coded 'Food security' in interview-04");
    const back = await segments();
    assert.deepEqual(
      back.map((s) => [s.code_id, s.start_pos, s.end_pos, s.text]),
      [[food, 18, 29, 'shared food']],
    );
    const redoEvents = await t.events(afterUndo);
    assert.deepEqual(
      redoEvents.map((e) => [e.event_type, e.payload.redo_of]),
      [['coding.segment_coded', codingCorrelation]],
    );
    await t.fails('redo', {}, 'NOTHING_TO_REDO');
  });

  it("an agent's undo and redo are refused with APPROVAL_FORBIDDEN (403); the researcher's undo leaves the agent's coding alone", async () => {
    const listing = await request(base, 'GET', '/tools');
    const tool = (listing.body.tools as any[]).find((x) => x.name === 'undo');
    assert.ok(tool, 'GET /tools lists undo');
    const agentSeg = await t.ok('apply_code', { code_id: food, source_id: src, start_position: 0, end_position: 7 }, AS_AGENT);
    const seq = await t.headSeq();
    const refused = await t.fails('undo', {}, 'APPROVAL_FORBIDDEN', AS_AGENT);
    assert.match(refused.error, /researcher/);
    await t.fails('redo', {}, 'APPROVAL_FORBIDDEN', AS_AGENT);
    assert.equal(await t.headSeq(), seq, 'a refused undo stores no event');

    const undone = (await t.ok('undo', {}, AS_RESEARCHER)).undone;
    assert.equal(undone.description, "coded 'Food security' in interview-04");
    assert.notEqual(undone.correlation_id, codingCorrelation, 'what is undone now is the redo (an action of its own that coded the passage again)');
    undoneBeforeRestart = undone.correlation_id;
    const left = await segments();
    assert.deepEqual(
      left.map((s) => s.segment_id),
      [agentSeg.segment_id],
      "the agent's coding stays",
    );
  });

  it('NOTHING_TO_UNDO (409) for a caller with no action of their own; NOT_UNDOABLE (409) for an import on top of the stack', async () => {
    const fresh = { ...AS_RESEARCHER, 'x-marginalia-user': 'second-researcher' };
    const none = await t.fails('undo', {}, 'NOTHING_TO_UNDO', fresh);
    assert.match(none.error, /Nothing to undo/);
    await t.fails('redo', {}, 'NOTHING_TO_REDO', fresh);
    await t.ok('add_text_source', { name: 'notes', content: 'x' }, fresh);
    const refused = await t.fails('undo', {}, 'NOT_UNDOABLE', fresh);
    assert.match(refused.error, /imports cannot be undone/);
    assert.equal(refused.details.reason, 'unsupported');
  });

  it('the stacks survive a server restart (they come from the event log)', async () => {
    await server!.stop();
    server = await startServer(project);
    base = server.base;
    const redone = (await t.ok('redo')).redone;
    assert.equal(redone.correlation_id, undoneBeforeRestart, 'the coding undone before the restart is redone after it');
    assert.equal(redone.description, "coded 'Food security' in interview-04");
    assert.equal((await segments()).length, 2);
    assert.equal((await t.ok('undo')).undone.description, "coded 'Food security' in interview-04");
    assert.equal((await segments()).length, 1);
  });

  it("undoing the code's creation is refused while the agent's coding uses it (NOT_UNDOABLE 409, blocked, naming the coder); nothing is written", async () => {
    const seq = await t.headSeq();
    const refused = await t.fails('undo', {}, 'NOT_UNDOABLE');
    assert.equal(refused.details.reason, 'blocked');
    assert.match(refused.error, /the code 'Food security' has since been applied 1 time\(s\) by http-client \(1\)/);
    assert.equal(await t.headSeq(), seq);
    assert.equal((await segments()).length, 1, "the agent's coding is never deleted");
  });
});
