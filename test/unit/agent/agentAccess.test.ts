/**
 * The policy of sources closed to agents (src/agent/agentAccess.ts, issue 14 item 11) on a real sql.js project:
 * which sources a rule closes (directly, through nested folders, through a case's sources and ranges), to
 * whom (every agent, named agents), what a call naming them is refused with, and how an answer is redacted
 * (structurally by source, and the fragment safety net for strings that belong to no source). The end-to-end
 * behaviour on every surface is test/security/closedSources.test.ts.
 */
import assert from 'node:assert/strict';
import { agentViewOf, closedMarker, COPY_CODE_UNITS, FRAGMENT_CODE_UNITS } from '../../../src/agent/agentAccess';
import { isToolError } from '../../../src/core/errors';
import { TOOLS_BY_NAME } from '../../../src/tools/registry';
import { openFixture, type Fixture } from '../domain/projectFixture';

const CLOSED_TEXT = 'Maria told us about the flooded cellar and the letters her brother hid under the stairs.';
const OPEN_TEXT = 'The committee met on Tuesday and agreed the new budget for the allotments.';

describe('agent/agentAccess', () => {
  let fx: Fixture;
  const ids = { closed: 0, open: 0, nested: 0, inCase: 0, ranged: 0, top: 0, sub: 0, subsub: 0, caseId: 0, rangeCase: 0, seg: 0 };
  beforeEach(async () => {
    fx = await openFixture();
    const add = async (name: string, content: string) => (await fx.ok('add_text_source', { name, content })).source_id as number;
    ids.closed = await add('Maria.txt', CLOSED_TEXT);
    ids.open = await add('Committee.txt', OPEN_TEXT);
    ids.nested = await add('Deep.txt', 'deep words kept in a folder three levels down the tree');
    ids.inCase = await add('Case member.txt', 'a member source of a closed case');
    ids.ranged = await add('Focus group.txt', 'several voices; one range belongs to the closed case');
    ids.top = (await fx.ok('create_folder', { name: 'Top' })).folder_id;
    ids.sub = (await fx.ok('create_folder', { name: 'Sub', parent_id: ids.top })).folder_id;
    ids.subsub = (await fx.ok('create_folder', { name: 'SubSub', parent_id: ids.sub })).folder_id;
    await fx.ok('move_source_to_folder', { source_id: ids.nested, folder_id: ids.subsub });
    ids.caseId = (await fx.ok('create_case', { name: 'Sealed' })).case_id;
    await fx.ok('add_source_to_case', { case_id: ids.caseId, source_id: ids.inCase });
    await fx.ok('add_segment_to_case', { case_id: ids.caseId, source_id: ids.ranged, start_pos: 0, end_pos: 8 });
    const code = (await fx.ok('create_code', { name: 'Home', color: '#4E79A7' })).code_id;
    await fx.ok('batch_apply_codes', { operations: [{ code_id: code, source_id: ids.closed, start_position: 0, end_position: 20 }] });
    ids.seg = (await fx.ok('list_segments_for_source', { source_id: ids.closed })).segments[0].segment_id;
  });
  afterEach(() => fx.close());

  it('nothing closed: no view at all (no work per call)', () => {
    assert.equal(agentViewOf(fx.handle, 'agent'), null);
    assert.equal(agentViewOf(fx.handle, null), null);
  });

  it('a folder closes the sources of its sub-folders at any depth; a case its member sources and the sources of its ranges', async () => {
    await fx.ok('set_agent_access', { folder_id: ids.top, access: 'closed' });
    await fx.ok('set_agent_access', { case_id: ids.caseId, access: 'closed' });
    const view = agentViewOf(fx.handle, 'agent');
    assert.ok(view);
    assert.deepEqual(
      [...view.closed.keys()].sort((a, b) => a - b),
      [ids.nested, ids.inCase, ids.ranged].sort((a, b) => a - b),
    );
    assert.deepEqual(view.closed.get(ids.nested)?.via, [{ kind: 'folder', id: ids.top }]);
    assert.deepEqual(view.closed.get(ids.ranged)?.via, [{ kind: 'case', id: ids.caseId }]);
    // opening the folder again leaves the case's sources closed
    await fx.ok('set_agent_access', { folder_id: ids.top, access: 'open' });
    assert.deepEqual(
      [...(agentViewOf(fx.handle, 'agent')?.closed.keys() ?? [])].sort((a, b) => a - b),
      [ids.inCase, ids.ranged].sort((a, b) => a - b),
    );
  });

  it('named agents: closed to bob and carol, not to alice; opening one name keeps the rest; the any-agent view (event streams) counts every rule', async () => {
    await fx.ok('set_agent_access', { source_id: ids.closed, access: 'closed', agents: ['bob', 'carol'] });
    assert.equal(agentViewOf(fx.handle, 'alice'), null);
    assert.ok(agentViewOf(fx.handle, 'bob')?.closed.has(ids.closed));
    assert.ok(agentViewOf(fx.handle, null)?.closed.has(ids.closed));
    const out = await fx.ok('set_agent_access', { source_id: ids.closed, access: 'open', agents: ['bob'] });
    assert.deepEqual(out.agents, ['carol']);
    assert.equal(agentViewOf(fx.handle, 'bob'), null);
    assert.ok(agentViewOf(fx.handle, 'carol'));
    // a rule for every agent cannot be opened for some: INVALID_ARGUMENTS, nothing changes
    await fx.ok('set_agent_access', { source_id: ids.open, access: 'closed' });
    await fx.fails('set_agent_access', { source_id: ids.open, access: 'open', agents: ['bob'] }, 'INVALID_ARGUMENTS');
    assert.ok(agentViewOf(fx.handle, 'bob')?.closed.has(ids.open));
  });

  it('check: refuses a closed source or a segment of one wherever the arguments name it, and file-writing tools', async () => {
    await fx.ok('set_agent_access', { source_id: ids.closed, access: 'closed' });
    const view = agentViewOf(fx.handle, 'agent');
    assert.ok(view);
    const refused = (tool: string, input: unknown) => {
      try {
        view.check(TOOLS_BY_NAME.get(tool)!, input);
        return null;
      } catch (e) {
        assert.ok(isToolError(e));
        return e;
      }
    };
    const e = refused('read_source_content', { source_id: ids.closed });
    assert.equal(e?.code, 'SOURCE_CLOSED');
    assert.match(e!.message, /Maria\.txt/);
    assert.match(e!.message, /researcher closed/);
    assert.equal(
      refused('batch_apply_codes', {
        operations: [
          { code_id: 1, source_id: ids.open },
          { code_id: 1, source_id: ids.closed },
        ],
      })?.code,
      'SOURCE_CLOSED',
    );
    assert.equal(refused('find_similar_segments', { segment_id: ids.seg })?.code, 'SOURCE_CLOSED');
    assert.equal(refused('export_data', { format: 'codebook', output_path: '/tmp/x.txt' })?.code, 'SOURCE_CLOSED');
    assert.equal(refused('read_source_content', { source_id: ids.open }), null);
    assert.equal(refused('list_codes', {}), null);
  });

  it("redact: a closed source's words become the marker, names and ids stay; frozen input is copied, untouched data returned as is", async () => {
    await fx.ok('set_agent_access', { source_id: ids.closed, access: 'closed' });
    const view = agentViewOf(fx.handle, 'agent');
    assert.ok(view);
    const data = Object.freeze({
      segments: Object.freeze([
        Object.freeze({
          segment_id: ids.seg,
          source_id: ids.closed,
          source_name: 'Maria.txt',
          start_pos: 0,
          text: 'Maria told us about',
          memo: 'cellar',
          context: { before: '', after: 'the flooded' },
        }),
        Object.freeze({ segment_id: 999, source_id: ids.open, source_name: 'Committee.txt', text: 'The committee met' }),
      ]),
      // a segment id alone names its source
      hit: { segment_id: ids.seg, snippet: 'told us' },
    });
    const out = view.redact(data) as any;
    const marker = closedMarker('Maria.txt');
    assert.deepEqual(out.segments[0], {
      segment_id: ids.seg,
      source_id: ids.closed,
      source_name: 'Maria.txt',
      start_pos: 0,
      text: marker,
      memo: marker,
      context: { before: '', after: marker },
    });
    assert.equal(out.segments[1], data.segments[1], "an open source's object is returned as is");
    assert.equal(out.hit.snippet, marker);
    assert.equal(data.segments[0]!.text, 'Maria told us about', 'the input is not changed');
    const untouched = { codes: [{ code_id: 1, name: 'Home' }] };
    assert.equal(view.redact(untouched), untouched);
  });

  it(`the fragment safety net: a string of no source that repeats ${FRAGMENT_CODE_UNITS} characters of a closed text becomes the marker; shorter, or inside an open source's object, it stays`, async () => {
    await fx.ok('set_agent_access', { source_id: ids.closed, access: 'closed' });
    const view = agentViewOf(fx.handle, 'agent');
    assert.ok(view);
    const quote = CLOSED_TEXT.slice(24, 24 + FRAGMENT_CODE_UNITS);
    const short = CLOSED_TEXT.slice(24, 24 + FRAGMENT_CODE_UNITS - 1);
    const out = view.redact({ diff: `- ${quote} +`, note: `#${short}#`, open: { source_id: ids.open, text: quote } }) as any;
    assert.equal(out.diff, closedMarker('Maria.txt'));
    assert.equal(out.note, `#${short}#`);
    assert.equal(out.open.text, quote);
    // a string of an open source: only a copy (COPY_CODE_UNITS in a row) is redacted
    const copy = CLOSED_TEXT.slice(10, 10 + COPY_CODE_UNITS);
    const almost = CLOSED_TEXT.slice(10, 10 + COPY_CODE_UNITS - 1);
    const both = view.redact({ a: { source_id: ids.open, text: `#${copy}#` }, b: { source_id: ids.open, text: `#${almost}#` } }) as any;
    assert.equal(both.a.text, closedMarker('Maria.txt'));
    assert.equal(both.b.text, `#${almost}#`);
  });
});
