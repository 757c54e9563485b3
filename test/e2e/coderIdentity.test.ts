/**
 * Coder identities headless (issue 14, item 1): what the researcher does with the reviewer token is recorded
 * under their coder name (`serve --coder NAME`), whatever client name the request sends (an explicit
 * X-Marginalia-User names another human coder the researcher enters work for); an agent's work stays under its
 * own name. Real CLI server on 127.0.0.1; events read back over REST.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AS_AGENT, AS_RESEARCHER, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

describe('e2e: the researcher codes as their coder name', function () {
  this.timeout(120_000);
  let dir: string;
  let server: ServerProcess;
  const call = async (name: string, args: unknown, headers: Record<string, string>) => {
    const r = await request(server.base, 'POST', `/tools/${name}`, { arguments: args }, headers);
    assert.equal(r.status, 200, `${name}: ${JSON.stringify(r.body)}`);
    return r.body.data;
  };

  before(async () => {
    dir = tmpDir('marginalia-coder-');
    server = await startServer(path.join(dir, 'p.qda'), ['--coder', 'Dr Ana Rivera']);
  });
  after(async () => {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('records the reviewer token as the configured coder and an agent under its own name', async () => {
    const researcher = { ...AS_RESEARCHER, 'x-marginalia-client': 'curl' };
    const code = await call('create_code', { name: 'Belonging' }, researcher);
    assert.equal(code.owner, 'Dr Ana Rivera');
    const source = await call('import_text', { name: 'interview', content: 'We grew beans together every spring.' }, researcher);
    await call('apply_code', { code_id: code.code_id, source_id: source.source_id, start_position: 0, end_position: 8 }, researcher);
    // apply_code is notify for agents by default: it runs
    await call(
      'apply_code',
      { code_id: code.code_id, source_id: source.source_id, start_position: 9, end_position: 19 },
      { ...AS_AGENT, 'x-marginalia-client': 'claude-code' },
    );
    // the researcher entering a colleague's coding for an agreement check
    await call(
      'apply_code',
      { code_id: code.code_id, source_id: source.source_id, start_position: 20, end_position: 28 },
      { ...researcher, 'x-marginalia-user': 'Colleague B' },
    );
    const segments = (await call('list_segments_for_source', { source_id: source.source_id }, researcher)).segments as { owner: string; start_pos: number }[];
    assert.deepEqual(
      segments.map((s) => [s.start_pos, s.owner]).sort((a, b) => Number(a[0]) - Number(b[0])),
      [
        [0, 'Dr Ana Rivera'],
        [9, 'claude-code'],
        [20, 'Colleague B'],
      ],
    );
    const events = (await request(server.base, 'GET', '/events/history?since=0&patterns=coding.segment_coded', undefined, AS_RESEARCHER)).body.data.events as {
      caused_by: { user: string };
    }[];
    assert.deepEqual(
      events.map((e) => e.caused_by.user),
      ['Dr Ana Rivera', 'claude-code', 'Colleague B'],
    );
  });
});
