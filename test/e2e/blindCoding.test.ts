/**
 * Blind coding (issue 16 item 5) against the real CLI server on 127.0.0.1: the researcher (reviewer token, coder
 * name from MARGINALIA_CODER), a second human coder the researcher enters work for (reviewer token with
 * X-Marginalia-User) and an agent (agent token, client "claude-code") code the same passage differently. With blind
 * coding on, each coder sees only their own codings through list_segments, list_segments_for_source,
 * retrieve_segments and list_codes' counts; the lead (the researcher) sees all; only the lead ends it, and ending it
 * shows everyone's again; an agent may neither switch it on nor off (APPROVAL_FORBIDDEN, nothing changes).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AS_AGENT, AS_RESEARCHER, RESEARCHER_CODER, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

const TEXT = 'We grew beans together every spring. The council never came. Water was scarce.';
const RESEARCHER = { ...AS_RESEARCHER, 'x-marginalia-client': 'curl' };
const SECOND = { ...AS_RESEARCHER, 'x-marginalia-client': 'curl', 'x-marginalia-user': 'Second Coder' };
const AGENT = { ...AS_AGENT, 'x-marginalia-client': 'claude-code' };

describe('e2e: blind coding (set_blind_coding, end_blind_coding, get_team_settings)', function () {
  this.timeout(120_000);
  let dir = '';
  let server: ServerProcess;
  const client = toolClient(() => server.base);
  let sourceId = 0;
  let belonging = 0;
  let place = 0;

  before(async () => {
    dir = tmpDir('marginalia-blind-');
    fs.mkdirSync(path.join(dir, '.marginalia'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, '.marginalia', 'config.yaml'),
      'agent_context:\n  trust:\n    overrides:\n      create_code: auto\n      apply_code: auto\n  rate_limits:\n    requests_per_minute: 100000\n    mutations_per_minute: 100000\n',
    );
    server = await startServer(path.join(dir, 'study.qda'));
    sourceId = (await client.ok('import_text', { name: 'interview-07', content: TEXT }, RESEARCHER)).source_id;
    belonging = (await client.ok('create_code', { name: 'Belonging' }, RESEARCHER)).code_id;
    place = (await client.ok('create_code', { name: 'Place' }, RESEARCHER)).code_id;
    // "We grew beans together" (0-23): Belonging by the researcher, Place by the second coder, Belonging on 8-23 by the agent
    await client.ok('apply_code', { code_id: belonging, source_id: sourceId, start_position: 0, end_position: 23 }, RESEARCHER);
    await client.ok('apply_code', { code_id: place, source_id: sourceId, start_position: 0, end_position: 23 }, SECOND);
    await client.ok('apply_code', { code_id: belonging, source_id: sourceId, start_position: 8, end_position: 23 }, AGENT);
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const seen = async (headers: Record<string, string>) => {
    const listed = (await client.ok('list_segments', {}, headers)).segments as { coder: string; code_name: string; start_pos: number; end_pos: number }[];
    const ofSource = (await client.ok('list_segments_for_source', { source_id: sourceId }, headers)).segments as { coder: string }[];
    assert.deepEqual(ofSource.map((s) => s.coder).sort(), listed.map((s) => s.coder).sort(), 'list_segments_for_source agrees with list_segments');
    return listed.map((s) => `${s.coder}: ${s.code_name} ${s.start_pos}-${s.end_pos}`).sort();
  };
  const counts = async (headers: Record<string, string>) =>
    Object.fromEntries(((await client.ok('list_codes', {}, headers)).codes as { name: string; segment_count: number }[]).map((c) => [c.name, c.segment_count]));
  const reported = async (headers: Record<string, string>) =>
    Object.fromEntries(
      ((await client.ok('generate_frequency_report', {}, headers)).result.codes as { name: string; segment_count: number }[]).map((c) => [
        c.name,
        c.segment_count,
      ]),
    );
  const retrievedCoders = async (headers: Record<string, string>) =>
    ((await client.ok('retrieve_segments', { code_ids: [belonging, place] }, headers)).passages as { segments: { coder: string }[] }[])
      .flatMap((p) => p.segments.map((s) => s.coder))
      .sort();

  const ALL = [`${RESEARCHER_CODER}: Belonging 0-23`, 'Second Coder: Place 0-23', 'claude-code: Belonging 8-23'].sort();

  it('an agent may not switch blind coding on', async () => {
    await client.fails('set_blind_coding', { enabled: true }, 'APPROVAL_FORBIDDEN', AGENT);
    assert.equal((await client.ok('get_team_settings', {}, AGENT)).blind_coding, false);
    assert.deepEqual(await seen(AGENT), ALL);
  });

  it('with blind coding on each coder sees only their own codings; the lead sees all', async () => {
    const on = await client.ok('set_blind_coding', { enabled: true }, RESEARCHER);
    assert.deepEqual([on.blind_coding, on.lead, on.you.sees], [true, RESEARCHER_CODER, 'all']);

    assert.deepEqual(await seen(SECOND), ['Second Coder: Place 0-23']);
    assert.deepEqual(await seen(AGENT), ['claude-code: Belonging 8-23']);
    assert.deepEqual(await seen(RESEARCHER), ALL);

    assert.deepEqual(await counts(SECOND), { Belonging: 0, Place: 1 });
    assert.deepEqual(await counts(AGENT), { Belonging: 1, Place: 0 });
    assert.deepEqual(await counts(RESEARCHER), { Belonging: 2, Place: 1 });

    // the reports count what each coder may see too (the frequency report's job result, as the tool answers it)
    assert.deepEqual(await reported(SECOND), { Belonging: 0, Place: 1 });
    assert.deepEqual(await reported(AGENT), { Belonging: 1, Place: 0 });
    assert.deepEqual(await reported(RESEARCHER), { Belonging: 2, Place: 1 });

    assert.deepEqual(await retrievedCoders(SECOND), ['Second Coder']);
    assert.deepEqual(await retrievedCoders(AGENT), ['claude-code']);
    assert.deepEqual(await retrievedCoders(RESEARCHER), ALL.map((s) => s.split(':')[0]!).sort());

    const agentView = await client.ok('get_team_settings', {}, AGENT);
    assert.deepEqual(agentView.you, { coder: 'claude-code', coder_role: 'agent', is_lead: false, sees: 'own_codings' });
  });

  it('only the lead ends blind coding: not an agent, not the second coder', async () => {
    await client.fails('set_blind_coding', { enabled: false }, 'APPROVAL_FORBIDDEN', AGENT);
    await client.fails('end_blind_coding', {}, 'APPROVAL_FORBIDDEN', AGENT);
    await client.fails('end_blind_coding', {}, 'APPROVAL_FORBIDDEN', SECOND);
    assert.equal((await client.ok('get_team_settings', {}, RESEARCHER)).blind_coding, true);
    assert.deepEqual(await seen(SECOND), ['Second Coder: Place 0-23']);
  });

  it('ending it (the lead reconciles) shows everyone every coding again', async () => {
    const off = await client.ok('set_blind_coding', { enabled: false }, RESEARCHER);
    assert.equal(off.blind_coding, false);
    for (const who of [SECOND, AGENT, RESEARCHER]) {
      assert.deepEqual(await seen(who), ALL);
      assert.deepEqual(await counts(who), { Belonging: 2, Place: 1 });
    }
  });
});
