import {
  ResourceNotFoundError,
  ResourceTemplate,
  type McpServer,
  type ReadResourceResult,
  type Resource,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { isToolError } from '../../core/errors';
import type { McpReadDeps } from './mcpServer';
import { toProtocolError } from './mcpServer';
import { getCaseTool, listCasesTool } from '../../tools/caseTools';
import { listCategories } from '../../tools/codeTools';
import { getCode, listCodes, listSegmentsForSource } from '../../tools/coreTools';
import { getReportTool, listReportsTool } from '../../tools/reportTools';
import { listSegmentsTool } from '../../tools/segmentQueryTools';
import { listSources, readSourceContent } from '../../tools/sourceTools';

/** The URI scheme of Marginalia's resources (the spec's `app://`, docs/architecture.md "Names"). */
export const QDA_SCHEME = 'qda://';

/** Most code points one `qda://sources/{id}/content` read returns (20 pages of read_source_content). */
export const MAX_CONTENT_CODE_POINTS = 20_000_000;

/** The static resources: URI, name, title, description. */
export const STATIC_RESOURCES = [
  {
    uri: 'qda://project/briefing',
    name: 'project-briefing',
    title: 'Project briefing',
    description: 'Start here: project name, description, research questions, methodology, coding progress, top and recent codes, recent activity.',
  },
  {
    uri: 'qda://project/state',
    name: 'project-state',
    title: 'Project state',
    description: 'Every code, category, source and case with counts, and the number of pending approvals.',
  },
  {
    uri: 'qda://project/statistics',
    name: 'project-statistics',
    title: 'Project statistics',
    description: 'Totals, coding coverage, codings per code, source, category and coder.',
  },
  {
    uri: 'qda://project/settings',
    name: 'project-settings',
    title: 'Project settings',
    description: "The agent-context configuration and every tool's trust level.",
  },
  {
    uri: 'qda://codes',
    name: 'codes',
    title: 'Codebook',
    description:
      'All codes (code_id, name, color, memo, category, segment_count, created_at, owner) and categories (category_id, name, parent_id, code_count).',
  },
  { uri: 'qda://categories', name: 'categories', title: 'Categories', description: 'The category tree with code counts.' },
  { uri: 'qda://sources', name: 'sources', title: 'Sources', description: 'All sources with type, length (code points) and coding counts.' },
  { uri: 'qda://cases', name: 'cases', title: 'Cases', description: 'All cases with their counts and attributes.' },
  { uri: 'qda://reports', name: 'reports', title: 'Reports', description: 'Generated reports (list_reports; empty while the registry has no report tools).' },
] as const;

/** The resource templates (RFC 6570) besides the static resources. */
export const RESOURCE_TEMPLATES = [
  'qda://codes/{code_id}',
  'qda://codes/{code_id}/segments',
  'qda://categories/{category_id}',
  'qda://sources/{source_id}',
  'qda://sources/{source_id}/content',
  'qda://sources/{source_id}/segments',
  'qda://sources/{source_id}/annotations',
  'qda://segments{?code_id}',
  'qda://segments{?source_id}',
  'qda://segments{?case_id}',
  'qda://segments/{segment_id}',
  'qda://cases/{case_id}',
  'qda://cases/{case_id}/members',
  'qda://cases/{case_id}/attributes',
] as const;

function json(uri: URL, data: unknown): ReadResourceResult {
  return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(data, null, 2) }] };
}

/** A template variable as a positive integer id, or a not-found error for the URI. */
function idOf(uri: URL, value: string | string[] | undefined): number {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || !/^[1-9][0-9]{0,14}$/.test(v))
    throw new ResourceNotFoundError(uri.href, `Resource not found: ${uri.href} (ids are positive integers)`);
  return Number(v);
}

/** The report resources, registered when the registry has a `get_report` tool. */
export const REPORT_TEMPLATES = ['qda://reports/{report_id}', 'qda://reports/{report_id}/data'] as const;

/** Segments per list_segments page, and most pages one resource read collects. */
const SEGMENT_PAGE = 5000;
const MAX_SEGMENT_PAGES = 20;

/**
 * Every text segment matching `filter` (list_segments through the pipeline, page by page, at most
 * {@link MAX_SEGMENT_PAGES} pages): `{...filter, total, count, truncated, segments}`.
 */
async function allSegments(deps: McpReadDeps, ctx: ServerContext, filter: { code_id?: number; source_id?: number; case_id?: number }, uri: URL) {
  const segments: unknown[] = [];
  let total = 0;
  for (let page = 0; page < MAX_SEGMENT_PAGES; page++) {
    const data = await deps.read(ctx, listSegmentsTool.name, { ...filter, limit: SEGMENT_PAGE, offset: segments.length }, uri.href);
    total = data.total as number;
    segments.push(...(data.segments as unknown[]));
    if (!data.has_more) break;
  }
  return { ...filter, total, count: segments.length, truncated: segments.length < total, segments };
}

/** Runs a ContextBuilder read as the requesting caller (the caller is resolved first, so a bad session fails). */
function local<T>(deps: McpReadDeps, ctx: ServerContext, uri: URL, read: () => T): T {
  try {
    // sources closed to the agent (issue 14 item 11): the agent layer redacts what the ContextBuilder answers
    return deps.agent.redactFor(deps.caller(ctx), read());
  } catch (e) {
    throw toProtocolError(e, uri.href);
  }
}

/**
 * Registers the `qda://` resources of the agent-context spec, section 2 (the spec's `app://` URIs), on
 * `server`. Reads go through the read tools of the pipeline as the requesting caller (list_codes,
 * get_code, list_categories, list_sources, read_source_content, list_segments_for_source, list_cases,
 * list_segments, get_case), so they reuse the tools' outputs and pass the session and rate-limit stages; the briefing,
 * state summary, statistics and the segment reads no tool offers come from the ContextBuilder (cached,
 * invalidated by events). `qda://reports` uses `list_reports`, and `qda://reports/{report_id}` (and
 * `/data`, the report's `result`) `get_report { report_id }`, when the registry has those tools. Content is JSON (`application/json`), except `qda://sources/{id}/content`
 * (`text/plain`, the whole stored text).
 *
 * Errors (JSON-RPC): a missing item is ResourceNotFoundError (-32602 with `data.uri`, MCP 2026-07-28
 * "resources/read"); no open project, a bad session or a rate limit are -32603/-32602 with
 * `data.error_code` (see protocolErrorOf).
 */
/**
 * The agent-context configuration as `qda://project/settings` shows it: when a server runs, each protocol's
 * `enabled` says whether it is served (gRPC may run from `--grpc-port` while the file says off).
 */
function servedConfig(agent: McpReadDeps['agent']): unknown {
  const cfg = agent.config;
  const served = agent.served;
  if (!served) return cfg;
  const on = (name: string) => served.surfaces.includes(name);
  const p = cfg.protocols;
  return {
    ...cfg,
    protocols: {
      mcp: { ...p.mcp, enabled: on('mcp') },
      rest: { ...p.rest, enabled: on('rest') },
      websocket: { ...p.websocket, enabled: on('websocket') },
      grpc: { ...p.grpc, enabled: on('grpc'), ...(served.grpc_port !== null ? { port: served.grpc_port } : {}) },
    },
  };
}

/**
 * Registers the project's MCP resources on `server` (agent-context spec, section 3): the fixed `qda://` resources
 * and the templates, each read as the requesting caller through the pipeline's read tools or the ContextBuilder.
 */
export function registerResources(server: McpServer, deps: McpReadDeps): void {
  registerStaticResources(server, deps);
  registerResourceTemplates(server, deps);
}

/** The fixed resources: project briefing, state, statistics, settings, and the lists of codes, categories, sources, cases, reports. */
function registerStaticResources(server: McpServer, deps: McpReadDeps): void {
  const meta = (uri: string) => STATIC_RESOURCES.find((r) => r.uri === uri) as (typeof STATIC_RESOURCES)[number];
  const staticResource = (uri: (typeof STATIC_RESOURCES)[number]['uri'], read: (u: URL, ctx: ServerContext) => Promise<unknown> | unknown) => {
    const m = meta(uri);
    server.registerResource(m.name, uri, { title: m.title, description: m.description, mimeType: 'application/json' }, async (u, ctx) =>
      json(u, await read(u, ctx)),
    );
  };

  staticResource('qda://project/briefing', (u, ctx) => local(deps, ctx, u, () => deps.context.buildProjectBriefing()));
  staticResource('qda://project/state', (u, ctx) => local(deps, ctx, u, () => deps.context.buildStateSummary()));
  staticResource('qda://project/statistics', (u, ctx) => local(deps, ctx, u, () => deps.context.buildStatistics()));
  staticResource('qda://project/settings', (u, ctx) =>
    local(deps, ctx, u, () => {
      const state = deps.context.buildStateSummary();
      return {
        project_name: state.project_name,
        project_path: state.project_path,
        info: deps.context.projectInfo(),
        // the configuration, with each protocol's `enabled` as it is actually served when a server runs
        agent_context: servedConfig(deps.agent),
        served: deps.agent.served ?? null,
        // desktop | headless | hybrid (marginalia serve --ai-primary, VS Code marginalia.mode): issue 14 item 9
        mode: deps.agent.mode ?? null,
        trust_levels: deps.agent.trust.table().map((t) => ({ tool: t.tool, level: t.level, category: t.category, source: t.source, locked: t.locked })),
      };
    }),
  );
  staticResource('qda://codes', async (u, ctx) => {
    const codes = await deps.read(ctx, listCodes.name, {}, u.href);
    const cats = await deps.read(ctx, listCategories.name, {}, u.href);
    return {
      codes: (codes.codes as any[]).map((c) => ({
        code_id: c.code_id,
        name: c.name,
        color: c.color,
        memo: c.memo,
        category: c.category,
        segment_count: c.segment_count,
        av_segment_count: c.av_segment_count,
        created_at: c.created_at,
        owner: c.owner,
      })),
      categories: (cats.categories as any[]).map((k) => ({ category_id: k.category_id, name: k.name, parent_id: k.parent_id, code_count: k.code_count })),
    };
  });
  staticResource('qda://categories', (u, ctx) => deps.read(ctx, listCategories.name, {}, u.href));
  staticResource('qda://sources', (u, ctx) => deps.read(ctx, listSources.name, {}, u.href));
  staticResource('qda://cases', (u, ctx) => deps.read(ctx, listCasesTool.name, {}, u.href));
  // reports: served by the report tools once the registry has them (list_reports, get_report)
  staticResource('qda://reports', (u, ctx) =>
    deps.hasTool('list_reports')
      ? deps.read(ctx, listReportsTool.name, {}, u.href)
      : local(deps, ctx, u, () => ({ count: 0, reports: [], note: 'No report tool exists yet; generated reports will be listed here as qda://reports/{id}.' })),
  );
}

/** The templated resources (one code, category, source, segment, case, report and their parts), listing what resources/list names. */
function registerResourceTemplates(server: McpServer, deps: McpReadDeps): void {
  const template = templateOn(server);
  registerCodeTemplates(template, deps);
  registerSourceTemplates(template, deps);
  registerSegmentCaseReportTemplates(template, deps);
}

/** resources/list names each code, category, source and case (their sub-resources are templates): the list callback of `kind`, at most 500. */
function listed(deps: McpReadDeps, kind: 'codes' | 'categories' | 'sources' | 'cases'): () => Promise<{ resources: Resource[] }> {
  return async () => {
    let state;
    try {
      state = deps.context.buildStateSummary();
    } catch (e) {
      if (isToolError(e)) return { resources: [] };
      throw e;
    }
    const cap = 500;
    if (kind === 'codes')
      return {
        resources: state.codes
          .slice(0, cap)
          .map((c) => ({ uri: `qda://codes/${c.code_id}`, name: `code ${c.name}`, title: c.name, mimeType: 'application/json' })),
      };
    if (kind === 'categories')
      return {
        resources: state.categories
          .slice(0, cap)
          .map((c) => ({ uri: `qda://categories/${c.category_id}`, name: `category ${c.name}`, title: c.name, mimeType: 'application/json' })),
      };
    if (kind === 'sources')
      return {
        resources: state.sources
          .slice(0, cap)
          .map((s) => ({ uri: `qda://sources/${s.source_id}`, name: `source ${s.name}`, title: s.name, mimeType: 'application/json' })),
      };
    return {
      resources: state.cases
        .slice(0, cap)
        .map((c) => ({ uri: `qda://cases/${c.case_id}`, name: `case ${c.name}`, title: c.name, mimeType: 'application/json' })),
    };
  };
}

/** Registers one resource template: `read` answers a JSON value (sent as JSON) or a whole ReadResourceResult. */
type TemplateFn = (
  name: string,
  uriTemplate: (typeof RESOURCE_TEMPLATES)[number] | (typeof REPORT_TEMPLATES)[number],
  title: string,
  read: (u: URL, vars: Record<string, string | string[]>, ctx: ServerContext) => Promise<ReadResourceResult | unknown> | ReadResourceResult | unknown,
  list?: () => Promise<{ resources: Resource[] }>,
  mimeType?: string,
) => void;

/** The {@link TemplateFn} of `server`. */
function templateOn(server: McpServer): TemplateFn {
  return (name, uriTemplate, title, read, list, mimeType = 'application/json') => {
    server.registerResource(name, new ResourceTemplate(uriTemplate, { list }), { title, mimeType }, async (u, vars, ctx) => {
      const out = await read(u, vars as Record<string, string | string[]>, ctx);
      return out !== null && typeof out === 'object' && 'contents' in out ? (out as ReadResourceResult) : json(u, out);
    });
  };
}

/** qda://codes/{id}, its segments, qda://categories/{id}. */
function registerCodeTemplates(template: TemplateFn, deps: McpReadDeps): void {
  template(
    'code',
    'qda://codes/{code_id}',
    'A code',
    (u, v, ctx) => deps.read(ctx, getCode.name, { code_id: idOf(u, v.code_id) }, u.href),
    listed(deps, 'codes'),
  );
  template('code-segments', 'qda://codes/{code_id}/segments', 'The segments of a code', (u, v, ctx) =>
    allSegments(deps, ctx, { code_id: idOf(u, v.code_id) }, u),
  );
  template(
    'category',
    'qda://categories/{category_id}',
    'A category with its codes',
    async (u, v, ctx) => {
      const id = idOf(u, v.category_id);
      const cats = await deps.read(ctx, listCategories.name, {}, u.href);
      const category = (cats.categories as any[]).find((k) => k.category_id === id);
      if (!category) throw new ResourceNotFoundError(u.href, `CATEGORY_NOT_FOUND: no category with category_id ${id}`);
      const codes = await deps.read(ctx, listCodes.name, {}, u.href);
      const children = (cats.categories as any[]).filter((k) => k.parent_id === id).map((k) => ({ category_id: k.category_id, name: k.name }));
      return { ...category, subcategories: children, codes: (codes.codes as any[]).filter((c) => c.category_id === id) };
    },
    listed(deps, 'categories'),
  );
}

/** qda://sources/{id}, its content, segments and annotations. */
function registerSourceTemplates(template: TemplateFn, deps: McpReadDeps): void {
  const sourceOf = async (u: URL, id: number, ctx: ServerContext) => {
    const all = await deps.read(ctx, listSources.name, {}, u.href);
    const source = (all.sources as any[]).find((s) => s.source_id === id);
    if (!source) throw new ResourceNotFoundError(u.href, `SOURCE_NOT_FOUND: no source with source_id ${id}`);
    return source;
  };
  template(
    'source',
    'qda://sources/{source_id}',
    'A source (without its text)',
    (u, v, ctx) => sourceOf(u, idOf(u, v.source_id), ctx),
    listed(deps, 'sources'),
  );
  template(
    'source-content',
    'qda://sources/{source_id}/content',
    'The text of a source',
    async (u, v, ctx) => {
      const id = idOf(u, v.source_id);
      let text = '';
      let start = 0;
      for (;;) {
        const page = await deps.read(ctx, readSourceContent.name, { source_id: id, start_pos: start, max_length: 1_000_000 }, u.href);
        text += page.content as string;
        if (!page.has_more || (page.end_pos as number) >= MAX_CONTENT_CODE_POINTS) break;
        start = page.end_pos as number;
      }
      return { contents: [{ uri: u.href, mimeType: 'text/plain', text }] } satisfies ReadResourceResult;
    },
    undefined,
    'text/plain',
  );
  template('source-segments', 'qda://sources/{source_id}/segments', 'The coded segments of a source', (u, v, ctx) =>
    deps.read(ctx, listSegmentsForSource.name, { source_id: idOf(u, v.source_id) }, u.href),
  );
  template('source-annotations', 'qda://sources/{source_id}/annotations', "A source's memo and its segment memos", async (u, v, ctx) => {
    const id = idOf(u, v.source_id);
    const source = await sourceOf(u, id, ctx);
    const segs = await deps.read(ctx, listSegmentsForSource.name, { source_id: id }, u.href);
    const annotations = (segs.segments as any[])
      .filter((s) => s.memo)
      .map((s) => ({
        segment_id: s.segment_id,
        code_id: s.code_id,
        code_name: s.code_name,
        start_pos: s.start_pos,
        end_pos: s.end_pos,
        text: s.text,
        memo: s.memo,
      }));
    return { source_id: id, source_name: source.name, memo: source.memo, count: annotations.length, annotations };
  });
}

/** qda://segments?..., qda://segments/{id}, qda://cases/{id} and its parts, qda://reports/{id} and its data. */
function registerSegmentCaseReportTemplates(template: TemplateFn, deps: McpReadDeps): void {
  template('segments-of-code', 'qda://segments{?code_id}', 'Segments of a code', (u, v, ctx) => allSegments(deps, ctx, { code_id: idOf(u, v.code_id) }, u));
  template('segments-of-source', 'qda://segments{?source_id}', 'Segments of a source', (u, v, ctx) =>
    allSegments(deps, ctx, { source_id: idOf(u, v.source_id) }, u),
  );
  template('segments-of-case', 'qda://segments{?case_id}', 'Segments of a case (of its sources and ranges)', (u, v, ctx) =>
    allSegments(deps, ctx, { case_id: idOf(u, v.case_id) }, u),
  );
  template('segment', 'qda://segments/{segment_id}', 'A coded segment', (u, v, ctx) => local(deps, ctx, u, () => deps.context.segment(idOf(u, v.segment_id))));
  template(
    'case',
    'qda://cases/{case_id}',
    'A case',
    (u, v, ctx) => deps.read(ctx, getCaseTool.name, { case_id: idOf(u, v.case_id) }, u.href),
    listed(deps, 'cases'),
  );
  template('case-members', 'qda://cases/{case_id}/members', 'The sources and source ranges of a case', async (u, v, ctx) => {
    const c = await deps.read(ctx, getCaseTool.name, { case_id: idOf(u, v.case_id) }, u.href);
    return { case_id: c.case_id, name: c.name, sources: c.sources, segments: c.segments };
  });
  template('case-attributes', 'qda://cases/{case_id}/attributes', 'The attributes of a case', async (u, v, ctx) => {
    const c = await deps.read(ctx, getCaseTool.name, { case_id: idOf(u, v.case_id) }, u.href);
    return { case_id: c.case_id, name: c.name, attributes: c.attributes, attribute_values: c.attribute_values };
  });
  if (deps.hasTool('get_report')) {
    template('report', REPORT_TEMPLATES[0], 'A report job and its result', (u, v, ctx) =>
      deps.read(ctx, getReportTool.name, { report_id: idOf(u, v.report_id) }, u.href),
    );
    template('report-data', REPORT_TEMPLATES[1], "A report's result data", async (u, v, ctx) => {
      const r = await deps.read(ctx, getReportTool.name, { report_id: idOf(u, v.report_id) }, u.href);
      return r !== null && typeof r === 'object' && 'result' in r ? (r as { result: unknown }).result : r;
    });
  }
}
