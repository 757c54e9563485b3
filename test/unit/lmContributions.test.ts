import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { TOOLS } from '../../src/tools/registry';

/** package.json must contribute exactly the registry's tools, each with the registry's schema. */
describe('package.json languageModelTools', () => {
  const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8'));
  const contributed: { name: string; modelDescription: string; inputSchema: Record<string, unknown> }[] = pkg.contributes.languageModelTools ?? [];
  const agentTools = TOOLS.filter((t) => (t.audience ?? 'agents') === 'agents');

  it('names qda_<tool> for every registry tool and nothing else', () => {
    assert.deepEqual(contributed.map((c) => c.name).sort(), agentTools.map((t) => `qda_${t.name}`).sort());
  });

  it('carries each tool description and input schema unchanged', () => {
    for (const t of agentTools) {
      const c = contributed.find((x) => x.name === `qda_${t.name}`);
      assert.ok(c, t.name);
      assert.equal(c.modelDescription, t.description);
      const { $schema: _s, ...schema } = z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
      assert.deepEqual(c.inputSchema, schema, t.name);
    }
  });

  it('uses names VS Code accepts', () => {
    for (const c of contributed) assert.match(c.name, /^(?!copilot_|vscode_)[\w-]{1,64}$/);
  });
});
