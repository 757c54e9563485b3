import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import type { Caller, ToolPipeline } from '../agent/pipeline';
import { utf16ToCp } from '../core/text';
import { addSourceToCaseTool, createCaseTool, setCaseAttributeTool } from '../tools/caseTools';
import { createCategoryTool } from '../tools/codeTools';
import { batchApplyCodes, createCodeTool } from '../tools/coreTools';
import { getProjectContext } from '../tools/projectTools';
import { setSourceAttributeTool } from '../tools/sourceAttributeTools';
import { importFileSource } from '../tools/sourceTools';
import { updateProjectBriefingTool } from '../tools/memoTools';

/** The caller the seeding runs as: the researcher's own (local) session. */
const SEEDER: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'sample-seeder', user: 'sample-study', researcher: true };

interface CategorySpec {
  name: string;
  memo?: string;
  children?: CategorySpec[];
}
interface CodebookSpec {
  categories?: CategorySpec[];
  codes?: { name: string; color: string; memo?: string; category?: string }[];
}
interface CodingSpec {
  source: string;
  code: string;
  quote: string;
}
/** An attribute value as YAML gives it: a `YYYY-MM-DD` date arrives as a Date (YAML 1.1 timestamps) or a string. */
type AttributeSpec = string | number | boolean | Date;
interface CasesSpec {
  cases?: { name: string; memo?: string; sources?: string[]; attributes?: Record<string, AttributeSpec> }[];
  /** transcript file name -> document attributes */
  document_attributes?: Record<string, Record<string, AttributeSpec>>;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A seeded attribute as set_case_attribute / set_source_attribute take it: dates as `YYYY-MM-DD` with type date. */
function attributeArgs(value: AttributeSpec): { value: string | number | boolean; type?: 'date' } {
  if (value instanceof Date) return { value: value.toISOString().slice(0, 10), type: 'date' };
  if (typeof value === 'string' && ISO_DATE.test(value)) return { value, type: 'date' };
  return { value };
}

async function call(pipeline: ToolPipeline, tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const out = await pipeline.invoke(tool, args, SEEDER);
  if (!out.envelope.success) throw new Error(`seeding: ${tool} failed: ${out.envelope.error_code} ${out.envelope.error}`);
  return out.envelope.data as Record<string, unknown>;
}

/**
 * Fills an empty project from a sample study folder through the tool pipeline (so it journals and emits
 * events like any call): `codebook.yaml` (nested categories, codes), `transcripts/*.txt` (imported with
 * import_file_source), `codings.yaml` (each quote found verbatim in its transcript and coded with
 * batch_apply_codes; positions converted to code points), `cases.yaml` (cases with their sources, memo and typed
 * attributes, and document attributes per transcript; a `YYYY-MM-DD` value is a date) and `briefing.yaml` (the
 * project briefing: description, research_questions, methodology; update_project_briefing). Returns what it created, or null when the
 * project already had sources or codes. Throws when a file is malformed or a quote is missing.
 */
export async function seedProject(pipeline: ToolPipeline, dir: string): Promise<{ sources: number; codes: number; segments: number } | null> {
  const ctx = await call(pipeline, getProjectContext.name, {});
  if ((ctx.source_count as number) > 0 || (ctx.code_count as number) > 0) return null;
  const codebook = parse(fs.readFileSync(path.join(dir, 'codebook.yaml'), 'utf8')) as CodebookSpec;
  const categoryIds = new Map<string, number>();
  const addCategory = async (c: CategorySpec, parent: number | undefined) => {
    const data = await call(pipeline, createCategoryTool.name, { name: c.name, memo: c.memo, parent_id: parent });
    categoryIds.set(c.name, data.category_id as number);
    for (const ch of c.children ?? []) await addCategory(ch, data.category_id as number);
  };
  for (const c of codebook.categories ?? []) await addCategory(c, undefined);
  const codeIds = new Map<string, number>();
  for (const c of codebook.codes ?? []) {
    const data = await call(pipeline, createCodeTool.name, {
      name: c.name,
      color: c.color,
      memo: c.memo,
      category_id: c.category ? categoryIds.get(c.category) : undefined,
    });
    codeIds.set(c.name, data.code_id as number);
  }
  const transcriptDir = path.join(dir, 'transcripts');
  const sourceIds = new Map<string, { id: number; text: string }>();
  for (const file of fs
    .readdirSync(transcriptDir)
    .filter((f) => f.endsWith('.txt'))
    .sort()) {
    const abs = path.join(transcriptDir, file);
    const data = await call(pipeline, importFileSource.name, { file_path: abs, origin: `sample study: ${path.basename(dir)}/transcripts/${file}` });
    sourceIds.set(file, { id: data.source_id as number, text: fs.readFileSync(abs, 'utf8') });
  }
  const codingsFile = path.join(dir, 'codings.yaml');
  const codings = fs.existsSync(codingsFile) ? ((parse(fs.readFileSync(codingsFile, 'utf8')) as CodingSpec[] | null) ?? []) : [];
  const operations = codings.map((c) => {
    const src = sourceIds.get(c.source);
    const codeId = codeIds.get(c.code);
    if (!src || codeId === undefined) throw new Error(`seeding: codings.yaml names unknown source "${c.source}" or code "${c.code}"`);
    const at = src.text.indexOf(c.quote);
    if (at < 0) throw new Error(`seeding: quote not found in ${c.source}: "${c.quote.slice(0, 60)}"`);
    const start = utf16ToCp(src.text, at);
    return { code_id: codeId, source_id: src.id, start_position: start, end_position: start + [...c.quote].length };
  });
  if (operations.length > 0) await call(pipeline, batchApplyCodes.name, { operations });
  const casesFile = path.join(dir, 'cases.yaml');
  const cases = fs.existsSync(casesFile) ? ((parse(fs.readFileSync(casesFile, 'utf8')) as CasesSpec | null) ?? {}) : {};
  const sourceOf = (file: string) => {
    const src = sourceIds.get(file);
    if (!src) throw new Error(`seeding: cases.yaml names unknown source "${file}"`);
    return src.id;
  };
  for (const c of cases.cases ?? []) {
    const created = await call(pipeline, createCaseTool.name, { name: c.name, memo: c.memo });
    const caseId = created.case_id as number;
    for (const file of c.sources ?? []) await call(pipeline, addSourceToCaseTool.name, { case_id: caseId, source_id: sourceOf(file) });
    for (const [name, value] of Object.entries(c.attributes ?? {}))
      await call(pipeline, setCaseAttributeTool.name, { case_id: caseId, attribute_name: name, ...attributeArgs(value) });
  }
  for (const [file, attributes] of Object.entries(cases.document_attributes ?? {})) {
    for (const [name, value] of Object.entries(attributes))
      await call(pipeline, setSourceAttributeTool.name, { source_id: sourceOf(file), attribute_name: name, ...attributeArgs(value) });
  }
  const briefingFile = path.join(dir, 'briefing.yaml');
  if (fs.existsSync(briefingFile)) {
    const b = (parse(fs.readFileSync(briefingFile, 'utf8')) as { description?: string; research_questions?: string[]; methodology?: string } | null) ?? {};
    await call(pipeline, updateProjectBriefingTool.name, { description: b.description, research_questions: b.research_questions, methodology: b.methodology });
  }
  return { sources: sourceIds.size, codes: codeIds.size, segments: operations.length };
}
