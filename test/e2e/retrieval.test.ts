/**
 * End-to-end test of retrieve_segments (issue 13, item 7: the Retrieval view's query, shared with agents) over
 * HTTP against the real built CLI (`bin/marginalia.js serve`; run `npm run build` first). One server for the file.
 *
 * Covered: AND / OR / overlap give exactly the passages written out below, with source name, speaker and
 * paragraph; a document attribute and a coder narrow them; an agent (trust level read) gets the same answer
 * as the researcher; reading stores no event; the error codes with their HTTP statuses (CODE_NOT_FOUND 404,
 * FOLDER_NOT_FOUND 404, CASE_NOT_FOUND 404, SOURCE_NOT_FOUND 404, INVALID_ARGUMENTS 400).
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { AS_AGENT, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

const I01 = 'INTERVIEWER: How do you get water?\nROSA: We walk to the well every morning. The rota helps.';
const NOTES = 'Field notes, day one.\n\nThe well and the rota came up again.';

describe('retrieve_segments over HTTP (real CLI)', function () {
  this.timeout(120_000);
  let server: ServerProcess | undefined;
  let base = '';
  const t = toolClient(() => base);
  const id = { i01: 0, notes: 0, water: 0, coop: 0 };
  const op = (code: number, source: number, content: string, phrase: string) => {
    const at = content.indexOf(phrase);
    return { code_id: code, source_id: source, start_position: at, end_position: at + phrase.length };
  };
  const rows = (d: { passages: { source_name: string; speaker: string | null; paragraph: number; codes: { name: string }[]; text: string }[] }) =>
    d.passages.map((p) => `${p.source_name} | ${p.speaker ?? `¶${p.paragraph}`} | ${p.codes.map((c) => c.name).join('+')} | ${p.text}`);

  before(async () => {
    // the researcher's coder name (the reviewer token's calls are recorded under it)
    server = await startServer(path.join(tmpDir('marginalia-retrieval-e2e-'), 'study.qda'), [], { MARGINALIA_CODER: 'Ana Researcher' });
    base = server.base;
    id.i01 = (await t.ok('add_text_source', { name: 'interview-01', content: I01 })).source_id;
    id.notes = (await t.ok('add_text_source', { name: 'field notes', content: NOTES })).source_id;
    id.water = (await t.ok('create_code', { name: 'Water' })).code_id;
    id.coop = (await t.ok('create_code', { name: 'Cooperation' })).code_id;
    await t.ok('batch_apply_codes', {
      operations: [
        op(id.water, id.i01, I01, 'We walk to the well every morning.'),
        op(id.coop, id.i01, I01, 'The rota helps.'),
        op(id.water, id.notes, NOTES, 'The well and the rota'),
      ],
    });
    // an agent codes one passage (apply_code runs at trust level notify), so the passages have two coders
    await t.ok('apply_code', op(id.coop, id.notes, NOTES, 'the rota came up again.'), { ...AS_AGENT, 'x-marginalia-client': 'coding-agent' });
    await t.ok('set_source_attribute', { source_id: id.notes, attribute_name: 'Kind', value: 'notes' });
  });

  after(async () => {
    await server?.stop();
  });

  it('AND, OR and overlap give the passages with source name and speaker or paragraph; reading stores nothing', async () => {
    const seq = await t.headSeq();
    const and = await t.ok('retrieve_segments', { code_ids: [id.water, id.coop], combine: 'and' });
    assert.deepEqual(rows(and), [
      'field notes | ¶2 | Water | The well and the rota',
      'field notes | ¶2 | Cooperation | the rota came up again.',
      'interview-01 | ROSA | Water | We walk to the well every morning.',
      'interview-01 | ROSA | Cooperation | The rota helps.',
    ]);
    assert.deepEqual([and.total, and.count, and.source_count, and.has_more], [4, 4, 2, false]);
    assert.deepEqual(rows(await t.ok('retrieve_segments', { code_ids: [String(id.water), id.coop], combine: 'overlap' })), [
      'field notes | ¶2 | Water+Cooperation | The well and the rota came up again.',
    ]);
    assert.deepEqual(rows(await t.ok('retrieve_segments', { code_ids: [id.water] })), [
      'field notes | ¶2 | Water | The well and the rota',
      'interview-01 | ROSA | Water | We walk to the well every morning.',
    ]);
    assert.equal(await t.headSeq(), seq, 'retrieving stores no event');
  });

  it('a document attribute and a coder narrow the passages; an agent gets the same answer as the researcher', async () => {
    const query = { code_ids: [id.water, id.coop], filters: { source_attributes: { Kind: 'notes' } } };
    const researcher = await t.ok('retrieve_segments', query);
    assert.deepEqual(rows(researcher), ['field notes | ¶2 | Water | The well and the rota', 'field notes | ¶2 | Cooperation | the rota came up again.']);
    assert.deepEqual(await t.ok('retrieve_segments', query, AS_AGENT), researcher);
    assert.deepEqual(
      researcher.passages.map((p: { coders: string[] }) => p.coders),
      [['Ana Researcher'], ['coding-agent']],
    );
    assert.deepEqual(rows(await t.ok('retrieve_segments', { code_ids: [id.coop], filters: { coder: 'coding-agent' } })), [
      'field notes | ¶2 | Cooperation | the rota came up again.',
    ]);
    assert.deepEqual(rows(await t.ok('retrieve_segments', { code_ids: [id.water, id.coop], combine: 'and', filters: { coder: 'Ana Researcher' } })), [
      'interview-01 | ROSA | Water | We walk to the well every morning.',
      'interview-01 | ROSA | Cooperation | The rota helps.',
    ]);
  });

  it('refuses unknown ids and bad arguments with the error codes and their HTTP statuses', async () => {
    await t.fails('retrieve_segments', { code_ids: [987654] }, 'CODE_NOT_FOUND');
    await t.fails('retrieve_segments', { code_ids: [id.water], filters: { folder_id: 987654 } }, 'FOLDER_NOT_FOUND');
    await t.fails('retrieve_segments', { code_ids: [id.water], filters: { case_ids: [987654] } }, 'CASE_NOT_FOUND');
    await t.fails('retrieve_segments', { code_ids: [id.water], filters: { source_ids: [987654] } }, 'SOURCE_NOT_FOUND');
    await t.fails('retrieve_segments', { code_ids: [] }, 'INVALID_ARGUMENTS');
    await t.fails('retrieve_segments', { code_ids: [id.water], combine: 'xor' }, 'INVALID_ARGUMENTS');
    await t.fails('retrieve_segments', {}, 'INVALID_ARGUMENTS');
  });
});
