import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { renderToolDocs } from '../../src/tools/docs';
import { TOOLS } from '../../src/tools/registry';

describe('docs/reference/tools.md', () => {
  const file = path.resolve(__dirname, '..', '..', 'docs', 'reference', 'tools.md');

  it('matches what the registry generates (run `npm run gen:docs` after changing a tool)', () => {
    assert.equal(fs.readFileSync(file, 'utf8'), renderToolDocs());
  });

  it('documents every tool and every parameter of each', () => {
    const text = fs.readFileSync(file, 'utf8');
    for (const t of TOOLS) {
      assert.ok(text.includes(`### \`${t.name}\``), `${t.name} missing`);
      const shape = (t.input as unknown as { shape?: Record<string, unknown> }).shape ?? {};
      const section = text.slice(text.indexOf(`### \`${t.name}\``)).split('\n### ')[0] ?? '';
      for (const param of Object.keys(shape)) assert.ok(section.includes(`| \`${param}\` |`), `${t.name}.${param} missing`);
    }
  });
});
