/**
 * The docs check's Markdown reading (scripts/checkDocs.ts): GitHub's heading anchors, links outside code,
 * and that the repository's own docs pass it. Expected slugs are GitHub's, written out by hand.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { anchorsOf, linksOf, slugOf } from '../../scripts/checkDocs';

const ROOT = path.resolve(__dirname, '..', '..');

describe('scripts/checkDocs.ts', () => {
  it('slugs headings as GitHub does (lower case, punctuation dropped, spaces to hyphens)', () => {
    assert.equal(slugOf("Trust and approvals, from the agent's side"), 'trust-and-approvals-from-the-agents-side');
    assert.equal(slugOf('Copilot (VS Code chat)'), 'copilot-vs-code-chat');
    assert.equal(slugOf('`list_codes` — List Codes'), 'list_codes--list-codes');
    assert.equal(slugOf('Add a VS Code command'), 'add-a-vs-code-command');
  });

  it('numbers repeated headings and ignores headings inside code blocks', () => {
    const anchors = anchorsOf('# Setup\n\n## Setup\n\n```bash\n# not a heading\n```\n\n### Store and journal\n');
    assert.deepEqual([...anchors].sort(), ['setup', 'setup-1', 'store-and-journal']);
  });

  it('finds links and images in prose, not in code', () => {
    const links = linksOf('See [a](a.md#x) and ![img](images/p.png).\n\n`[b](b.md)`\n\n```md\n[c](c.md)\n```\n[d](https://example.org)\n');
    assert.deepEqual(
      links.map((l) => [l.line, l.target]),
      [
        [1, 'a.md#x'],
        [1, 'images/p.png'],
        [8, 'https://example.org'],
      ],
    );
  });

  it("passes on the repository's README, CONTRIBUTING and docs/", function () {
    this.timeout(60_000);
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'checkDocs.ts')], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /README\.md \d+\/150 lines/);
  });
});
