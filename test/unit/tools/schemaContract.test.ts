/**
 * The schema contract (issue #15, item 8): for every tool the pipeline lists (`GET /tools`, MCP `tools/list`),
 * the JSON Schema it advertises is the rule that runs. An independent JSON Schema validator (ajv 8, draft
 * 2020-12, counting string lengths in code points as the standard says) is the oracle:
 * - inputs generated from the advertised schema (test/fuzz/schemaArbitrary.ts) that ajv accepts are never
 *   refused by the validation stage (INVALID_ARGUMENTS with details.issues), nor by a domain rule the schema
 *   does not state (INVALID_ARGUMENTS from the tool) apart from the named cross-field rules JSON Schema cannot
 *   express; they may fail otherwise (unknown ids, positions past the end, missing files);
 * - inputs ajv refuses (generated ones, and one valid input broken in exactly one rule: a string one longer
 *   than maxLength or shorter than minLength, a pattern not matched, a required parameter left out, a number
 *   below its minimum or above its maximum, a value of the wrong type, an unknown enum value, an array one
 *   item too long, an unknown parameter) are refused, with a message naming the parameter.
 * Every call runs through the real pipeline on a real sql.js project file (a fresh one per tool).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import type { InvokeOutcome } from '../../../src/agent/pipeline';
import { TOOLS } from '../../../src/tools/registry';
import { requiredAliasPairs } from '../../../src/tools/schemas';
import { resolveRefs, schemaArb, type JsonSchema, type ResolveContext } from '../../fuzz/schemaArbitrary';
import type { FixtureFiles, Pools } from '../../fuzz/serverWorker';
import { openFixture, type Fixture } from '../domain/projectFixture';

/** Generated inputs per tool. */
const RUNS = 14;
const SEED = 150_815;

/**
 * Domain refusals (INVALID_ARGUMENTS from the tool, not the validation stage) that a schema-valid input may
 * meet: rules between two parameters or between a parameter and the project, which JSON Schema cannot state.
 * Each is said in its tool's description.
 */
const CROSS_FIELD_RULES: readonly RegExp[] = [
  /applies to the .* formats? only/, // import_data: name_column / strict with another format
  /not valid FTS4 syntax/, // search_text: the query's syntax
  /no searchable word/, // search_text, search_codes: a query of punctuation only
  /must equal .* when both are given/, // an alias that disagrees with its name
  /has no text and no transcript|not an audio or video source/i, // AV tools on a text source
  /must name two different coders|has no segments|filters\.coder/i, // generate_coder_comparison: two coders, each with codings
  /needs at least 2 distinct case_ids/, // compare_cases: "1" and 1 are one case
  /are not suggested by a pending item/, // respond_to_code_suggestion: the batch's own codes
  /is not a number|is not an ISO 8601 date|is not a boolean/, // set_case_attribute, set_source_attribute: value not of the type given
  /No text segment was coded by/, // generate_coder_comparison: a coder without codings
  /move_codes_to names the category being deleted/, // delete_category: the target is the category itself
  /names exactly one of source_id, folder_id, case_id/, // set_agent_access: one target (a root oneOf is refused by the Anthropic API)
];

const TEXT =
  'The water rota was a shared job. Garden neighbours fixed the shed together; conflict over compost faded.\nSecond paragraph: café and naïve 🌱 tomatoes.';

/** Seeds a fresh project: a text source, codes, a category, a coding, a folder, a case with an attribute. */
async function seed(fx: Fixture): Promise<void> {
  const src = await fx.ok('add_text_source', { name: 'Interview A', content: TEXT });
  const water = await fx.ok('create_code', { name: 'Water', color: '#4E79A7' });
  await fx.ok('create_code', { name: 'Conflict', color: '#E15759' });
  await fx.ok('create_category', { name: 'Place' });
  await fx.ok('apply_code', { code_id: water.code_id, source_id: src.source_id, start_position: 4, end_position: 9 });
  await fx.ok('create_folder', { name: 'Wave 1' });
  const c = await fx.ok('create_case', { name: 'P01' });
  await fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name: 'age', value: 42 });
}

/** The ids and names of the project now, for {@link resolveRefs}. */
async function poolsOf(fx: Fixture): Promise<Pools> {
  const codes = (await fx.ok('list_codes')).codes as { code_id: number; name: string }[];
  const sources = (await fx.ok('list_sources')).sources as { source_id: number; name: string; type: string; length: number }[];
  const categories = (await fx.ok('list_categories')).categories as { category_id: number; name: string }[];
  const folders = (await fx.ok('list_folders')).folders as { folder_id: number }[];
  const cases = (await fx.ok('list_cases')).cases as { case_id: number; name: string }[];
  const segments: number[] = [];
  for (const s of sources)
    segments.push(...((await fx.ok('list_segments_for_source', { source_id: s.source_id })).segments as { segment_id: number }[]).map((x) => x.segment_id));
  const lengths: Record<number, number> = {};
  for (const s of sources) lengths[s.source_id] = s.length;
  return {
    code: codes.map((c) => c.code_id),
    category: categories.map((c) => c.category_id),
    source: sources.map((s) => s.source_id),
    textSource: sources.filter((s) => s.type === 'text').map((s) => s.source_id),
    avSource: [],
    lengths,
    segment: segments,
    av_segment: [],
    folder: folders.map((f) => f.folder_id),
    case: cases.map((c) => c.case_id),
    suggestion: [],
    codeSuggestion: [],
    codingSuggestion: [],
    merge: [],
    batch: [],
    report: [],
    approval: [],
    coders: ['alice'],
    names: [...codes.map((c) => c.name), ...sources.map((s) => s.name), ...cases.map((c) => c.name)],
    attributes: ['age'],
    refs: ['HEAD'],
  };
}

/** Files the generated paths point at, in a folder apart from the project (an export can never hit it). */
function fixtureFiles(root: string): FixtureFiles {
  const inDir = path.join(root, 'in');
  const outDir = path.join(root, 'out');
  const aDir = path.join(root, 'a-folder');
  for (const d of [inDir, outDir, aDir]) fs.mkdirSync(d, { recursive: true });
  const write = (name: string, content: string) => {
    const p = path.join(inDir, name);
    fs.writeFileSync(p, content);
    return p;
  };
  return {
    inputs: {
      code_list: [write('codes.txt', 'Water\nConflict\n  Shed\n')],
      csv: [write('survey.csv', 'name,age\nP01,42\nP02,35\n')],
      analytics_csv: [write('analytics.csv', 'user_pseudo_id,event_count\nu1,3\n')],
      analytics_json: [write('events.ndjson', '{"event_name":"page_view","event_timestamp":"1700000000000000","user_pseudo_id":"u1"}\n')],
      text: [write('transcript.txt', TEXT)],
    },
    outDir,
    aDir,
    missingDir: path.join(root, 'missing'),
    media: [],
    root,
  };
}

/**
 * The reason a schema-valid input was refused as INVALID_ARGUMENTS by a rule the schema does not state, or
 * undefined: a validation-stage refusal (details.issues) is explained only when each issue is one of the
 * {@link CROSS_FIELD_RULES}, a tool's own refusal when its message is.
 */
function unstatedRule(out: InvokeOutcome): string | undefined {
  const env = out.envelope as { success: boolean; error_code?: string; error?: string; details?: { issues?: { message: string }[] } };
  if (env.success || env.error_code !== 'INVALID_ARGUMENTS') return undefined;
  const messages = Array.isArray(env.details?.issues) ? env.details.issues.map((i) => i.message) : [env.error ?? ''];
  const unexplained = messages.filter((m) => !CROSS_FIELD_RULES.some((r) => r.test(m)));
  return unexplained.length > 0 ? `${Array.isArray(env.details?.issues) ? 'validation' : 'the tool'}: ${env.error}` : undefined;
}

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });

/**
 * One way to break exactly one rule of the schema of parameter `name`, or (`valid`) to meet a limit exactly:
 * a string of exactly maxLength characters (also as astral characters, two UTF-16 units each), a number at
 * its minimum or maximum.
 */
interface Mutation {
  rule: string;
  valid?: boolean;
  /** the parameter the refusal must name */
  name: string;
  apply: (base: Record<string, unknown>) => Record<string, unknown>;
}

/** The branches of a property schema (its anyOf, or itself). */
function branches(s: JsonSchema): JsonSchema[] {
  return s.anyOf ? s.anyOf.flatMap(branches) : [s];
}

/**
 * Mutations that break one rule of property `name` (schema `s`) of an object whose required names are
 * `required`; `at` turns the property's new value (or its removal) into a whole input.
 */
function mutationsFor(
  name: string,
  s: JsonSchema,
  required: boolean,
  set: (base: Record<string, unknown>, v: unknown, remove?: boolean) => Record<string, unknown>,
): Mutation[] {
  const out: Mutation[] = [];
  const m = (rule: string, v: unknown, remove = false) => out.push({ rule, name, apply: (b) => set(b, v, remove) });
  const at = (rule: string, v: unknown) => out.push({ rule, name, valid: true, apply: (b) => set(b, v) });
  if (required) m('required parameter left out', undefined, true);
  const bs = branches(s);
  const types = new Set(bs.map((b) => b.type));
  // a value of a type no branch takes
  if (!types.has('object')) m('wrong type (object)', { x: 1 });
  if (!types.has('boolean') && bs.every((b) => b.type !== undefined)) m('wrong type (boolean)', true);
  if (!types.has('string') && bs.every((b) => b.type !== undefined)) m('wrong type (string)', 'not a number');
  if (!types.has('array') && bs.every((b) => b.type !== undefined)) m('wrong type (array)', []);
  for (const b of bs) {
    if (b.type === 'string') {
      if (b.maxLength !== undefined && b.maxLength <= 1_000_000) {
        m(`string of maxLength + 1 (${b.maxLength + 1})`, 'x'.repeat(b.maxLength + 1));
        at(`string of exactly maxLength (${b.maxLength})`, 'x'.repeat(b.maxLength));
        at(`string of exactly maxLength (${b.maxLength}) astral characters`, '🌱'.repeat(b.maxLength));
      }
      if (b.minLength !== undefined && b.minLength > 0) at(`string of exactly minLength (${b.minLength})`, 'x'.repeat(b.minLength));
      if (b.minLength !== undefined && b.minLength > 0) m(`string of minLength - 1 (${b.minLength - 1})`, 'x'.repeat(b.minLength - 1));
      if (b.pattern !== undefined)
        for (const v of ['   ', 'a/b', '\u0001x', 'x'.repeat(3), '0', '#12345G'])
          if (!new RegExp(b.pattern, 'u').test(v)) m(`pattern ${b.pattern} not matched (${JSON.stringify(v)})`, v);
      if (b.enum !== undefined) m('unknown enum value', 'no-such-option');
    }
    if (b.type === 'integer' || b.type === 'number') {
      if (b.minimum !== undefined) m(`number below minimum (${b.minimum - 1})`, b.minimum - 1);
      if (b.minimum !== undefined) at(`number at minimum (${b.minimum})`, b.minimum);
      if (b.maximum !== undefined) at(`number at maximum (${b.maximum})`, b.maximum);
      if (b.exclusiveMinimum !== undefined) m(`number at exclusiveMinimum (${b.exclusiveMinimum})`, b.exclusiveMinimum);
      if (b.exclusiveMinimum === 0 || b.minimum === 0 || b.minimum === 1) m('negative number (-1)', -1);
      if (b.maximum !== undefined && b.maximum < Number.MAX_SAFE_INTEGER) m(`number above maximum (${b.maximum + 1})`, b.maximum + 1);
      if (b.type === 'integer') m('fraction for an integer (1.5)', 1.5);
    }
    if (b.type === 'array') {
      if (b.maxItems !== undefined && b.maxItems <= 5000) m(`array of maxItems + 1 (${b.maxItems + 1})`, 'ARRAY_TOO_LONG');
      if (b.minItems !== undefined && b.minItems > 0) m(`array of minItems - 1 (${b.minItems - 1})`, 'ARRAY_TOO_SHORT');
    }
  }
  return out;
}

/** Every single-rule mutation of a tool's schema (top-level parameters and those of an array's object items). */
function mutationsOf(schema: JsonSchema): Mutation[] {
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const out: Mutation[] = [];
  const setTop = (key: string, s: JsonSchema) => (base: Record<string, unknown>, v: unknown, remove?: boolean) => {
    const next = { ...base };
    if (remove) delete next[key];
    else if (v === 'ARRAY_TOO_LONG' || v === 'ARRAY_TOO_SHORT') {
      const item = Array.isArray(base[key]) && (base[key] as unknown[]).length > 0 ? (base[key] as unknown[])[0] : undefined;
      const n = v === 'ARRAY_TOO_LONG' ? (s.maxItems as number) + 1 : (s.minItems as number) - 1;
      if (item === undefined && n > 0) return base; // no valid item to repeat: the check below skips it
      next[key] = Array.from({ length: n }, () => item);
    } else next[key] = v;
    return next;
  };
  for (const [key, s] of Object.entries(props)) {
    out.push(...mutationsFor(key, s, required.has(key), setTop(key, s)));
    // one level down: the object items of an array parameter (batch_apply_codes operations)
    const items = s.type === 'array' ? s.items : undefined;
    if (items?.type === 'object' && items.properties) {
      const itemRequired = new Set(items.required ?? []);
      for (const [k, is] of Object.entries(items.properties)) {
        const set = (base: Record<string, unknown>, v: unknown, remove?: boolean) => {
          const list = base[key];
          if (!Array.isArray(list) || list.length === 0 || v === 'ARRAY_TOO_LONG' || v === 'ARRAY_TOO_SHORT') return base;
          const first = { ...(list[0] as Record<string, unknown>) };
          if (remove) delete first[k];
          else first[k] = v;
          return { ...base, [key]: [first, ...list.slice(1)] };
        };
        out.push(...mutationsFor(`${key}[0].${k}`, is, itemRequired.has(k), set));
      }
      for (const pair of requiredAliasPairs(items as { not?: unknown })) out.push(aliasMutation(pair, `${key}[0].${pair[0]}`, key));
    }
  }
  for (const pair of requiredAliasPairs(schema as { not?: unknown })) out.push(aliasMutation(pair, pair[0] as string));
  out.push({ rule: 'unknown parameter', name: 'bogus_parameter', apply: (b) => ({ ...b, bogus_parameter: 1 }) });
  return out;
}

/** Leaves out both names of a required alias pair (in the first item of array `inArray` when given). */
function aliasMutation(pair: string[], name: string, inArray?: string): Mutation {
  const drop = (o: Record<string, unknown>) => {
    const next = { ...o };
    for (const n of pair) delete next[n];
    return next;
  };
  return {
    rule: `required ${pair.join(' / ')} left out under both names`,
    name,
    apply: (b) => {
      if (!inArray) return drop(b);
      const list = b[inArray];
      if (!Array.isArray(list) || list.length === 0) return b;
      return { ...b, [inArray]: [drop(list[0] as Record<string, unknown>), ...list.slice(1)] };
    },
  };
}

describe('tools/schema contract: the advertised JSON Schema is the rule that runs', function () {
  this.timeout(120_000);
  const listing = TOOLS.filter((t) => (t.audience ?? 'agents') === 'agents');
  const totals = { valid: 0, invalid: 0, mutations: 0, boundaries: 0 };

  after(() => {
    // the figures of the run, for the report (not an assertion)
    console.log(
      `      schema contract: ${listing.length} tools, ${totals.valid} schema-valid inputs, ${totals.invalid} generated schema-invalid inputs, ${totals.mutations} single-rule mutations, ${totals.boundaries} inputs exactly at a limit`,
    );
  });

  it('no tool schema has anyOf, allOf or oneOf at its root (the Anthropic API refuses such tool lists)', async () => {
    const fx = await openFixture();
    try {
      for (const t of fx.pipeline.listTools()) for (const k of ['anyOf', 'allOf', 'oneOf']) assert.ok(!(k in t.inputSchema), `${t.name} has a top-level ${k}`);
    } finally {
      await fx.close();
    }
  });

  for (const tool of listing) {
    it(`${tool.name}: schema-valid inputs pass validation; each broken rule is refused naming the parameter`, async () => {
      const fx = await openFixture();
      try {
        await seed(fx);
        const schema = fx.pipeline.listTools().find((t) => t.name === tool.name)!.inputSchema as JsonSchema;
        const validate = ajv.compile(schema);
        const rc: ResolveContext = {
          pools: await poolsOf(fx),
          files: fixtureFiles(path.join(fx.dir, 'files')),
          projectPath: path.join(fx.dir, 'files', 'not-the-project.qda'),
        };
        const samples = fc.sample(schemaArb(schema, { tool: tool.name, group: tool.group }), { numRuns: RUNS, seed: SEED });
        let base: Record<string, unknown> | undefined;
        for (const sample of samples) {
          const input = resolveRefs(sample, rc, tool.name) as Record<string, unknown>;
          const valid = validate(input);
          const out = await fx.call(tool.name, input);
          if (valid) {
            totals.valid++;
            base ??= input;
            const why = unstatedRule(out);
            assert.equal(
              why,
              undefined,
              `${tool.name}: a schema-valid input was refused by a rule the schema does not state (${why})\ninput: ${JSON.stringify(input).slice(0, 500)}`,
            );
          } else {
            totals.invalid++;
            assert.equal(
              out.envelope.success,
              false,
              `${tool.name}: ajv refuses ${JSON.stringify(input).slice(0, 300)} (${ajv.errorsText(validate.errors)}) but the server accepted it`,
            );
          }
        }
        assert.ok(base !== undefined, `${tool.name}: none of ${RUNS} generated inputs was schema-valid`);
        for (const mutation of mutationsOf(schema)) {
          const input = mutation.apply(base);
          if (mutation.valid) {
            if (!validate(input)) continue; // the limit met conflicts with another rule (e.g. a pattern)
            totals.boundaries++;
            const out = await fx.call(tool.name, input);
            const why = unstatedRule(out);
            assert.equal(
              why,
              undefined,
              `${tool.name}: ${mutation.rule} of ${mutation.name} is schema-valid but was refused by a rule the schema does not state (${why})`,
            );
            continue;
          }
          if (validate(input)) continue; // the mutation did not apply to this input (e.g. no item to repeat)
          totals.mutations++;
          const out = await fx.call(tool.name, input);
          assert.equal(
            out.envelope.success,
            false,
            `${tool.name}: ${mutation.rule} of ${mutation.name} (ajv: ${ajv.errorsText(validate.errors)}) was accepted`,
          );
          const message = out.envelope.success ? '' : out.envelope.error;
          const param = mutation.name;
          if (out.envelope.success === false && out.envelope.error_code === 'INVALID_ARGUMENTS') {
            assert.ok(message.includes(param), `${tool.name}: ${mutation.rule}: the message does not name ${param}: ${message}`);
            assert.ok(!/Invalid input|Too big|Too small|Unrecognized key/.test(message), `${tool.name}: zod's own wording in: ${message}`);
          }
        }
      } finally {
        await fx.close();
      }
    });
  }
});
