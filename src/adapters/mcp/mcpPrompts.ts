import { ProtocolError, ProtocolErrorCode, type GetPromptResult, type McpServer, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { McpReadDeps } from './mcpServer';
import { toProtocolError } from './mcpServer';
import { compareCasesTool, getCaseTool } from '../../tools/caseTools';
import { listCategories } from '../../tools/codeTools';
import { getCode, listCodes } from '../../tools/coreTools';
import { listSegmentsTool } from '../../tools/segmentQueryTools';
import { readSourceContent } from '../../tools/sourceTools';

/** Code points of source text a prompt embeds by default (the rest is read with read_source_content). */
export const DEFAULT_PROMPT_TEXT = 20_000;
/** Segments per code a prompt embeds at most. */
const SEGMENTS_PER_CODE = 3;
/** Code points of one segment's text a prompt embeds at most. */
const SEGMENT_EXCERPT = 400;

/** The eight prompt templates of the agent-context spec (section 2, "Prompt templates"). */
export const PROMPT_NAMES = [
  'grounded_theory_open_coding',
  'thematic_analysis',
  'axial_coding',
  'selective_coding',
  'summarize_code',
  'compare_cases',
  'identify_patterns',
  'write_memo',
] as const;

function invalid(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message, { error_code: 'INVALID_ARGUMENTS' });
}

/** A prompt argument (always a string in MCP) as a positive integer id. Errors: InvalidParams. */
function idArg(name: string, value: string | undefined): number {
  const v = value?.trim();
  if (!v || !/^[1-9][0-9]{0,14}$/.test(v)) throw invalid(`${name} must be a positive integer (got ${JSON.stringify(value ?? null)})`);
  return Number(v);
}

/** A comma- or space-separated list of ids. Errors: InvalidParams. */
function idsArg(name: string, value: string): number[] {
  const parts = value.split(/[\s,;]+/).filter(Boolean);
  if (parts.length === 0) throw invalid(`${name} must list ids, e.g. "1,2"`);
  return parts.map((p) => idArg(name, p));
}

/** The first `n` code points of `text`, marked when cut. */
function cut(text: string, n: number): string {
  const cps = [...text];
  return cps.length <= n ? text : `${cps.slice(0, n).join('')} [...]`;
}

function message(text: string, description: string): GetPromptResult {
  return { description, messages: [{ role: 'user', content: { type: 'text', text } }] };
}

/** The codebook as lines: `[code_id] name (category) - memo (N segments)`. */
function codebookText(codes: any[]): string {
  if (codes.length === 0) return '(the codebook is empty)';
  return codes
    .map(
      (c) =>
        `- [${c.code_id}] ${c.name}${c.category ? ` (category: ${c.category.name})` : ''}: ${c.segment_count} segment(s)${c.memo ? `. Memo: ${cut(String(c.memo).replace(/\s+/g, ' '), 300)}` : ''}`,
    )
    .join('\n');
}

function categoriesText(categories: any[]): string {
  if (categories.length === 0) return '(no categories yet)';
  return categories
    .map(
      (k) =>
        `${'  '.repeat(k.depth ?? 0)}- [${k.category_id}] ${k.name}: ${k.code_count} code(s)${k.memo ? `. Memo: ${cut(String(k.memo).replace(/\s+/g, ' '), 200)}` : ''}`,
    )
    .join('\n');
}

function segmentLine(s: any): string {
  return `  - segment ${s.segment_id}${s.source_name ? ` in "${s.source_name}"` : ''} [${s.start_pos}-${s.end_pos}]: "${cut(String(s.text).replace(/\s+/g, ' '), SEGMENT_EXCERPT)}"${s.memo ? ` (memo: ${cut(String(s.memo), 200)})` : ''}`;
}

const RECORDING =
  'Record your work through the tools: create_code {name, color} for a new code, batch_apply_codes {operations: [{code_id, source_id, start_position, end_position, memo?}]} to code passages, ' +
  'update_code_memo {code_id, memo} for code memos, create_category and move_code_to_category for grouping. Positions count Unicode code points of the stored text from 0, end exclusive. ' +
  'Some calls wait for the researcher\'s approval and answer {status: "pending_approval", request_id}: note the request_id, carry on, and check get_approval_status later.';

/** Prompt argument schemas (built once; a server instance is made per HTTP request). */
const OPEN_CODING_ARGS = z.object({
  source_id: z.string().describe('the source to code (a positive integer)'),
  max_length: z.string().optional().describe(`code points of text to embed (default ${DEFAULT_PROMPT_TEXT})`),
});
const THEMATIC_ARGS = z.object({
  source_id: z.string().describe('the source to analyse (a positive integer)'),
  research_questions: z.string().optional().describe('research questions, one per line or separated by ";" (default: the project\'s)'),
  max_length: z.string().optional().describe(`code points of text to embed (default ${DEFAULT_PROMPT_TEXT})`),
});
const AXIAL_ARGS = z.object({ max_codes: z.string().optional().describe('codes to show example segments for (default 40)') });
const SELECTIVE_ARGS = z.object({ max_relationships: z.string().optional().describe('co-occurring code pairs to show (default 40)') });
const SUMMARIZE_ARGS = z.object({
  code_id: z.string().describe('the code (a positive integer)'),
  max_segments: z.string().optional().describe('segments to embed (default 200)'),
});
const COMPARE_ARGS = z.object({ case_ids: z.string().describe('two or more case ids, e.g. "1,2"') });
const PATTERNS_ARGS = z.object({ max_relationships: z.string().optional().describe('co-occurring code pairs to show (default 40)') });
const MEMO_ARGS = z.object({
  code_id: z.string().optional().describe('the code (a positive integer)'),
  category_id: z.string().optional().describe('the category (a positive integer)'),
});

/**
 * Registers the eight prompt templates of the agent-context spec (section 2) on `server`. Each embeds the
 * real project material named by the spec, read as the requesting caller through the pipeline's read
 * tools (read_source_content, list_codes, list_categories, list_segments, get_code, get_case,
 * compare_cases) and the ContextBuilder (code co-occurrences, statistics, research questions):
 * grounded_theory_open_coding (source content, existing codes), thematic_analysis (source content,
 * research questions), axial_coding (codes, segments, categories), selective_coding (codes,
 * relationships), summarize_code (code, all segments), compare_cases (cases, segments), identify_patterns
 * (codes, co-occurrences), write_memo (code or category, segments).
 *
 * Arguments are strings (MCP prompts); ids are positive integers. Errors (JSON-RPC): InvalidParams for a
 * bad argument or an unknown id (`data.error_code` names SOURCE_NOT_FOUND, CODE_NOT_FOUND, ...), InternalError
 * for NO_PROJECT and other failures.
 */
export function registerPrompts(server: McpServer, deps: McpReadDeps): void {
  const reads = promptReads(deps);
  registerSourcePrompts(server, deps, reads);
  registerCodebookPrompts(server, deps, reads);
  registerProjectPrompts(server, deps, reads);
}

/** The reads the prompts share, as the requesting caller. */
function promptReads(deps: McpReadDeps) {
  const local = <T>(ctx: ServerContext, read: () => T): T => {
    try {
      // sources closed to the agent (issue 14 item 11): the agent layer redacts what the ContextBuilder answers
      return deps.agent.redactFor(deps.caller(ctx), read());
    } catch (e) {
      throw toProtocolError(e);
    }
  };
  const sourceText = async (ctx: ServerContext, sourceId: number, maxLength: number) => {
    const page = await deps.read(ctx, readSourceContent.name, { source_id: sourceId, max_length: maxLength });
    const rest = page.has_more
      ? `\n(The text continues: code points ${page.end_pos}-${page.total_length} are not shown. Read them with read_source_content {"source_id": ${sourceId}, "start_pos": ${page.end_pos}}.)`
      : '';
    return { page, block: `Source text, code points ${page.start_pos}-${page.end_pos} of ${page.total_length}:\n<<<\n${page.content}\n>>>${rest}` };
  };
  const maxLen = (v: string | undefined) => (v === undefined ? DEFAULT_PROMPT_TEXT : Math.min(idArg('max_length', v), 1_000_000));
  const questions = (given: string | undefined) => {
    const list = given?.trim()
      ? given
          .split(/\n|;/)
          .map((q) => q.trim())
          .filter(Boolean)
      : deps.context.projectInfo().research_questions;
    return list.length > 0 ? list.map((q, i) => `${i + 1}. ${q}`).join('\n') : '(none recorded: ask the researcher, or infer tentative questions and say so)';
  };
  /** Text segments through list_segments (one request): `{total, segments}`. */
  const segmentsOf = async (ctx: ServerContext, filter: Record<string, number>, limit: number) => {
    const data = await deps.read(ctx, listSegmentsTool.name, { ...filter, limit: Math.min(limit, 5000) });
    return { total: data.total as number, segments: data.segments as any[] };
  };
  /** Up to SEGMENTS_PER_CODE example segments for each of the first `limit` used codes, from one list_segments read. */
  const samples = async (ctx: ServerContext, codes: any[], limit: number) => {
    const used = codes.filter((c) => c.segment_count > 0).slice(0, limit);
    if (used.length === 0) return '';
    const { segments } = await segmentsOf(ctx, {}, 5000);
    const byCode = new Map<number, any[]>();
    for (const s of segments) {
      const list = byCode.get(s.code_id) ?? [];
      if (list.length < SEGMENTS_PER_CODE) list.push(s);
      byCode.set(s.code_id, list);
    }
    return used
      .map((c) => `* [${c.code_id}] ${c.name} (${c.segment_count} segment(s))\n${(byCode.get(c.code_id) ?? []).map(segmentLine).join('\n')}`)
      .join('\n');
  };
  /** A source's text page and the existing codes, for the prompts that work on one source. */
  const sourceAndCodes = async (ctx: ServerContext, args: { source_id: string; max_length?: string }) => {
    const id = idArg('source_id', args.source_id);
    const { page, block } = await sourceText(ctx, id, maxLen(args.max_length));
    const codes = (await deps.read(ctx, listCodes.name, {})).codes as any[];
    return { id, page, block, codes };
  };
  return { local, sourceText, maxLen, questions, segmentsOf, samples, sourceAndCodes };
}

type PromptReads = ReturnType<typeof promptReads>;

/** The prompts on one source: grounded_theory_open_coding, thematic_analysis. */
function registerSourcePrompts(server: McpServer, deps: McpReadDeps, r: PromptReads): void {
  const { questions, sourceAndCodes } = r;
  server.registerPrompt(
    'grounded_theory_open_coding',
    {
      title: 'Grounded theory: open coding',
      description: 'Open-code one source line by line, reusing the existing codebook; embeds the source text and the codes.',
      argsSchema: OPEN_CODING_ARGS,
    },
    async (args, ctx) => {
      const { id, page, block, codes } = await sourceAndCodes(ctx, args);
      const text = [
        `You are open coding, in the grounded-theory tradition (Glaser & Strauss; Charmaz), the source "${page.source_name}" (source_id ${id}) of this Marginalia project.`,
        'Read it line by line. For each meaningful passage name what is happening with a short, analytic code (gerunds such as "negotiating access" work well); prefer in-vivo codes where the participant\'s own words say it best. Stay close to the data; do not force existing theory on it.',
        'Reuse an existing code when it fits; create a new one only when none does, and give each new code a memo saying what it means and when to apply it.',
        `Existing codebook (${codes.length} codes):\n${codebookText(codes)}`,
        RECORDING,
        block,
        'Finish with a short list of the codes you created or applied and the questions the text raises for further sampling.',
      ].join('\n\n');
      return message(text, `Open coding of "${page.source_name}"`);
    },
  );

  server.registerPrompt(
    'thematic_analysis',
    {
      title: 'Thematic analysis',
      description: 'Reflexive thematic analysis (Braun & Clarke) of one source against the research questions; embeds the source text and the questions.',
      argsSchema: THEMATIC_ARGS,
    },
    async (args, ctx) => {
      const { id, page, block, codes } = await sourceAndCodes(ctx, args);
      const text = [
        `Carry out a thematic analysis (Braun & Clarke's six phases) of the source "${page.source_name}" (source_id ${id}).`,
        `Research questions:\n${questions(args.research_questions)}`,
        '1. Familiarise yourself with the text and note first impressions. 2. Generate initial codes for features relevant to the questions. 3. Search for candidate themes by grouping codes. 4. Review the themes against the coded extracts and the whole text. 5. Define and name each theme: what it says about the research questions. 6. Report the themes with vivid extracts (quote segment text with its positions).',
        `Existing codebook (${codes.length} codes):\n${codebookText(codes)}`,
        `${RECORDING} Record candidate themes as categories (create_category) holding their codes.`,
        block,
      ].join('\n\n');
      return message(text, `Thematic analysis of "${page.source_name}"`);
    },
  );
}

/** The prompts on the codebook: axial_coding, selective_coding, summarize_code. */
function registerCodebookPrompts(server: McpServer, deps: McpReadDeps, r: PromptReads): void {
  const { local, segmentsOf, samples } = r;
  server.registerPrompt(
    'axial_coding',
    {
      title: 'Axial coding',
      description:
        'Relate codes to categories along the paradigm model (conditions, actions/interactions, consequences); embeds codes, example segments and categories.',
      argsSchema: AXIAL_ARGS,
    },
    async (args, ctx) => {
      const codes = (await deps.read(ctx, listCodes.name, {})).codes as any[];
      const categories = (await deps.read(ctx, listCategories.name, {})).categories as any[];
      const limit = args.max_codes === undefined ? 40 : idArg('max_codes', args.max_codes);
      const byUse = [...codes].sort((a, b) => b.segment_count - a.segment_count);
      const text = [
        'Do axial coding (Strauss & Corbin) on this project: reassemble the open codes into categories and subcategories, and relate them along the paradigm model: causal conditions, context, intervening conditions, actions/interactions, consequences.',
        'For each category say which codes belong to it, its properties and dimensions, and how it relates to the others; point to segments (by segment id) that show each relation. Flag codes that overlap and could be merged (suggest_merge_codes) and codes that do not fit yet.',
        `Categories:\n${categoriesText(categories)}`,
        `Codes (${codes.length}):\n${codebookText(codes)}`,
        `Example segments of the most used codes:\n${(await samples(ctx, byUse, limit)) || '(no coded segments yet)'}`,
        RECORDING,
      ].join('\n\n');
      return message(text, 'Axial coding of the codebook');
    },
  );

  server.registerPrompt(
    'selective_coding',
    {
      title: 'Selective coding',
      description:
        'Choose the core category and integrate the others around it; embeds codes, categories and the relationships between codes (co-occurrences).',
      argsSchema: SELECTIVE_ARGS,
    },
    async (args, ctx) => {
      const codes = (await deps.read(ctx, listCodes.name, {})).codes as any[];
      const categories = (await deps.read(ctx, listCategories.name, {})).categories as any[];
      const limit = args.max_relationships === undefined ? 40 : idArg('max_relationships', args.max_relationships);
      const pairs = local(ctx, () => deps.context.cooccurrences()).slice(0, limit);
      const info = local(ctx, () => deps.context.projectInfo());
      const text = [
        'Do selective coding: identify the core category, the central phenomenon that the other categories relate to, and integrate the analysis around it into a storyline.',
        'Justify the choice (it appears often, relates to most other categories, explains variation), say how each category connects to it, and name categories that still need refining or more data. Write the storyline as a memo and propose it to the researcher.',
        info.research_questions.length > 0 ? `Research questions:\n${info.research_questions.map((q, i) => `${i + 1}. ${q}`).join('\n')}` : '',
        `Categories:\n${categoriesText(categories)}`,
        `Codes (${codes.length}):\n${codebookText(codes)}`,
        `Relationships: codes applied to overlapping text (pairs of overlapping segments, in how many sources):\n${pairs.map((p) => `- ${p.code_a.name} [${p.code_a.code_id}] + ${p.code_b.name} [${p.code_b.code_id}]: ${p.count} overlap(s) in ${p.sources} source(s)`).join('\n') || '(no overlapping codings yet)'}`,
        RECORDING,
      ]
        .filter(Boolean)
        .join('\n\n');
      return message(text, 'Selective coding: the core category');
    },
  );

  server.registerPrompt(
    'summarize_code',
    {
      title: 'Summarize a code',
      description: 'Summarise what one code captures across all its segments; embeds the code and every segment.',
      argsSchema: SUMMARIZE_ARGS,
    },
    async (args, ctx) => {
      const id = idArg('code_id', args.code_id);
      const code = await deps.read(ctx, getCode.name, { code_id: id });
      const limit = args.max_segments === undefined ? 200 : idArg('max_segments', args.max_segments);
      const segs = await segmentsOf(ctx, { code_id: id }, limit);
      const shown = segs.segments;
      const text = [
        `Summarise the code "${code.name}" (code_id ${id}${code.category ? `, category ${code.category.name}` : ''}) from all its segments.`,
        `Its memo: ${code.memo ? code.memo : '(none)'}`,
        'Say what the code captures, its dimensions and the variation across sources and participants, the most telling extracts (with segment ids), segments that do not fit (candidates for recoding), and whether the code should be split or merged. End with a revised memo the researcher can accept (update_code_memo).',
        `Segments (${segs.total}${shown.length < segs.total ? `, first ${shown.length} shown` : ''}):\n${shown.map(segmentLine).join('\n') || '(no segments yet)'}`,
      ].join('\n\n');
      return message(text, `Summary of the code "${code.name}"`);
    },
  );
}

/** The prompts across the project: compare_cases, identify_patterns, write_memo. */
function registerProjectPrompts(server: McpServer, deps: McpReadDeps, r: PromptReads): void {
  const { local, segmentsOf, samples } = r;
  server.registerPrompt(
    'compare_cases',
    {
      title: 'Compare cases',
      description: 'Compare cases by their attributes and coded segments; embeds each case and its segments, and the compare_cases tool output.',
      argsSchema: COMPARE_ARGS,
    },
    async (args, ctx) => {
      const ids = idsArg('case_ids', args.case_ids);
      if (ids.length < 2) throw invalid('compare_cases needs at least two case ids, e.g. "1,2"');
      const parts: string[] = [];
      for (const id of ids) {
        const c = await deps.read(ctx, getCaseTool.name, { case_id: id });
        const segs = await segmentsOf(ctx, { case_id: id }, 60);
        const attrs = (c.attributes as any[]).map((a) => `${a.name} = ${JSON.stringify(a.value)}`).join(', ') || '(no attributes)';
        parts.push(
          `Case "${c.name}" (case_id ${id}). Attributes: ${attrs}. Memo: ${c.memo ?? '(none)'}.\nCoded segments (${segs.total}${segs.segments.length < segs.total ? `, first ${segs.segments.length} shown` : ''}):\n${segs.segments.map((s) => `${segmentLine(s)} [code: ${s.code_name}]`).join('\n') || '  (none)'}`,
        );
      }
      const comparison = await deps.read(ctx, compareCasesTool.name, { case_ids: ids });
      const text = [
        'Compare these cases: what they share, how they differ, and how the differences relate to their attributes. Ground every claim in segments (cite segment ids). Close with hypotheses worth checking in further cases.',
        ...parts,
        `Code-by-case comparison (compare_cases):\n${JSON.stringify(comparison, null, 1).slice(0, 20_000)}`,
      ].join('\n\n');
      return message(text, `Comparison of cases ${ids.join(', ')}`);
    },
  );

  server.registerPrompt(
    'identify_patterns',
    {
      title: 'Identify patterns',
      description:
        'Look for patterns across the project: frequent codes, codes that occur together, and how coding is spread over sources; embeds codes and co-occurrences.',
      argsSchema: PATTERNS_ARGS,
    },
    async (args, ctx) => {
      const codes = (await deps.read(ctx, listCodes.name, {})).codes as any[];
      const limit = args.max_relationships === undefined ? 40 : idArg('max_relationships', args.max_relationships);
      const pairs = local(ctx, () => deps.context.cooccurrences()).slice(0, limit);
      const stats = local(ctx, () => deps.context.buildStatistics());
      const text = [
        'Identify patterns in this project: which codes dominate, which occur together (and which never do), which sources or participants carry which codes, and what that suggests about the research questions. Separate robust patterns (many segments, several sources) from hunches, and say what would test each.',
        `Codes (${codes.length}), most used first:\n${codebookText([...codes].sort((a, b) => b.segment_count - a.segment_count))}`,
        `Co-occurrences (codes applied to overlapping text):\n${pairs.map((p) => `- ${p.code_a.name} + ${p.code_b.name}: ${p.count} overlap(s) in ${p.sources} source(s)`).join('\n') || '(none yet)'}`,
        `Coding per source:\n${stats.segments_per_source.map((s) => `- [${s.source_id}] ${s.name}: ${s.segments} segment(s), ${s.codes} distinct code(s)`).join('\n') || '(no sources)'}`,
        `Coverage: ${stats.coverage.coded_code_points} of ${stats.coverage.text_code_points} code points of text coded (${Math.round(stats.coverage.coded_ratio * 100)}%).`,
      ].join('\n\n');
      return message(text, 'Patterns across the project');
    },
  );

  server.registerPrompt(
    'write_memo',
    {
      title: 'Write a memo',
      description: 'Write an analytic memo about one code or one category; embeds it and its segments. Give code_id or category_id.',
      argsSchema: MEMO_ARGS,
    },
    async (args, ctx) => {
      if ((args.code_id === undefined) === (args.category_id === undefined)) throw invalid('write_memo needs exactly one of code_id and category_id');
      const guidance =
        'Write an analytic memo: what this concept means in the data, its properties and dimensions, how it relates to other codes and categories, surprises and contradictions, and questions for further coding. Quote segments by id. Keep it to what the data supports.';
      if (args.code_id !== undefined) {
        const id = idArg('code_id', args.code_id);
        const code = await deps.read(ctx, getCode.name, { code_id: id });
        const segs = await segmentsOf(ctx, { code_id: id }, 150);
        const text = [
          `${guidance} Propose the memo for the code with update_code_memo {"code_id": ${id}, "memo": ...} (it may wait for the researcher's approval).`,
          `Code "${code.name}" (code_id ${id}${code.category ? `, category ${code.category.name}` : ''}). Current memo: ${code.memo ?? '(none)'}`,
          `Segments (${segs.total}${segs.segments.length < segs.total ? `, first ${segs.segments.length} shown` : ''}):\n${segs.segments.map(segmentLine).join('\n') || '(none yet)'}`,
        ].join('\n\n');
        return message(text, `Memo on the code "${code.name}"`);
      }
      const id = idArg('category_id', args.category_id);
      const categories = (await deps.read(ctx, listCategories.name, {})).categories as any[];
      const category = categories.find((k) => k.category_id === id);
      if (!category)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `CATEGORY_NOT_FOUND: no category with category_id ${id}`, {
          error_code: 'CATEGORY_NOT_FOUND',
        });
      const codes = ((await deps.read(ctx, listCodes.name, {})).codes as any[]).filter((c) => c.category_id === id);
      const text = [
        `${guidance} There is no tool that stores a category memo yet: give the memo to the researcher in your answer.`,
        `Category "${category.name}" (category_id ${id}). Current memo: ${category.memo ?? '(none)'}`,
        `Its codes (${codes.length}):\n${codebookText(codes)}`,
        `Example segments:\n${(await samples(ctx, codes, 40)) || '(no coded segments yet)'}`,
      ].join('\n\n');
      return message(text, `Memo on the category "${category.name}"`);
    },
  );
}
