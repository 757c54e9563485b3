/**
 * fast-check arbitraries generated from a tool's JSON Schema (`toJsonSchema` of its zod input, the schema
 * `GET /tools` lists): objects (required and optional properties), strings with their lengths and patterns,
 * integers and numbers with their bounds, enums, consts, arrays with their item counts, `anyOf`.
 *
 * No maintained library turns zod v4 or JSON Schema into fast-check 4 arbitraries (zod-fast-check needs
 * zod 3 and fast-check < 4; json-schema-fast-check is built on fast-check 1), so this is a small walker.
 *
 * What the schema cannot say comes from the property's name: ids (`code_id`, `source_ids`, ...) become
 * {@link Ref}s that {@link resolveRefs} turns into ids that exist in the project right before the call (or,
 * sometimes, valid-looking ids that do not); text positions are fractions of the named source's length;
 * file paths point at fixture files inside the fuzz folder; names sometimes repeat existing ones.
 */
import * as path from 'node:path';
import fc from 'fast-check';
import type { FixtureFiles, Pools } from './serverWorker';

/** The subset of JSON Schema (draft 2020-12, as zod writes it) the tools use. */
export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
}

/** Kinds of ids the pools hold. */
export type IdKind =
  | 'code'
  | 'category'
  | 'source'
  | 'textSource'
  | 'avSource'
  | 'segment'
  | 'av_segment'
  | 'folder'
  | 'case'
  | 'suggestion'
  | 'codeSuggestion'
  | 'codingSuggestion'
  | 'merge'
  | 'batch'
  | 'report';

/**
 * A placeholder in a generated value, resolved against the project right before sending (the project
 * changes as the run goes on, so ids cannot be fixed when the value is generated).
 * - `id`: the `a`-th id of pool `kind` (as a decimal string when `b` is 1), or an unknown id when the pool is empty;
 * - `pos`: a text position at fraction `a` (0..1) of the sibling `source_id`'s length;
 * - `inPath` / `outPath`: a fixture file to read / a path to write, matching the sibling `format` when `b` is 0;
 * - `name`, `coder`, `approval`, `ref`, `attr`: the `a`-th existing name, coder, request id, snapshot ref, case attribute.
 */
export class Ref {
  constructor(
    readonly type: 'id' | 'pos' | 'inPath' | 'outPath' | 'name' | 'coder' | 'approval' | 'ref' | 'attr',
    readonly a: number,
    readonly b = 0,
    readonly kind?: IdKind,
  ) {}
}

/** Where the generator is: the tool and its group (some names mean different things in different groups). */
export interface GenContext {
  tool: string;
  group: string;
}

/** True for the schema of an id: a positive integer or its decimal string. */
export function isIdSchema(s: JsonSchema | undefined): boolean {
  return (
    !!s?.anyOf &&
    s.anyOf.length === 2 &&
    s.anyOf.some((b) => b.type === 'integer' && b.exclusiveMinimum === 0) &&
    s.anyOf.some((b) => b.type === 'string' && b.pattern === '^[1-9][0-9]{0,14}$')
  );
}

/** Unknown ids that look valid (positive, at most 15 digits). */
/**
 * The longest get_approval_status `wait_ms` a fuzz input keeps (milliseconds): a valid long poll (up to 30 000)
 * only waits for a decision nobody gives here. Generated waits stay at or under it; mutations shorten valid ones.
 */
export const FUZZ_MAX_WAIT_MS = 25;

export const UNKNOWN_IDS: readonly (number | string)[] = [999_999, 424_242, 2_147_483_647, 4_294_967_296, Number.MAX_SAFE_INTEGER, '999999999999999', '31337'];

/** Strings a tool should survive wherever text goes: surrogates, astral characters, combining marks, bidi marks, NUL, line ends, injections. */
export const UNICODE_EDGES: readonly string[] = [
  '\uD800',
  '\uDFFF',
  'a\uD800b',
  '\uDC00\uD800',
  'x\uD83D',
  '😀',
  '👩‍👩‍👧‍👦',
  '🏳️‍🌈',
  '𝕨𝕒𝕥𝕖𝕣',
  '\u{10FFFF}',
  'e\u0301',
  'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o',
  '\u0301\u0301\u0301',
  '\u202Eevil\u202C',
  'שלום \u200Fمرحبا',
  '\u200E\u200F\u061C',
  '\u200B',
  '\u2028\u2029',
  '\u0000',
  'a\u0000b',
  '\r\n',
  'line one\r\nline two\r\n',
  '\r',
  '\t\v\f',
  '\uFEFF',
  '\uFFFE\uFFFF',
  'ﷺ',
  'İstanbul ß ǅ',
  '１２３',
  '١٢٣',
  'Ⅻ',
  '<script>alert(1)</script>',
  "'; DROP TABLE codes; --",
  '%s%n%x',
  '${x}{{x}}',
  '\\',
  '"',
  ' ',
  '   ',
  'null',
  '__proto__',
  'constructor',
];

const WORDS = [
  'water',
  'garden',
  'council',
  'shed',
  'tomatoes',
  'rota',
  'community',
  'trust',
  'conflict',
  'harvest',
  'neighbours',
  'compost',
  'café',
  'naïve',
  'Grandparents',
  'volunteers',
  'hose',
  'weekly',
  'belonging',
  'Ärger',
  '水やり',
  'שלום',
  'مرحبا',
  '🌱',
  '🍅',
];
/** Search syntax pieces (FTS4: phrases, prefixes, OR, AND, NOT, NEAR/n, parentheses, column filters). */
const QUERY_PIECES = [
  '"water rota"',
  'wat*',
  'OR',
  'AND',
  'NOT',
  'NEAR/2',
  'NEAR',
  '(',
  ')',
  '-',
  '*',
  '"',
  'content:water',
  '^water',
  '""',
  'a*b',
  "'",
  ':',
  'NEAR/-1',
  'NEAR/99999999999',
];

/** `s` cut or padded to a length (UTF-16 units, as zod counts) within [min, max]. */
function fit(s: string, min: number, max: number): string {
  let out = s.length > max ? s.slice(0, max) : s;
  if (out.length < min) out = out.padEnd(min, 'x');
  return out;
}

let textCore: fc.Arbitrary<string> | undefined;
const textCores = new Map<string, fc.Arbitrary<string>>();

/** Text within [min, max] UTF-16 units: words, arbitrary graphemes, code points, or unicode edge cases. */
export function textArb(min = 0, max = 200, extra: readonly string[] = []): fc.Arbitrary<string> {
  // built once: fc.string builds a large table per call
  textCore ??= fc.oneof(
    { arbitrary: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }).map((w) => w.join(' ')), weight: 6 },
    { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 2 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 12 }), weight: 1 },
    { arbitrary: fc.constantFrom(...UNICODE_EDGES), weight: 2 },
    {
      arbitrary: fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...UNICODE_EDGES), fc.constantFrom(...WORDS)).map(([a, b, c]) => `${a}${b}${c}`),
      weight: 2,
    },
  );
  let core = textCore;
  if (extra.length > 0) {
    const key = extra.join('\u0000');
    core =
      textCores.get(key) ??
      fc.oneof(
        textCore,
        fc.array(fc.constantFrom(...WORDS, ...extra), { minLength: 1, maxLength: 5 }).map((w) => w.join(' ')),
      );
    textCores.set(key, core);
  }
  return core.map((s) => fit(s, min, max));
}

/** An integer in [min, max], biased towards small values and the bounds. */
export function intArb(min: number, max: number): fc.Arbitrary<number> {
  const lo = Math.max(min, Number.MIN_SAFE_INTEGER);
  const hi = Math.min(max, Number.MAX_SAFE_INTEGER);
  return fc.oneof(
    { arbitrary: fc.integer({ min: lo, max: Math.min(hi, Math.max(lo, 0) + 100) }), weight: 6 },
    { arbitrary: fc.integer({ min: lo, max: hi }), weight: 2 },
    { arbitrary: fc.constantFrom(lo, hi, Math.min(hi, lo + 1)), weight: 1 },
  );
}

/** A double in the schema's range. */
function numberArb(s: JsonSchema): fc.Arbitrary<number> {
  const min = s.minimum ?? s.exclusiveMinimum ?? -1e6;
  const max = s.maximum ?? s.exclusiveMaximum ?? 1e6;
  return fc.double({
    min,
    max,
    noNaN: true,
    noDefaultInfinity: true,
    minExcluded: s.exclusiveMinimum !== undefined,
    maxExcluded: s.exclusiveMaximum !== undefined,
  });
}

const ID_KEYS: Record<string, IdKind> = {
  code_id: 'code',
  source_code_id: 'code',
  target_code_id: 'code',
  code_ids: 'code',
  selected_code_ids: 'code',
  source_id: 'source',
  source_ids: 'source',
  segment_id: 'segment',
  folder_id: 'folder',
  category_id: 'category',
  case_id: 'case',
  case_ids: 'case',
  suggestion_id: 'suggestion',
  merge_suggestion_id: 'merge',
  batch_id: 'batch',
  suggestion_batch_id: 'batch',
  report_id: 'report',
};

/** Keys whose value is a text position (code points of the sibling source). */
export const POSITION_KEYS = new Set(['start_pos', 'end_pos', 'start_position', 'end_position', 'start', 'end']);
/** A position and its alias (apply_code and batch operations: start_position/start_pos; add_segment_to_case: start/start_pos). */
const ALIAS_PAIRS: readonly [string, string][] = [
  ['start_position', 'start_pos'],
  ['end_position', 'end_pos'],
  ['start', 'start_pos'],
  ['end', 'end_pos'],
];

/**
 * Most callers name a position once: keeps one name of each alias pair (variant `v`: the first or the
 * second name; v 18 both with the same value; v 19 as generated, which may disagree), adding it when the
 * record left both out.
 */
function dealias(o: Record<string, unknown>, pairs: readonly [string, string][], v: number): Record<string, unknown> {
  if (v === 19) return o;
  const out = { ...o };
  for (const [a, b] of pairs) {
    if (!(a in out) && !(b in out)) out[v % 2 === 0 ? a : b] = new Ref('pos', (v % 10) / 10, 0);
    const value = a in out ? out[a] : out[b];
    if (v === 18) {
      out[a] = value;
      out[b] = value;
    } else if (v % 2 === 0) {
      delete out[b];
      out[a] = value;
    } else {
      delete out[a];
      out[b] = value;
    }
  }
  return out;
}

/** Start/end key pairs of a range. */
export const RANGE_PAIRS: readonly [string, string][] = [
  ['start_pos', 'end_pos'],
  ['start_position', 'end_position'],
  ['start', 'end'],
  ['start_ms', 'end_ms'],
];

const EXPORT_FORMATS = ['codebook', 'html', 'segments_csv', 'refi_qda', 'qdc'];
const IMPORT_FORMATS = ['code_list', 'csv', 'analytics_csv', 'analytics_json', 'refi_qda', 'rqda', 'qualcoder', 'taguette'];
const REPORT_FORMATS = ['csv', 'json', 'html'];

function idKindFor(key: string, ctx: GenContext): IdKind | undefined {
  if (key === 'suggestion_id') return ctx.tool === 'approve_suggestion' ? 'codeSuggestion' : ctx.tool.includes('coding') ? 'codingSuggestion' : 'suggestion';
  if (key === 'parent_id') return ctx.group === 'folder' ? 'folder' : 'category';
  if (key === 'segment_id' && (ctx.group === 'av' || ctx.tool === 'remove_av_segment')) return 'av_segment';
  if (key === 'source_id' && ctx.group === 'av') return 'avSource';
  return ID_KEYS[key];
}

/** An id of pool `kind`, as a number or (sometimes) its decimal string, or (sometimes) an unknown id. */
function idArb(kind: IdKind): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: fc.tuple(fc.nat(), fc.nat(9)).map(([a, s]) => new Ref('id', a, s === 0 ? 1 : 0, kind)), weight: 9 },
    { arbitrary: fc.constantFrom(...UNKNOWN_IDS), weight: 1 },
  );
}

/** A hint from the property's name, or undefined to follow the schema alone. */
function hintFor(key: string | undefined, s: JsonSchema, ctx: GenContext): fc.Arbitrary<unknown> | undefined {
  if (key === undefined) return undefined;
  const strMax = s.maxLength ?? 200;
  const strMin = s.minLength ?? 0;
  const kind = idKindFor(key, ctx);
  if (kind && isIdSchema(s)) return idArb(kind);
  if (kind && s.type === 'array' && s.items && isIdSchema(s.items)) {
    return fc.array(idArb(kind === 'source' && ctx.group === 'av' ? 'avSource' : kind), {
      minLength: s.minItems ?? 0,
      maxLength: Math.max(s.minItems ?? 0, Math.min(s.maxItems ?? 4, 4)),
    });
  }
  if (POSITION_KEYS.has(key) && s.type === 'integer')
    return fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: -1, max: 1 })).map(([r, d]) => new Ref('pos', r, d));
  // get_approval_status's long poll waits for a decision nobody gives here: short waits exercise it without
  // spending up to 30 s per valid call (the group took 21 minutes with the schema's full range)
  if (key === 'wait_ms' && s.type === 'integer') return fc.constantFrom(0, 1, FUZZ_MAX_WAIT_MS);
  if ((key === 'start_ms' || key === 'end_ms') && s.type === 'integer')
    return fc.oneof(fc.integer({ min: 0, max: 20_000 }), fc.constantFrom(0, 1000, 4500, 10_000, 14_000));
  if (s.type === 'string') {
    switch (key) {
      case 'file_path':
      case 'source_path':
        // half the time a file that suits the call (b 0), else any fixture, a missing file or a folder
        return fc.tuple(fc.nat(), fc.nat(3)).map(([a, b]) => new Ref('inPath', a, b <= 1 ? 0 : b));
      case 'output_path':
        return fc.tuple(fc.nat(), fc.nat(3)).map(([a, b]) => new Ref('outPath', a, b <= 1 ? 0 : b));
      case 'format':
        return fc.oneof(
          {
            arbitrary: fc.constantFrom(...(ctx.tool === 'export_data' ? EXPORT_FORMATS : ctx.tool === 'import_data' ? IMPORT_FORMATS : REPORT_FORMATS)),
            weight: 8,
          },
          { arbitrary: textArb(strMin, strMax), weight: 1 },
        );
      case 'name':
      case 'new_name':
        return fc.oneof(
          { arbitrary: textArb(strMin, strMax), weight: 6 },
          { arbitrary: fc.tuple(fc.nat(), fc.nat(4)).map(([a, b]) => new Ref('name', a, b)), weight: 2 },
        );
      case 'attribute_name':
        return fc.oneof(
          textArb(strMin, strMax),
          fc.nat().map((a) => new Ref('attr', a)),
        );
      case 'coder':
        return fc.oneof(
          textArb(strMin, strMax),
          fc.nat().map((a) => new Ref('coder', a)),
        );
      case 'request_id':
        return fc.oneof(
          { arbitrary: fc.nat().map((a) => new Ref('approval', a)), weight: 3 },
          { arbitrary: fc.uuid(), weight: 1 },
          { arbitrary: textArb(strMin, strMax), weight: 1 },
        );
      case 'ref':
      case 'from_ref':
      case 'to_ref':
        // unknown refs cost a git call each, like real ones: mostly real refs
        return fc.oneof(
          { arbitrary: fc.nat().map((a) => new Ref('ref', a)), weight: 8 },
          { arbitrary: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._/~^@{}-]*$/, { maxLength: 40 }), weight: 1 },
          { arbitrary: fc.constantFrom('HEAD', 'HEAD~1', 'HEAD~99', 'deadbeef', 'main', 'HEAD@{1}', 'a..b', '@{-1}'), weight: 1 },
        );
      case 'query':
      case 'search_text':
      case 'use_case':
        return fc.oneof(
          { arbitrary: textArb(Math.max(strMin, 1), strMax), weight: 3 },
          {
            arbitrary: fc.array(fc.constantFrom(...WORDS, ...QUERY_PIECES), { minLength: 1, maxLength: 5 }).map((w) => fit(w.join(' '), strMin, strMax)),
            weight: 3,
          },
        );
      case 'path':
        return fc.oneof(
          textArb(strMin, strMax),
          fc.nat().map((a) => new Ref('inPath', a, 3)),
        );
      default:
        return undefined;
    }
  }
  if (key === 'coder_ids' && s.type === 'array') {
    return fc.array(fc.oneof({ arbitrary: fc.nat().map((a) => new Ref('coder', a)), weight: 4 }, { arbitrary: textArb(1, 40), weight: 1 }), {
      minLength: s.minItems ?? 0,
      maxLength: s.maxItems ?? 3,
    });
  }
  return undefined;
}

/**
 * An arbitrary of values valid against `schema` (up to the placeholders, see {@link Ref}), for the property
 * `key` of tool `ctx.tool`.
 */
export function schemaArb(schema: JsonSchema, ctx: GenContext, key?: string): fc.Arbitrary<unknown> {
  const hint = hintFor(key, schema, ctx);
  if (hint) return hint;
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => schemaArb(s, ctx, key)));
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (schema.type) {
    case 'object': {
      const props = schema.properties ?? {};
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of Object.entries(props)) model[k] = schemaArb(s, ctx, k);
      const record = fc.record(model, { requiredKeys: (schema.required ?? []).filter((k) => k in props), noNullPrototype: true });
      const pairs = ALIAS_PAIRS.filter(([a, b]) => a in props && b in props);
      if (pairs.length === 0) return record;
      return fc.tuple(record, fc.nat(19)).map(([o, v]) => dealias(o, pairs, v));
    }
    case 'array': {
      const min = schema.minItems ?? 0;
      return fc.array(schemaArb(schema.items ?? {}, ctx, key), { minLength: min, maxLength: Math.max(min, Math.min(schema.maxItems ?? 4, 4)) });
    }
    case 'string':
      if (schema.pattern) {
        const max = schema.maxLength ?? 40;
        return fc
          .stringMatching(new RegExp(schema.pattern), { maxLength: Math.min(max, 40) })
          .filter((s) => s.length >= (schema.minLength ?? 0) && s.length <= max);
      }
      return textArb(schema.minLength ?? 0, schema.maxLength ?? 200);
    case 'integer':
      return intArb(
        schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : Number.MIN_SAFE_INTEGER),
        schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : Number.MAX_SAFE_INTEGER),
      );
    case 'number':
      return numberArb(schema);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** What {@link resolveRefs} resolves against. */
export interface ResolveContext {
  pools: Pools;
  files: FixtureFiles;
  /** the open project's file (an export must never replace it) */
  projectPath: string;
}

const IMPORT_INPUTS: Record<string, string> = {
  code_list: 'code_list',
  csv: 'csv',
  analytics_csv: 'analytics_csv',
  analytics_json: 'analytics_json',
  refi_qda: 'refi_qda',
  rqda: 'sqlite',
  qualcoder: 'sqlite',
  taguette: 'sqlite',
};
const EXPORT_EXT: Record<string, string> = {
  codebook: '.txt',
  html: '.html',
  segments_csv: '.csv',
  refi_qda: '.qdpx',
  qdc: '.qdc',
  csv: '.csv',
  json: '.json',
};

function pick<T>(list: readonly T[], a: number): T | undefined {
  return list.length === 0 ? undefined : list[a % list.length];
}

function resolveId(ref: Ref, pools: Pools): number | string {
  const kind = ref.kind as IdKind;
  const list: number[] = kind === 'segment' && ref.a % 10 === 9 ? pools.av_segment : (pools[kind] as number[]);
  const id = pick(list, ref.a);
  if (id === undefined) return pick(UNKNOWN_IDS, ref.a) as number | string;
  return ref.b === 1 ? String(id) : id;
}

function allInputs(files: FixtureFiles): string[] {
  return Object.values(files.inputs).flat();
}

function resolveInPath(ref: Ref, format: unknown, rc: ResolveContext, tool: string): string {
  const f = rc.files;
  if (ref.b === 0 && typeof format === 'string' && Object.prototype.hasOwnProperty.call(IMPORT_INPUTS, format)) {
    const list = f.inputs[IMPORT_INPUTS[format] as string] ?? [];
    const p = pick(list, ref.a);
    if (p) return p;
  }
  if (ref.b === 0 && (tool === 'import_file_source' || tool === 'import_source')) {
    return pick([...(f.inputs.text ?? []), ...f.media, ...(f.inputs.code_list ?? [])], ref.a) as string;
  }
  if (ref.b === 0 && tool === 'import_analytics') return pick(f.inputs.analytics_json ?? [], ref.a) as string;
  const odd = [
    ...allInputs(f),
    ...f.media,
    path.join(f.root, 'in', 'no-such-file.txt'),
    path.join(f.missingDir, 'x.qdpx'),
    'relative/path.txt',
    'codes.txt',
    f.aDir,
    `${path.join(f.root, 'in')}${path.sep}`,
    path.join(f.root, 'in', '..', 'in', 'codes.txt'),
    rc.projectPath,
    `${rc.projectPath}-journal`,
    path.join(f.root, 'in', 'nul\u0000byte.txt'),
    path.join(f.root, 'in', '😀.txt'),
    '',
  ];
  return pick(odd, ref.a) as string;
}

function resolveOutPath(ref: Ref, format: unknown, rc: ResolveContext): string {
  const f = rc.files;
  const ext = typeof format === 'string' && Object.prototype.hasOwnProperty.call(EXPORT_EXT, format) ? (EXPORT_EXT[format] as string) : '.txt';
  if (ref.b === 0) return path.join(f.outDir, `export-${ref.a % 7}${ext}`);
  const odd = [
    path.join(f.outDir, `export-${ref.a % 7}.wrong`),
    path.join(f.outDir, `NO-EXT`),
    path.join(f.outDir, `upper${ext.toUpperCase()}`),
    path.join(f.missingDir, `x${ext}`),
    `relative${ext}`,
    f.aDir,
    f.outDir,
    rc.projectPath,
    `${rc.projectPath}-journal`,
    path.join(path.dirname(rc.projectPath), '.marginalia', `x${ext}`),
    path.join(f.outDir, 'node_modules', `x${ext}`),
    path.join(f.outDir, `nul\u0000byte${ext}`),
    path.join(f.outDir, `😀 ünïcode${ext}`),
    path.join(f.outDir, `${'long'.repeat(80)}${ext}`),
    ...f.media,
    (pick(f.inputs.code_list ?? [], ref.a) as string) ?? path.join(f.outDir, 'x.txt'),
  ];
  return pick(odd, ref.a) as string;
}

/**
 * Replaces every {@link Ref} in `value` (a generated argument object) with what it stands for now. Objects
 * are resolved children first, then their positions and paths, which depend on siblings (`source_id`,
 * `format`). Returns plain JSON-able data.
 */
export function resolveRefs(value: unknown, rc: ResolveContext, tool: string): unknown {
  if (value instanceof Ref) return resolveLeaf(value, rc, tool, {});
  if (Array.isArray(value)) return value.map((v) => resolveRefs(v, rc, tool));
  if (value === null || typeof value !== 'object') return value;
  // a copy: generated values are never changed in place
  const src = { ...(value as Record<string, unknown>) };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(src))
    if (!(v instanceof Ref) || v.type === 'id' || v.type === 'name' || v.type === 'coder' || v.type === 'approval' || v.type === 'ref' || v.type === 'attr')
      out[k] = resolveRefs(v, rc, tool);
  // ranges: start at the smaller fraction, end at the larger (a generated pair is mostly a valid range)
  for (const [s, e] of RANGE_PAIRS) {
    const a = src[s];
    const b = src[e];
    if (a instanceof Ref && b instanceof Ref && a.type === 'pos' && b.type === 'pos' && a.a > b.a) {
      src[s] = b;
      src[e] = a;
    }
  }
  for (const [k, v] of Object.entries(src)) if (!(k in out)) out[k] = resolveLeaf(v as Ref, rc, tool, out);
  for (const [s, e] of RANGE_PAIRS) {
    const a = out[s];
    const b = out[e];
    if (typeof a === 'number' && typeof b === 'number' && src[s] instanceof Ref && src[e] instanceof Ref && b <= a) out[e] = a + 1;
  }
  return out;
}

function resolveLeaf(ref: Ref, rc: ResolveContext, tool: string, siblings: Record<string, unknown>): unknown {
  const p = rc.pools;
  switch (ref.type) {
    case 'id':
      return resolveId(ref, p);
    case 'pos': {
      const sid = Number(siblings.source_id);
      const len = Number.isFinite(sid) && p.lengths[sid] !== undefined ? (p.lengths[sid] as number) : 2000;
      return Math.max(0, Math.floor(ref.a * len) + ref.b);
    }
    case 'inPath':
      return resolveInPath(ref, siblings.format, rc, tool);
    case 'outPath':
      return resolveOutPath(ref, siblings.format, rc);
    case 'name': {
      const n = pick(p.names, ref.a) ?? 'Water';
      // the same name as the store compares it: other case, spaces around, decomposed accents
      return [n, n.toUpperCase(), ` ${n} `, n.normalize('NFD'), `${n}\u200B`][ref.b % 5];
    }
    case 'coder':
      return pick(p.coders, ref.a) ?? 'coder-a';
    case 'approval':
      return pick(p.approval, ref.a) ?? '00000000-0000-4000-8000-000000000000';
    case 'ref':
      return pick(p.refs, ref.a) ?? 'HEAD';
    case 'attr':
      return pick(p.attributes, ref.a) ?? 'age';
  }
}
