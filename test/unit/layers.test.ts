import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { ESLint } from 'eslint';

/**
 * The layer rules of docs/architecture.md live in eslint.config.mjs; this proves they bite: the same import is an
 * error in an inner layer and allowed where the design permits it.
 */
describe('layer rules (eslint.config.mjs)', function () {
  this.timeout(60_000);
  const root = path.resolve(__dirname, '..', '..');
  const eslint = new ESLint({ cwd: root });

  async function restricted(file: string, source: string): Promise<string[]> {
    const [result] = await eslint.lintText(source, { filePath: path.join(root, file) });
    return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
  }

  const cases: [string, string, boolean][] = [
    ['src/domain/x.ts', "import * as vscode from 'vscode';\nexport const a = vscode;\n", true],
    ['src/store/x.ts', "import * as vscode from 'vscode';\nexport const a = vscode;\n", true],
    ['src/tools/x.ts', "import * as vscode from 'vscode';\nexport const a = vscode;\n", true],
    ['src/agent/x.ts', "import * as vscode from 'vscode';\nexport const a = vscode;\n", true],
    ['src/adapters/http/x.ts', "import * as vscode from 'vscode';\nexport const a = vscode;\n", true],
    ['src/domain/x.ts', "import { ProjectStore } from '../store/projectStore';\nexport const a = ProjectStore;\n", true],
    ['src/tools/x.ts', "import { ProjectStore } from '../store/projectStore';\nexport const a = ProjectStore;\n", true],
    ['src/agent/x.ts', "import { SqlProjectRepository } from '../store/sqlRepository';\nexport const a = SqlProjectRepository;\n", true],
    ['src/core/x.ts', "import { nameKey } from '../domain/rules';\nexport const a = nameKey;\n", true],
    ['src/ui/x.ts', "import * as vscode from 'vscode';\nexport const a = vscode;\n", false],
    ['src/adapters/lm/x.ts', "import * as vscode from 'vscode';\nexport const a = vscode;\n", false],
    ['src/extension.ts', "import * as vscode from 'vscode';\nexport const a = vscode;\n", false],
    ['src/tools/x.ts', "import { nameKey } from '../domain/rules';\nexport const a = nameKey;\n", false],
  ];
  for (const [file, source, bad] of cases) {
    it(`${bad ? 'refuses' : 'allows'} ${source.split('\n')[0]} in ${file}`, async () => {
      const msgs = await restricted(file, source);
      assert.equal(msgs.length > 0, bad, msgs.join('; '));
    });
  }
});
