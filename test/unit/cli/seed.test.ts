/**
 * The sample study seeds a real project (sql.js on disk) through the pipeline: codebook, transcripts, codings,
 * and since issue 13 the cases with typed attributes and the document attributes of samples/community-gardens/
 * cases.yaml. Expected values are copied by hand from that file.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Caller } from '../../../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { seedProject } from '../../../src/cli/seed';
import { silentLogger } from '../../../src/core/log';

const SAMPLE = path.resolve(__dirname, '..', '..', '..', 'samples', 'community-gardens');
const RESEARCHER: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'test', user: 'test', researcher: true };

describe('cli/seed: the sample study', () => {
  let dir: string;
  let handle: ProjectHandle;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-seed-'));
    handle = await openProjectHandle(path.join(dir, 'sample.qda'), { create: true, checkpointIdleMs: 0 });
  });
  after(async () => {
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('creates the four participants as cases with their interview and typed attributes, and the document attributes', async () => {
    const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, embeddings: null });
    const seeded = await seedProject(pipeline, SAMPLE);
    assert.ok(seeded);
    assert.equal(seeded.sources, 4);

    const call = async (tool: string, args: unknown): Promise<any> => {
      const out = await pipeline.invoke(tool, args, RESEARCHER);
      assert.ok(out.envelope.success, JSON.stringify(out.envelope));
      return (out.envelope as { data: unknown }).data;
    };
    const cases = (await call('list_cases', {})).cases as { case_id: number; name: string }[];
    assert.deepEqual(cases.map((c) => c.name).sort(), ['Amara', 'Jonas', 'Mei', 'Rosa']);
    const amara = await call('get_case', { case_id: cases.find((c) => c.name === 'Amara')?.case_id });
    const attrs = Object.fromEntries((amara.attributes as { name: string; type: string; value: unknown }[]).map((a) => [a.name, [a.type, a.value]]));
    assert.deepEqual(attrs.plot, ['number', 14]);
    assert.deepEqual(attrs.member_since, ['date', '2019-04-01']);
    assert.deepEqual(attrs.committee_member, ['boolean', true]);
    assert.deepEqual(attrs.committee_role, ['text', 'treasurer']);
    assert.deepEqual(
      (amara.sources as { name: string }[]).map((s) => s.name),
      ['interview-01-amara.txt'],
    );

    const sources = (await call('list_sources', {})).sources as {
      name: string;
      attributes: Record<string, unknown>;
      attribute_types: Record<string, string>;
    }[];
    const rosa = sources.find((s) => s.name === 'interview-04-rosa.txt');
    assert.ok(rosa);
    assert.equal(rosa.attributes.interview_date, '2026-03-28');
    assert.equal(rosa.attribute_types.interview_date, 'date');
    assert.equal(rosa.attributes.duration_min, 10);
    assert.equal(rosa.attribute_types.duration_min, 'number');

    const briefing = handle.repo.projectBriefing();
    assert.ok(briefing?.description?.startsWith('Hollins Lane Community Garden'));
    assert.equal(briefing?.research_questions?.length, 3);
    assert.match(briefing?.methodology ?? '', /reflexive thematic analysis/);
  });
});
