import type { ToolGroup } from './defineTool';

/**
 * The REST adapter's tables (agent-context spec, section 4, "REST adapter"). Tool names may appear only
 * in src/tools, so the routes that name a tool live here and src/adapters/rest only reads these tables.
 */

/**
 * A named command route: the tools it may run, in order of preference (the first one the registry holds
 * is used), or, with `by`, a body field whose value picks the tool. When none of the candidates exists in
 * the registry yet, the route answers 501 HANDLER_NOT_FOUND naming them.
 */
export interface CommandRoute {
  /** candidate tool names, best first */
  tools: readonly string[];
  /** a body field choosing the tool by its value (removed from the arguments before the call) */
  by?: { field: string; tools: Readonly<Record<string, readonly string[]>> };
  /** one line for the docs (docs/reference/rest-sse.md) and `GET /commands` */
  summary: string;
}

/**
 * `POST /commands/<category>/<name>` routes of the spec's REST table. Keys are `<category>/<name>`.
 * - `coding/apply_code`: the design's `apply_code` (trust Notify). Not `batch_apply_codes`: that is a bulk
 *   operation (trust Require), so standing in for it would change what the researcher approves.
 * - `source/import`: the design's `import_source`, else the HTTP interface's `import_file_source`
 *   (same `file_path`, `name`; a superset of the parameters).
 * - `analysis/generate_report`: `report_type` = `frequency` | `cooccurrence` | `coder_comparison`
 *   picks `generate_frequency_report`, `generate_cooccurrence_report` or `generate_coder_comparison`.
 */
export const COMMAND_ROUTES: Readonly<Record<string, CommandRoute>> = {
  'coding/apply_code': { tools: ['apply_code'], summary: 'apply a code to a text range (design tool apply_code)' },
  'coding/create_code': { tools: ['create_code'], summary: 'create a code; data.code_id is the new code' },
  'coding/merge_codes': { tools: ['merge_codes'], summary: 'merge one code into another (trust Require)' },
  'source/import': { tools: ['import_source', 'import_file_source'], summary: 'import a file as a source' },
  'case/create': { tools: ['create_case'], summary: 'create a case' },
  'analysis/generate_report': {
    tools: [],
    by: {
      field: 'report_type',
      tools: {
        frequency: ['generate_frequency_report'],
        cooccurrence: ['generate_cooccurrence_report'],
        coder_comparison: ['generate_coder_comparison'],
      },
    },
    summary: 'start a report job; report_type frequency | cooccurrence | coder_comparison',
  },
};

/**
 * The command category of each tool group, for the generic route `POST /commands/<category>/<tool>`
 * (the spec's MCP tool categories: coding, source, case, analysis, search, plus `project`).
 */
export const COMMAND_CATEGORY_OF_GROUP: Readonly<Record<ToolGroup, string>> = {
  core: 'coding',
  code: 'coding',
  ai_code_suggestions: 'coding',
  ai_text_coding: 'coding',
  batch: 'coding',
  av: 'coding',
  source: 'source',
  folder: 'source',
  project: 'project',
  case: 'case',
  analysis: 'analysis',
  exchange: 'analysis',
  version_control: 'analysis',
  search: 'search',
};

/**
 * The read tools behind each `GET /state/...` route. Every state read runs through the pipeline as the
 * caller's session (trust auto, rate-limited, audited).
 */
export const STATE_TOOLS = {
  /** GET /state/project: the state summary */
  project: 'get_project_context',
  /** GET /state/codes: codes and categories (the spec's code list) */
  codes: 'list_codes',
  categories: 'list_categories',
  /** GET /state/codes/:id */
  code: 'get_code',
  /** GET /state/sources (coded= and type= filters) */
  sources: 'list_sources',
  /** GET /state/sources/:id/content */
  sourceContent: 'read_source_content',
  /** GET /state/segments?filter=... */
  segments: 'list_segments',
  /** GET /state/cases */
  cases: 'list_cases',
} as const;
