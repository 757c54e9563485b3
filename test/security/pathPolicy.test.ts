/**
 * The path rule itself (src/core/pathPolicy.ts): real paths through links (also dangling ones, and links to
 * links), missing files judged by their nearest existing folder, no prefix confusion between sibling folders
 * (`/a/proj` does not contain `/a/project-secrets`), relative and `~` roots, writes refused inside `noWrite`,
 * and the researcher's unrestricted policy.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isToolError } from '../../src/core/errors';
import { isInside, PathPolicy, realPathOf } from '../../src/core/pathPolicy';
import { tmp } from './stack';

describe('security: the path rule (src/core/pathPolicy.ts)', () => {
  let root: string;
  let proj: string;
  let outside: string;

  before(() => {
    root = tmp('marginalia-sec-policy-');
    proj = path.join(root, 'proj');
    outside = path.join(root, 'project-secrets');
    fs.mkdirSync(path.join(proj, '.marginalia'), { recursive: true });
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'key.txt'), 'k');
    fs.symlinkSync(path.join(outside, 'key.txt'), path.join(proj, 'link.txt'));
    fs.symlinkSync(path.join(proj, 'link.txt'), path.join(proj, 'link-to-link.txt'));
    fs.symlinkSync(path.join(outside, 'not-yet.txt'), path.join(proj, 'dangling.txt'));
    fs.symlinkSync('../project-secrets', path.join(proj, 'rel-dir'));
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('realPathOf follows links, links to links, dangling links and relative links; a missing file is judged by its folder', () => {
    assert.equal(realPathOf(path.join(proj, 'link.txt')), path.join(outside, 'key.txt'));
    assert.equal(realPathOf(path.join(proj, 'link-to-link.txt')), path.join(outside, 'key.txt'));
    assert.equal(realPathOf(path.join(proj, 'dangling.txt')), path.join(outside, 'not-yet.txt'));
    assert.equal(realPathOf(path.join(proj, 'rel-dir', 'new', 'deeper.txt')), path.join(outside, 'new', 'deeper.txt'));
    assert.equal(realPathOf(path.join(proj, 'missing', '..', '..', 'project-secrets', 'x')), path.join(outside, 'x'));
  });

  it('isInside compares whole path segments', () => {
    assert.ok(isInside(path.join(proj, 'a.txt'), proj));
    assert.ok(isInside(proj, proj));
    assert.ok(!isInside(outside, proj), `${outside} is not inside ${proj}`);
    assert.ok(!isInside(`${proj}x/a.txt`, proj));
  });

  it('refuses what resolves outside the roots, and writes into noWrite; allows the rest; the researcher is unrestricted', () => {
    const policy = PathPolicy.within([proj], { noWrite: [path.join(proj, '.marginalia')] });
    for (const p of [path.join(proj, 'link.txt'), path.join(proj, 'link-to-link.txt'), path.join(proj, 'dangling.txt'), path.join(proj, 'rel-dir', 'key.txt'), path.join(outside, 'key.txt'), `${proj}/../project-secrets/key.txt`, '/etc/passwd']) {
      for (const access of ['read', 'write'] as const) {
        assert.equal(policy.resolve(p, access).ok, false, `${access} ${p}`);
        assert.throws(() => policy.check(p, access, 'EXPORT_FAILED'), (e: unknown) => isToolError(e) && e.code === 'EXPORT_FAILED' && (e.details as { rule: string }).rule === 'agent_paths');
      }
    }
    assert.equal(policy.resolve(path.join(proj, '.marginalia', 'audit.jsonl'), 'read').ok, true, 'reading .marginalia is allowed');
    assert.equal(policy.resolve(path.join(proj, '.marginalia', 'x.html'), 'write').ok, false, 'writing into .marginalia is not');
    assert.deepEqual(policy.resolve(path.join(proj, 'new.html'), 'write'), { ok: true, real: path.join(proj, 'new.html') });
    assert.deepEqual(policy.resolve('relative.txt', 'read'), { ok: true, real: 'relative.txt' }, 'relative paths are left to the tools, which refuse them');
    const researcher = PathPolicy.unrestricted();
    assert.equal(researcher.restricted, false);
    assert.deepEqual(researcher.resolve('/etc/passwd', 'read'), { ok: true, real: '/etc/passwd' });
  });

  it('roots: relative ones against the base, ~ as the home folder, links resolved, blanks dropped', () => {
    const p = PathPolicy.within(['../project-secrets', '~', '  ', path.join(proj, 'rel-dir')], { base: proj });
    assert.deepEqual(p.roots, [outside, fs.realpathSync(os.homedir())]);
    assert.equal(PathPolicy.within(['relative-without-base']).roots?.length, 0);
  });
});
