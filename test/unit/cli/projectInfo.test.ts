/**
 * The research frame of the MCP briefing (`qda://project/briefing`): `.marginalia/project.yaml` beside the
 * project, read by src/cli/projectInfo.ts.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { projectInfoPath, projectInfoReader } from '../../../src/cli/projectInfo';

describe('cli/projectInfo', () => {
  let dir: string;
  let project: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-info-'));
    project = path.join(dir, 'study.qda');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads description, research questions (a list or one text) and methodology, and re-reads a changed file', () => {
    const read = projectInfoReader(project);
    assert.equal(read(), undefined, 'no file: nothing');
    const file = projectInfoPath(project);
    assert.equal(file, path.join(dir, '.marginalia', 'project.yaml'));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'description: Gardens\nresearch_questions:\n  - How do people belong?\n  - Who leaves?\nmethodology: Grounded theory\n');
    assert.deepEqual(read(), { description: 'Gardens', research_questions: ['How do people belong?', 'Who leaves?'], methodology: 'Grounded theory' });
    fs.writeFileSync(file, 'research_questions: Why garden?\n');
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(file, later, later);
    assert.deepEqual(read(), { description: undefined, research_questions: ['Why garden?'], methodology: undefined });
  });

  it('gives nothing for a file that is not YAML, and logs it once', () => {
    const file = projectInfoPath(project);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'description: [unclosed\n');
    const warnings: string[] = [];
    const read = projectInfoReader(project, { info: () => {}, warn: (m) => void warnings.push(m), error: () => {} });
    assert.equal(read(), undefined);
    assert.equal(read(), undefined);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /project\.yaml could not be read/);
  });
});
