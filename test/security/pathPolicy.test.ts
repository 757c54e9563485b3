/**
 * The path rule itself (src/core/pathPolicy.ts): real paths through links (also dangling ones, and links to
 * links), missing files judged by their nearest existing folder, no prefix confusion between sibling folders
 * (`/a/proj` does not contain `/a/project-secrets`), relative and `~` roots, writes refused inside `noWrite`,
 * and the researcher's unrestricted policy; each path resolved once per policy (one call), and export_data's
 * output rules judged by the same resolution.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isToolError } from '../../src/core/errors';
import { isInside, PathPolicy, realPathOf } from '../../src/core/pathPolicy';
import { checkOutputPath } from '../../src/exchange/exports';
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
    for (const p of [
      path.join(proj, 'link.txt'),
      path.join(proj, 'link-to-link.txt'),
      path.join(proj, 'dangling.txt'),
      path.join(proj, 'rel-dir', 'key.txt'),
      path.join(outside, 'key.txt'),
      `${proj}/../project-secrets/key.txt`,
      '/etc/passwd',
    ]) {
      for (const access of ['read', 'write'] as const) {
        assert.equal(policy.resolve(p, access).ok, false, `${access} ${p}`);
        assert.throws(
          () => policy.check(p, access, 'EXPORT_FAILED'),
          (e: unknown) => isToolError(e) && e.code === 'EXPORT_FAILED' && (e.details as { rule: string }).rule === 'agent_paths',
        );
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

  /** Counts fs.realpathSync.native calls (what realPathOf resolves with) while `f` runs. */
  function countRealpaths(f: () => void): number {
    const original = fs.realpathSync.native;
    let n = 0;
    fs.realpathSync.native = ((p: fs.PathLike) => {
      n++;
      return original(p);
    }) as typeof fs.realpathSync.native;
    try {
      f();
    } finally {
      fs.realpathSync.native = original;
    }
    return n;
  }

  it('resolves each path once per policy: the check, the dry run, the real-path substitution and the tool share it', () => {
    const policy = PathPolicy.within([proj], { noWrite: [path.join(proj, '.marginalia')] });
    void policy.roots; // the roots are resolved once, on first use
    const file = path.join(proj, 'rel-dir', 'key.txt');
    const inside = path.join(proj, 'new.html');
    const n = countRealpaths(() => {
      assert.equal(policy.resolve(file, 'read').ok, false);
      assert.throws(() => policy.check(file, 'read', 'IMPORT_FAILED'));
      const real = policy.check(inside, 'write', 'EXPORT_FAILED');
      assert.equal(policy.check(real, 'write', 'EXPORT_FAILED'), real, 'the real path itself is known');
      assert.equal(policy.realPath(inside), real);
    });
    // rel-dir/key.txt exists (one lookup); new.html does not (its own lookup fails, its folder's succeeds)
    assert.equal(n, 3);
    // a new policy (a new call, or an approved call run later) looks again: a path swapped for a link is seen
    assert.equal(
      countRealpaths(() => PathPolicy.unrestricted().realPath(file)),
      1,
    );
  });

  it("export_data's output rules follow the same resolution: links into .marginalia, onto the project file or onto a folder are refused", async () => {
    const project = path.join(proj, 'study.qda');
    fs.writeFileSync(project, '');
    fs.symlinkSync(path.join(proj, '.marginalia', 'x.html'), path.join(proj, 'into-marginalia.html'));
    fs.symlinkSync(project, path.join(proj, 'project-link.txt'));
    fs.mkdirSync(path.join(proj, 'folder.csv'));
    fs.symlinkSync(path.join(proj, 'folder.csv'), path.join(proj, 'folder-link.csv'));
    const refused = async (p: string, format: 'html' | 'codebook' | 'segments_csv', why: RegExp) => {
      await assert.rejects(
        checkOutputPath(p, format, { projectPath: project, protectedFiles: [], paths: PathPolicy.unrestricted() }),
        (e: unknown) => isToolError(e) && e.code === 'EXPORT_FAILED' && why.test(e.message),
      );
    };
    await refused(path.join(proj, 'into-marginalia.html'), 'html', /\.marginalia/);
    await refused(path.join(proj, 'project-link.txt'), 'codebook', /project file/);
    await refused(path.join(proj, 'folder-link.csv'), 'segments_csv', /folder/);
    await refused(path.join(proj, 'no-such-folder', 'x.csv'), 'segments_csv', /does not exist/);
    // a policy that already resolved the path answers from memory: the export costs no lookup of its own
    const policy = PathPolicy.within([proj]);
    const real = policy.check(path.join(proj, 'out.html'), 'write', 'EXPORT_FAILED');
    const n = countRealpaths(() => void checkOutputPath(real, 'html', { projectPath: null, protectedFiles: [], paths: policy }));
    assert.equal(n, 0);
    assert.equal(await checkOutputPath(real, 'html', { projectPath: null, protectedFiles: [], paths: policy }), path.join(proj, 'out.html'));
  });
});
