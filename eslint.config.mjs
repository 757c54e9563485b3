// ESLint flat config. Besides the recommended TypeScript rules it enforces the layers of docs/architecture.md:
// `vscode` may be imported only by src/extension.ts, src/ui/** and src/adapters/lm/**, and each inner
// layer may import only the layers beneath it.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** A `no-restricted-imports` rule naming, for one folder, the import patterns it must not use. */
function layer(files, forbidden, why) {
  return {
    files,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: `${why}: only extension.ts, ui/ and adapters/lm/ may import vscode (docs/architecture.md, Layers).` }],
          patterns: forbidden.map((group) => ({ group: [group], message: `${why} (docs/architecture.md, Layers).` })),
        },
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ['dist/**', 'dist-test/**', 'out/**', 'node_modules/**', '.sample/**', 'bench/.data/**', '.test-tmp/**', '.vscode-rig/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  { files: ['webview-ui/**'], languageOptions: { globals: { ...globals.browser } } },
  layer(
    ['src/core/**'],
    ['**/domain/**', '**/store/**', '**/exchange/**', '**/vcs/**', '**/tools/**', '**/agent/**', '**/adapters/**', '**/ui/**', '**/cli/**'],
    'core imports nothing internal',
  ),
  layer(
    ['src/domain/**'],
    ['**/store/**', '**/exchange/**', '**/vcs/**', '**/tools/**', '**/agent/**', '**/adapters/**', '**/ui/**', '**/cli/**', 'sql.js', 'node:fs'],
    'domain may import only core',
  ),
  layer(
    ['src/store/**'],
    ['**/exchange/**', '**/vcs/**', '**/tools/**', '**/agent/**', '**/adapters/**', '**/ui/**', '**/cli/**'],
    'store may import only domain, core and sql.js',
  ),
  layer(
    ['src/exchange/**', 'src/vcs/**'],
    ['**/store/**', '**/tools/**', '**/agent/**', '**/adapters/**', '**/ui/**', '**/cli/**'],
    'exchange and vcs may import only domain, core and their libraries',
  ),
  layer(
    ['src/tools/**'],
    ['**/store/**', '**/vcs/**', '**/agent/**', '**/adapters/**', '**/ui/**', '**/cli/**'],
    'tools may import only domain, exchange, core and zod',
  ),
  layer(
    ['src/agent/**'],
    ['**/store/**', '**/vcs/**', '**/exchange/**', '**/adapters/**', '**/ui/**', '**/cli/**'],
    'agent may import only tools, core (and domain types)',
  ),
  layer(
    ['src/adapters/http/**', 'src/adapters/mcp/**', 'src/adapters/ws/**', 'src/adapters/grpc/**', 'src/adapters/cli/**', 'src/adapters/rest/**'],
    ['**/store/**', '**/vcs/**', '**/exchange/**', '**/ui/**', '**/cli/**', '**/adapters/lm/**'],
    'adapters may import only agent, tools and core',
  ),
  // bench/rig/ runs inside the real VS Code extension host (bench/rig.ts starts it), like test/integration/
  {
    ...layer(['test/unit/**', 'test/e2e/**', 'test/crash/**', 'test/security/**', 'test/fuzz/**', 'bench/**'], [], 'plain-Node tests cannot load vscode'),
    ignores: ['bench/rig/**'],
  },
);
