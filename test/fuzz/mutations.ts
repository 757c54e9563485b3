/**
 * Turning a valid generated argument object into an invalid (or hostile) request: wrong types, missing
 * and unknown properties, out-of-range and edge numbers, negative and out-of-range offsets, unknown ids,
 * unicode edge cases, huge strings and arrays, deeply nested JSON, malformed bodies and JSON text, wrong
 * content types and encodings, unknown tool names, foreign hosts and bad tokens; and byte-level bodies
 * (issue 15): invalid UTF-8, overlong forms, surrogates in CESU-8, truncated sequences, byte-order marks,
 * NUL bytes, lone surrogates (raw bytes and escapes) and duplicated keys, each of which must be refused
 * with 400 INVALID_JSON. An input whose arguments hold a lone surrogate anywhere (the `unicode` and
 * `huge_string` mutations, and the generator's unicode edge cases) is refused the same way: JSON.stringify
 * writes it as a `\udXXX` escape.
 *
 * A mutation is data (`kind` plus three numbers fast-check draws) applied after the ids are resolved, so a
 * run is reproducible from its seed. Some mutations decide the answer by themselves (a bad token is 401
 * UNAUTHORIZED whatever the tool); they say so in `expect`.
 */
import * as nodePath from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { RawBody } from './harness';
import { FUZZ_MAX_WAIT_MS, isIdSchema, POSITION_KEYS, RANGE_PAIRS, UNICODE_EDGES, UNKNOWN_IDS, type JsonSchema } from './schemaArbitrary';

/** Every kind of mutation. */
export const MUTATION_KINDS = [
  'wrong_type',
  'drop_required',
  'extra_property',
  'number_edge',
  'string_edge',
  'huge_string',
  'unknown_id',
  'offset',
  'unicode',
  'deep_nesting',
  'array_edge',
  'huge_array',
  'array_max',
  'args_not_object',
  'body_shape',
  'bad_json',
  'raw_number',
  'content_type',
  'tool_name',
  'headers',
  'auth',
  'bytes',
] as const;
export type MutationKind = (typeof MUTATION_KINDS)[number];

/** How often each kind is drawn, against {@link VALID_WEIGHT} for an unmutated (valid) input. */
export const MUTATION_WEIGHTS: Record<MutationKind, number> = {
  wrong_type: 100,
  drop_required: 50,
  extra_property: 60,
  number_edge: 70,
  string_edge: 60,
  huge_string: 2,
  unknown_id: 70,
  offset: 70,
  unicode: 70,
  deep_nesting: 10,
  array_edge: 30,
  huge_array: 2,
  array_max: 6,
  args_not_object: 15,
  body_shape: 15,
  bad_json: 20,
  raw_number: 15,
  content_type: 15,
  tool_name: 10,
  headers: 10,
  auth: 10,
  bytes: 40,
};
export const VALID_WEIGHT = 380;

/** One mutation: its kind and three numbers that pick where and what. */
export interface Mutation {
  kind: MutationKind;
  a: number;
  b: number;
  c: number;
}

/**
 * A mutation, or null for a valid input (drawn with weight `validWeight` against {@link MUTATION_WEIGHTS}).
 * `only`: draw these kinds alone, and no valid inputs (FUZZ_MUTATIONS=bytes runs the byte-level group).
 */
export function mutationArb(validWeight = VALID_WEIGHT, only?: readonly MutationKind[]): fc.Arbitrary<Mutation | null> {
  const draws = fc.tuple(fc.nat(), fc.nat(), fc.nat());
  const kinds = only && only.length > 0 ? MUTATION_KINDS.filter((k) => only.includes(k)) : MUTATION_KINDS;
  const mutated = kinds.map((kind) => ({ arbitrary: draws.map(([a, b, c]) => ({ kind, a, b, c }) as Mutation), weight: MUTATION_WEIGHTS[kind] }));
  if (only && only.length > 0) return fc.oneof(...mutated);
  return fc.oneof({ arbitrary: fc.constant(null), weight: validWeight }, ...mutated);
}

/**
 * Byte sequences that are not well-formed UTF-8 (Unicode 15, table 3-7) or not allowed raw in a JSON
 * string, put inside a string value of the body by the `bytes` mutation.
 */
export const BAD_STRING_BYTES: readonly { what: string; bytes: number[] }[] = [
  { what: 'byte FF', bytes: [0xff] },
  { what: 'byte FE', bytes: [0xfe] },
  { what: 'stray continuation 80', bytes: [0x80] },
  { what: 'stray continuation BF', bytes: [0x41, 0xbf] },
  { what: 'overlong C0 AF', bytes: [0xc0, 0xaf] },
  { what: 'overlong C1 BF', bytes: [0xc1, 0xbf] },
  { what: 'overlong E0 80 AF', bytes: [0xe0, 0x80, 0xaf] },
  { what: 'overlong E0 9F BF', bytes: [0xe0, 0x9f, 0xbf] },
  { what: 'overlong F0 80 80 AF', bytes: [0xf0, 0x80, 0x80, 0xaf] },
  { what: 'CESU-8 high surrogate ED A0 80', bytes: [0xed, 0xa0, 0x80] },
  { what: 'CESU-8 low surrogate ED BF BF', bytes: [0xed, 0xbf, 0xbf] },
  { what: 'CESU-8 surrogate pair', bytes: [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80] },
  { what: 'truncated C3', bytes: [0xc3] },
  { what: 'truncated E2 82', bytes: [0xe2, 0x82] },
  { what: 'truncated F0 9F 98', bytes: [0xf0, 0x9f, 0x98] },
  { what: 'above U+10FFFF F4 90 80 80', bytes: [0xf4, 0x90, 0x80, 0x80] },
  { what: 'lead F5', bytes: [0xf5, 0x80, 0x80, 0x80] },
  { what: '5-byte form', bytes: [0xf8, 0x88, 0x80, 0x80, 0x80] },
  { what: '6-byte form', bytes: [0xfc, 0x84, 0x80, 0x80, 0x80, 0x80] },
  { what: 'cp1252 e-acute E9', bytes: [0x43, 0x61, 0x66, 0xe9] },
  { what: 'cp1252 quotes 93 94', bytes: [0x93, 0x71, 0x94] },
  { what: 'raw NUL', bytes: [0x00] },
  { what: 'escaped lone high surrogate', bytes: [...Buffer.from('\\ud800')] },
  { what: 'escaped lone high surrogate DBFF', bytes: [...Buffer.from('x\\uDBFFy')] },
  { what: 'escaped lone low surrogate', bytes: [...Buffer.from('\\udc00')] },
  { what: 'escaped reversed pair', bytes: [...Buffer.from('\\udc00\\ud800')] },
  { what: 'escaped two highs', bytes: [...Buffer.from('\\ud83d\\ud83d')] },
  { what: 'escaped pair then a low', bytes: [...Buffer.from('\\ud83d\\ude00\\udfff')] },
];

const BYTES_TOKEN = '__fuzz_bytes_9c1e__';

/** `text` (UTF-8) with the first `"<token>"`'s token replaced by `bytes`. */
function spliceBytes(text: string, token: string, bytes: Buffer): Buffer {
  const buf = Buffer.from(text, 'utf8');
  const at = buf.indexOf(token);
  return Buffer.concat([buf.subarray(0, at), bytes, buf.subarray(at + Buffer.byteLength(token))]);
}

/** A piece of JSON text put into the body as is (deep nesting, number literals JSON.stringify cannot write). */
export class Raw {
  constructor(
    readonly text: string,
    /** what JSON.parse makes of it, when it can be valid at all */
    readonly parsed?: { value: unknown },
  ) {}
}

const TOKEN = '__fuzz_raw_7f3a__';

/** JSON text of `v` with every {@link Raw} written as its text. */
export function serialize(v: unknown, hasRaw: boolean): string {
  if (!hasRaw) return JSON.stringify(v);
  const raws: string[] = [];
  const text = JSON.stringify(v, (_k, val: unknown) => (val instanceof Raw ? `${TOKEN}${raws.push(val.text) - 1}${TOKEN}` : val));
  return text.replace(new RegExp(`"${TOKEN}(\\d+)${TOKEN}"`, 'g'), (_m, i: string) => raws[Number(i)] as string);
}

/** `v` with every {@link Raw} replaced by what JSON.parse makes of it; undefined when one cannot parse to a value. */
export function parsedView(v: unknown): { value: unknown } | undefined {
  if (v instanceof Raw) return v.parsed;
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const x of v) {
      const p = parsedView(x);
      if (!p) return undefined;
      out.push(p.value);
    }
    return { value: out };
  }
  if (v === null || typeof v !== 'object') return { value: v };
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const p = parsedView(x);
    if (!p) return undefined;
    Object.defineProperty(out, k, { value: p.value, enumerable: true, writable: true, configurable: true });
  }
  return { value: out };
}

type PathPart = string | number;

/** A place in an argument object the schema knows about. */
interface Site {
  path: PathPart[];
  key: string;
  schema: JsonSchema;
  present: boolean;
  required: boolean;
}

function sitesOf(schema: JsonSchema, value: unknown, at: PathPart[] = [], out: Site[] = []): Site[] {
  if (schema.type === 'object' && schema.properties && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const [k, s] of Object.entries(schema.properties)) {
      const present = Object.prototype.hasOwnProperty.call(obj, k);
      out.push({ path: [...at, k], key: k, schema: s, present, required: (schema.required ?? []).includes(k) });
      if (present) sitesOf(s, obj[k], [...at, k], out);
    }
  } else if (schema.type === 'array' && schema.items && Array.isArray(value)) {
    const key = String(at[at.length - 1] ?? '');
    value.slice(0, 3).forEach((item, i) => {
      out.push({ path: [...at, i], key, schema: schema.items as JsonSchema, present: true, required: false });
      sitesOf(schema.items as JsonSchema, item, [...at, i], out);
    });
  }
  return out;
}

function typesOf(s: JsonSchema): Set<string> {
  const t = new Set<string>();
  if (s.type) t.add(s.type);
  for (const b of s.anyOf ?? []) for (const x of typesOf(b)) t.add(x);
  if ('const' in s) t.add(jsonType(s.const));
  for (const e of s.enum ?? []) t.add(jsonType(e));
  return t;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function getAt(root: unknown, p: PathPart[]): unknown {
  let cur: unknown = root;
  for (const k of p) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[k as string];
  }
  return cur;
}

/** Sets `value` at `p` in `root` (an own property even for `__proto__`), creating containers on the way. */
function setAt(root: Record<string, unknown>, p: PathPart[], value: unknown): void {
  let cur: Record<string, unknown> = root;
  for (let i = 0; i < p.length - 1; i++) {
    const k = p[i] as string;
    let next = Object.prototype.hasOwnProperty.call(cur, k) ? cur[k] : undefined;
    if (next === null || typeof next !== 'object') {
      next = typeof p[i + 1] === 'number' ? [] : {};
      define(cur, k, next);
    }
    cur = next as Record<string, unknown>;
  }
  define(cur, p[p.length - 1] as string, value);
}

function define(obj: Record<string, unknown>, k: string, value: unknown): void {
  Object.defineProperty(obj, k, { value, enumerable: true, writable: true, configurable: true });
}

function deleteAt(root: Record<string, unknown>, p: PathPart[]): void {
  const parent = getAt(root, p.slice(0, -1));
  if (parent && typeof parent === 'object') delete (parent as Record<string, unknown>)[p[p.length - 1] as string];
}

function pick<T>(list: readonly T[], n: number): T {
  return list[n % list.length] as T;
}

const WRONG_VALUES: readonly unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  '',
  'x',
  '1',
  [],
  [1],
  ['a', 2],
  {},
  { a: 1 },
  { code_id: 1 },
  [null],
  '2024-01-01',
  'true',
];

const NUMBER_EDGES: readonly number[] = [
  -1,
  -0.5,
  0.5,
  1.5,
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31),
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  1e21,
  1e308,
  -1e308,
  5e-324,
  Number.EPSILON,
  0,
  1e-7,
  123456789.123,
];

const STRING_EDGES: readonly string[] = [
  '',
  ' ',
  '0',
  '01',
  '-1',
  '1.5',
  '1e3',
  '0x1F',
  ' 1',
  '1 ',
  '+1',
  '１',
  '١',
  '9007199254740993',
  '999999999999999',
  '1000000000000000',
  'NaN',
  'Infinity',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
];

const EXTRA_KEYS: readonly string[] = [
  'unexpected',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '',
  ' ',
  'CODE_ID',
  'code_id ',
  '\u0000',
  'ключ',
  '😀',
  'arguments',
  'x'.repeat(1000),
];

const CONTENT_TYPES: readonly { type: string | null; expect415: boolean }[] = [
  { type: 'text/plain', expect415: true },
  { type: null, expect415: true },
  { type: 'application/x-www-form-urlencoded', expect415: true },
  { type: 'multipart/form-data; boundary=x', expect415: true },
  { type: 'application/jsonx', expect415: true },
  { type: 'application/json-patch+json', expect415: true },
  { type: 'text/json', expect415: true },
  { type: 'application/json; charset=latin1', expect415: false },
  { type: 'application/json; charset=utf-16', expect415: false },
  { type: 'application/json; charset=utf-32', expect415: false },
  { type: 'application/json; charset="UTF-8"', expect415: false },
  { type: 'APPLICATION/JSON', expect415: false },
  { type: 'application/json; charset=x-unknown', expect415: false },
];

const ENCODINGS: readonly string[] = ['gzip', 'gzip-garbage', 'deflate-garbage', 'br-garbage', 'x-unknown', 'identity', 'gzip, gzip'];

/** A deeply nested JSON text: arrays, objects, or both, `depth` levels. */
export function deepJson(depth: number, shape: number): string {
  switch (shape % 3) {
    case 0:
      return `${'['.repeat(depth)}${']'.repeat(depth)}`;
    case 1:
      return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    default:
      return `${'[{"a":'.repeat(depth)}null${'}]'.repeat(depth)}`;
  }
}

const DEPTHS = [64, 500, 1000, 5000, 20_000, 100_000];
/** Sizes of huge strings (UTF-16 units): mostly 1 MB, sometimes up to 10 MB. */
const HUGE_SIZES = [1_000_000, 1_000_000, 1_000_000, 1_000_000, 1_500_000, 2_000_000, 5_000_000, 10_000_000];

/** A built request and what is known about its answer before sending. */
export interface BuiltRequest {
  path: string;
  headers: Record<string, string>;
  body: RawBody;
  /** the arguments as the server will parse them, when the body is a well-formed `{"arguments": {...}}` (undefined otherwise) */
  parsedArgs?: { value: unknown };
  /** the answer this mutation decides by itself */
  expect?: { status: number; code: string };
  timeoutMs: number;
  /** a short account of the mutation, for failure reports */
  note: string;
}

/** Inputs of {@link buildRequest}. */
export interface BuildInput {
  tool: string;
  schema: JsonSchema;
  /** resolved, valid-by-construction arguments */
  args: Record<string, unknown>;
  mutation: Mutation | null;
  /** the Authorization header of the caller (researcher or agent) */
  authorization: string;
  clientName: string;
  /** code points of each source's text, for offsets past the end */
  lengths: Record<number, number>;
  port: number;
  /** every absolute file path sent lies in this folder (see {@link fencePaths}) */
  fenceRoot: string;
}

/** Argument names that are file paths tools read or write. */
const PATH_KEYS = new Set(['file_path', 'source_path', 'output_path']);

/**
 * Keeps the suite hermetic: an absolute path in a path argument that resolves outside `root` (which no
 * generator makes on purpose, but a mutation of a path could) is moved into `root/fenced/`.
 */
function fencePaths(value: unknown, root: string): void {
  if (value === null || typeof value !== 'object' || value instanceof Raw) return;
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'string' && PATH_KEYS.has(k) && nodePath.isAbsolute(v)) {
      const abs = nodePath.resolve(v);
      if (abs !== root && !abs.startsWith(`${root}${nodePath.sep}`))
        define(value as Record<string, unknown>, k, nodePath.join(root, 'fenced', nodePath.basename(abs)));
    } else fencePaths(v, root);
  }
}

/**
 * The HTTP request for one input: the valid arguments, changed by the mutation. Deterministic in its
 * inputs.
 */
export function buildRequest(input: BuildInput): BuiltRequest {
  const { tool, schema, mutation: m } = input;
  const args: Record<string, unknown> = structuredCloneOwn(input.args);
  fencePaths(args, input.fenceRoot);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    authorization: input.authorization,
    'x-marginalia-client': input.clientName,
    host: `127.0.0.1:${input.port}`,
  };
  let urlPath = `/tools/${tool}`;
  let hasRaw = false;
  let note = m ? m.kind : 'valid';
  let expect: BuiltRequest['expect'];
  // generous: a loaded CI machine must not turn a slow call into a "hang"; a real hang never answers
  let timeoutMs = 60_000;
  const all = sitesOf(schema, args);
  const present = all.filter((s) => s.present);
  const choose = (pred: (s: Site) => boolean, n: number): Site | undefined => {
    const preferred = present.filter(pred);
    const any = all.filter(pred);
    const list = preferred.length > 0 && n % 4 !== 0 ? preferred : any;
    return list.length > 0 ? pick(list, n) : undefined;
  };
  const site = (pred: (s: Site) => boolean, n: number): Site =>
    choose(pred, n) ?? choose(() => true, n) ?? { path: ['unexpected'], key: 'unexpected', schema: {}, present: false, required: false };
  const set = (s: Site, v: unknown, what: string) => {
    // a valid long-poll wait (get_approval_status wait_ms up to 30 000) would only make the fuzz sleep for a
    // decision nobody gives: valid waits are shortened; the invalid ones (negative, over 30 000) stay as they are
    const tamed =
      s.path[s.path.length - 1] === 'wait_ms' && typeof v === 'number' && Number.isInteger(v) && v > FUZZ_MAX_WAIT_MS && v <= 30_000 ? FUZZ_MAX_WAIT_MS : v;
    setAt(args, s.path, tamed);
    note = `${m?.kind} ${s.path.join('.')}=${tamed === v ? what : `${what} (waits ${FUZZ_MAX_WAIT_MS} ms)`}`;
  };
  const isString = (s: Site) => typesOf(s.schema).has('string');
  const isNumeric = (s: Site) => typesOf(s.schema).has('integer') || typesOf(s.schema).has('number');
  const lengthOfSibling = (s: Site) => {
    const sid = Number(getAt(args, [...s.path.slice(0, -1), 'source_id']));
    return input.lengths[sid] ?? 100;
  };
  let body: RawBody | undefined;
  let argsValue: unknown = args;
  let parsedArgs: BuiltRequest['parsedArgs'];
  /** the server may not decode the body as the JSON sent (another charset or encoding): no schema verdict */
  let opaque = false;

  if (m) {
    switch (m.kind) {
      case 'wrong_type': {
        const s = site(() => true, m.a);
        const allowed = typesOf(s.schema);
        const wrong = WRONG_VALUES.filter((v) => !allowed.has(jsonType(v)) && !(allowed.has('number') && jsonType(v) === 'integer'));
        const v = wrong.length > 0 ? pick(wrong, m.b) : pick(WRONG_VALUES, m.b);
        set(s, v, JSON.stringify(v));
        break;
      }
      case 'drop_required': {
        const s = choose((x) => x.required && x.present, m.a);
        if (s) {
          deleteAt(args, s.path);
          note = `drop_required ${s.path.join('.')}`;
        } else {
          define(args, 'unexpected', 1);
          note = 'drop_required (none): extra property unexpected';
        }
        break;
      }
      case 'extra_property': {
        const containers = [[], ...present.filter((s) => s.schema.type === 'object').map((s) => s.path)] as PathPart[][];
        const at = m.c % 3 === 0 ? pick(containers, m.c) : [];
        const k = pick(EXTRA_KEYS, m.a);
        const v = pick(WRONG_VALUES, m.b);
        const target = at.length === 0 ? args : getAt(args, at);
        if (target && typeof target === 'object' && !Array.isArray(target)) define(target as Record<string, unknown>, k, v);
        note = `extra_property ${[...at, k].join('.').slice(0, 40)}=${JSON.stringify(v)}`;
        break;
      }
      case 'number_edge': {
        const s = site((x) => isNumeric(x) || isIdSchema(x.schema), m.a);
        const rel = [s.schema.minimum, s.schema.maximum, s.schema.exclusiveMinimum]
          .filter((x): x is number => typeof x === 'number')
          .flatMap((x) => [x - 1, x + 1, x]);
        const v = pick([...NUMBER_EDGES, ...rel], m.b);
        set(s, v, String(v));
        break;
      }
      case 'string_edge': {
        const s = site((x) => isString(x), m.a);
        const max = s.schema.maxLength ?? s.schema.anyOf?.find((b) => b.type === 'string')?.maxLength;
        const over = max !== undefined && max < 200_000 ? ['x'.repeat(max + 1), '😀'.repeat(Math.ceil((max + 1) / 2))] : [];
        const v = pick([...STRING_EDGES, ...over], m.b);
        set(s, v, v.length > 40 ? `<${v.length} units>` : JSON.stringify(v));
        break;
      }
      case 'huge_string': {
        const s = site((x) => isString(x), m.a);
        const n = pick(HUGE_SIZES, m.b);
        const unit = pick(['x', '😀', 'e\u0301', 'ab\r\n', '\uD800', '\u0000'], m.c);
        // JSON writes a lone surrogate or NUL as a 6-byte escape: at most 1.5 M of them keeps the body near 10 MB
        const units = unit === '\uD800' || unit === '\u0000' ? Math.min(n, 1_500_000) : n;
        const v = unit.repeat(Math.ceil(units / unit.length));
        set(s, v, `<${v.length} units of ${JSON.stringify(unit)}>`);
        timeoutMs = 120_000;
        break;
      }
      case 'unknown_id': {
        const s = site((x) => isIdSchema(x.schema), m.a);
        const v = pick(UNKNOWN_IDS, m.b);
        set(s, v, JSON.stringify(v));
        break;
      }
      case 'offset': {
        const s = site((x) => POSITION_KEYS.has(x.key) || /_ms$|^offset$|^limit$|^max_length$|^k$/.test(x.key), m.a);
        const pair = RANGE_PAIRS.find(([a, b]) => Object.prototype.hasOwnProperty.call(args, a) && Object.prototype.hasOwnProperty.call(args, b));
        if (pair && m.c % 4 === 0) {
          const [a, b] = pair;
          const x = args[a];
          args[a] = args[b];
          args[b] = x;
          note = `offset swap ${a}/${b}`;
          if (m.c % 8 === 0) {
            args[b] = args[a];
            note = `offset empty range ${a}=${b}`;
          }
          break;
        }
        const len = lengthOfSibling(s);
        const v = pick([-1, -100, len, len + 1, len + 1000, 1e9, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 2 ** 31, -(2 ** 31) - 1], m.b);
        set(s, v, String(v));
        break;
      }
      case 'unicode': {
        const s = site((x) => isString(x), m.a);
        const edge = pick(UNICODE_EDGES, m.b);
        const cur = getAt(args, s.path);
        const v = typeof cur === 'string' && m.c % 2 === 0 ? `${cur.slice(0, m.c % (cur.length + 1))}${edge}${cur.slice(m.c % (cur.length + 1))}` : edge;
        set(s, v, JSON.stringify(v).slice(0, 60));
        break;
      }
      case 'deep_nesting': {
        // mostly up to 5,000 levels; 20,000 and 100,000 (beyond JSON.stringify's stack) now and then
        const depth = pick(DEPTHS, m.b % 10 < 8 ? m.b % 4 : m.b);
        const raw = new Raw(deepJson(depth, m.c));
        hasRaw = true;
        if (m.a % 5 === 0) {
          argsValue = raw;
          note = `deep_nesting arguments depth ${depth}`;
        } else
          set(
            site(() => true, m.a),
            raw,
            `<depth ${depth}>`,
          );
        break;
      }
      case 'array_edge': {
        const s = site((x) => x.schema.type === 'array', m.a);
        const items = getAt(args, s.path);
        const first = Array.isArray(items) && items.length > 0 ? items[0] : 1;
        const max = s.schema.maxItems ?? 10;
        const variants: unknown[] = [
          [],
          [[first]],
          [first, 'a', null, {}],
          max <= 10_000 ? Array.from({ length: max + 1 }, () => first) : [first],
          [first, first],
        ];
        const v = pick(variants, m.b);
        set(s, v, Array.isArray(v) ? `<array of ${v.length}>` : String(v));
        break;
      }
      case 'array_max': {
        // as many items as the schema allows (valid when the items are): IN-lists, loops and transactions at their limit
        const s = site((x) => x.schema.type === 'array', m.a);
        const items = getAt(args, s.path);
        const pool = Array.isArray(items) && items.length > 0 ? items : [];
        const n = Math.min(s.schema.maxItems ?? 1000, 100_000);
        const v = pool.length === 0 ? [] : Array.from({ length: n }, (_, i) => structuredCloneOwn(pool[i % pool.length]));
        set(s, v, `<${v.length} items (maxItems ${s.schema.maxItems ?? 'none'})>`);
        timeoutMs = 120_000;
        break;
      }
      case 'huge_array': {
        const s = site((x) => x.schema.type === 'array', m.a);
        const item = pick(['1', '"x"', 'null', '{}', '{"source_id":1,"start_pos":0,"end_pos":1}'], m.c);
        const n = pick(item.length > 4 ? [10_000, 100_000] : [100_000, 300_000, 1_000_000], m.b);
        hasRaw = true;
        set(s, new Raw(`[${`${item},`.repeat(n - 1)}${item}]`), `<raw array of ${n} ${item}>`);
        timeoutMs = 120_000;
        break;
      }
      case 'args_not_object': {
        argsValue = pick([[], [args], 'x', 1, null, true, false, 0], m.a);
        note = `args_not_object ${JSON.stringify(argsValue).slice(0, 40)}`;
        expect = { status: 400, code: 'INVALID_ARGUMENTS' };
        break;
      }
      case 'body_shape': {
        const variants: { text: string; expect?: boolean }[] = [
          { text: '[]', expect: true },
          { text: '"x"', expect: true },
          { text: '1', expect: true },
          { text: 'null', expect: true },
          { text: 'true', expect: true },
          { text: JSON.stringify({ arguments: args, extra: 1 }), expect: true },
          { text: JSON.stringify({ Arguments: args }), expect: true },
          { text: JSON.stringify([{ arguments: args }]), expect: true },
          { text: '{}' },
          { text: `{"arguments":${JSON.stringify(args)},"arguments":{}}`, expect: true },
          { text: '' },
        ];
        const v = pick(variants, m.a);
        body = v.text;
        // a duplicated key is INVALID_JSON (issue 15, item 8), not last-one-wins
        if (v.expect) expect = v.text.includes('},"arguments":') ? { status: 400, code: 'INVALID_JSON' } : { status: 400, code: 'INVALID_ARGUMENTS' };
        note = `body_shape ${v.text.slice(0, 40) || '<empty>'}`;
        break;
      }
      case 'bad_json': {
        const text = serialize({ arguments: args }, false);
        const cut = 1 + (m.b % Math.max(1, text.length - 1));
        const variants: { text: string | Buffer; invalid: boolean; what: string }[] = [
          { text: text.slice(0, cut), invalid: true, what: `truncated at ${cut}` },
          { text: `${text.slice(0, -1)},}`, invalid: true, what: 'trailing comma' },
          { text: text.replace(/"/g, "'"), invalid: text.includes('"'), what: 'single quotes' },
          { text: '{"arguments":{"x":NaN}}', invalid: true, what: 'NaN' },
          { text: `/* comment */${text}`, invalid: true, what: 'comment' },
          { text: `${text}garbage`, invalid: true, what: 'trailing garbage' },
          { text: '{"arguments":{"name":"a\u0001b"}}', invalid: true, what: 'raw control character' },
          { text: '{"arguments":{"name":"\\x41"}}', invalid: true, what: 'bad escape' },
          { text: '{"arguments":{"name":"\\u12"}}', invalid: true, what: 'short unicode escape' },
          { text: `\uFEFF${text}`, invalid: false, what: 'byte-order mark' },
          {
            text: Buffer.concat([Buffer.from('{"arguments":{"name":"'), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('"}}')]),
            invalid: true,
            what: 'invalid UTF-8',
          },
          { text: '{"arguments":{"name":"\\ud800\\udc00\\udc00"}}', invalid: true, what: 'escaped lone surrogate' },
          { text: `  \n\t${text}\n  `, invalid: false, what: 'whitespace around' },
          { text: '{', invalid: true, what: 'one brace' },
        ];
        const v = pick(variants, m.a);
        body = v.text;
        if (v.invalid) expect = { status: 400, code: 'INVALID_JSON' };
        note = `bad_json ${v.what}`;
        break;
      }
      case 'raw_number': {
        const s = site((x) => isNumeric(x) || isIdSchema(x.schema), m.a);
        const lits: [string, number | undefined][] = [
          ['1e400', undefined],
          ['-1e400', undefined],
          ['1.0', 1],
          ['-0', -0],
          ['1E2', 100],
          ['123456789012345678901234567890', Number('123456789012345678901234567890')],
          ['0.1e1', 1],
          ['2e0', 2],
          ['9007199254740993', Number('9007199254740993')],
        ];
        const [text, value] = pick(lits, m.b);
        hasRaw = true;
        // 1e400 parses to Infinity, which no schema accepts
        set(s, new Raw(text, value === undefined ? undefined : { value }), text);
        break;
      }
      case 'content_type': {
        opaque = true;
        if (m.c % 3 === 0) {
          const enc = pick(ENCODINGS, m.a);
          const json = Buffer.from(serialize({ arguments: args }, false));
          headers['content-encoding'] = enc.replace(/-garbage$/, '');
          body = enc === 'gzip' ? gzipSync(json) : enc === 'gzip, gzip' ? gzipSync(gzipSync(json)) : json;
          note = `content_type encoding ${enc}`;
          break;
        }
        const ct = pick(CONTENT_TYPES, m.a);
        if (ct.type === null) delete headers['content-type'];
        else headers['content-type'] = ct.type;
        if (ct.expect415) expect = { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' };
        note = `content_type ${ct.type ?? '<none>'}`;
        break;
      }
      case 'tool_name': {
        const variants: { path: string; unknown: boolean }[] = [
          { path: `/tools/${tool.toUpperCase()}`, unknown: true },
          { path: `/tools/${tool}x`, unknown: true },
          { path: `/tools/${tool}%00`, unknown: true },
          { path: `/tools/${encodeURIComponent(`${tool}😀`)}`, unknown: true },
          { path: '/tools/apply_source_edits', unknown: true },
          { path: '/tools/reconcile_source_text', unknown: true },
          { path: '/tools/__proto__', unknown: true },
          { path: '/tools/constructor', unknown: true },
          { path: '/tools/toString', unknown: true },
          { path: `/tools/${'x'.repeat(5000)}`, unknown: true },
          { path: `/tools/${tool}/extra`, unknown: true },
          { path: `/tools/${tool}/`, unknown: false },
          { path: `/tools/${tool}?x=1&arguments=2`, unknown: false },
          { path: `/tools/%E0%A4%A`, unknown: false },
          { path: `/tools/${tool}%2F..%2F${tool}`, unknown: true },
          { path: `/Tools/${tool}`, unknown: false },
          { path: `//tools/${tool}`, unknown: true },
        ];
        const v = pick(variants, m.a);
        urlPath = v.path;
        if (v.unknown) expect = { status: 404, code: 'TOOL_NOT_FOUND' };
        note = `tool_name ${v.path.slice(0, 60)}`;
        break;
      }
      case 'headers': {
        const variants: { set: Record<string, string>; expect?: { status: number; code: string } }[] = [
          { set: { host: 'evil.example:80' }, expect: { status: 403, code: 'FORBIDDEN_HOST' } },
          { set: { host: `localhost:${input.port + 1}` }, expect: { status: 403, code: 'FORBIDDEN_HOST' } },
          { set: { origin: 'http://evil.example' }, expect: { status: 403, code: 'FORBIDDEN_HOST' } },
          { set: { origin: `http://localhost:${input.port + 1}` }, expect: { status: 403, code: 'FORBIDDEN_HOST' } },
          { set: { origin: 'null' }, expect: { status: 403, code: 'FORBIDDEN_HOST' } },
          { set: { origin: `http://127.0.0.1:${input.port}` } },
          { set: { 'x-marginalia-session': 'no-such-session' }, expect: { status: 401, code: 'SESSION_NOT_FOUND' } },
          { set: { 'x-marginalia-client': 'c'.repeat(8000) } },
          { set: { 'x-marginalia-client-type': 'LOCAL_UI' } },
          { set: { 'x-marginalia-client-type': 'ASSISTANT_A_CLI' } },
          { set: { 'x-marginalia-user': 'u'.repeat(5000) } },
          { set: { 'x-correlation-id': 'c\u00e9'.repeat(100) } },
        ];
        const v = pick(variants, m.a);
        Object.assign(headers, v.set);
        expect = v.expect;
        note = `headers ${Object.entries(v.set)
          .map(([k, x]) => `${k}: ${x.slice(0, 30)}`)
          .join(', ')}`;
        break;
      }
      case 'auth': {
        const variants: { value: string | null; unauthorized: boolean }[] = [
          { value: null, unauthorized: true },
          { value: 'Bearer wrong-token', unauthorized: true },
          { value: 'Bearer ', unauthorized: true },
          { value: 'Basic dXNlcjpwYXNz', unauthorized: true },
          { value: `Bearer ${input.authorization.slice(7, -1)}`, unauthorized: true },
          { value: `bearer ${input.authorization.slice(7)}`, unauthorized: false },
          { value: `Bearer   ${input.authorization.slice(7)}  `, unauthorized: false },
        ];
        const v = pick(variants, m.a);
        if (v.value === null) delete headers.authorization;
        else headers.authorization = v.value;
        if (v.unauthorized) expect = { status: 401, code: 'UNAUTHORIZED' };
        note = `auth ${v.value === null ? '<none>' : v.value.slice(0, 12)}`;
        break;
      }
      case 'bytes': {
        // byte-level bodies (issue 15): every one but a single leading BOM is 400 INVALID_JSON
        const invalidJson = { status: 400, code: 'INVALID_JSON' };
        const firstKey = Object.keys(args)[0];
        const whole: { what: string; body: () => Buffer | string; valid?: boolean }[] = [
          { what: 'one leading UTF-8 BOM (allowed)', body: () => `\uFEFF${serialize({ arguments: args }, false)}`, valid: true },
          { what: 'two leading UTF-8 BOMs', body: () => `\uFEFF\uFEFF${serialize({ arguments: args }, false)}` },
          { what: 'a BOM after whitespace', body: () => ` \uFEFF${serialize({ arguments: args }, false)}` },
          {
            what: 'UTF-16LE with its BOM, no charset',
            body: () => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(serialize({ arguments: args }, false), 'utf16le')]),
          },
          { what: 'UTF-32LE BOM', body: () => Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x00]), Buffer.from(serialize({ arguments: args }, false))]) },
          { what: 'NUL after the body', body: () => Buffer.concat([Buffer.from(serialize({ arguments: args }, false)), Buffer.from([0x00])]) },
          { what: 'NUL before the body', body: () => Buffer.concat([Buffer.from([0x00]), Buffer.from(serialize({ arguments: args }, false))]) },
          { what: 'duplicated "arguments"', body: () => `{"arguments":${serialize(args, false)},"arguments":${serialize(args, false)}}` },
          { what: 'duplicated "arguments" spelled with an escape', body: () => `{"arguments":${serialize(args, false)},"\\u0061rguments":{}}` },
          {
            what: `duplicated argument ${firstKey ?? 'a'}`,
            body: () =>
              firstKey === undefined
                ? '{"arguments":{"a":1,"a":1}}'
                : `{"arguments":${serialize(args, false).slice(0, -1)},${JSON.stringify(firstKey)}:${serialize(args[firstKey], false) ?? 'null'}}}`,
          },
          {
            what: 'duplicated key nested deep',
            body: () => `{"arguments":${serialize({ ...args, zz_nested: { q: [{ r: 1 }] } }, false).replace('{"r":1}', '{"r":1,"s":2,"r":3}')}}`,
          },
        ];
        if (m.a % 3 === 0) {
          const v = pick(whole, m.b);
          body = v.body();
          if (v.valid) {
            const view = parsedView(argsValue);
            if (view && view.value !== null && typeof view.value === 'object') parsedArgs = { value: jsonRoundTrip(view.value, 0) };
          } else expect = invalidJson;
          note = `bytes ${v.what}`;
        } else {
          // a defect inside a string value: a string argument when there is one, else an extra property
          const s = choose((x) => isString(x), m.a);
          const bad = pick(BAD_STRING_BYTES, m.b);
          const target = s ? s.path : ['zz_bytes'];
          const cur = getAt(args, target);
          const keep = typeof cur === 'string' ? cur.slice(0, 40) : '';
          setAt(args, target, `${keep}${BYTES_TOKEN}`);
          body = spliceBytes(serialize({ arguments: args }, false), BYTES_TOKEN, Buffer.from(bad.bytes));
          expect = invalidJson;
          note = `bytes ${bad.what} in ${target.join('.')}`;
        }
        // now and then through express (a gzip body is not the fast path's)
        if (m.c % 4 === 0 && Buffer.isBuffer(body)) {
          headers['content-encoding'] = 'gzip';
          body = gzipSync(body);
          note += ' (gzip, express)';
        } else if (m.c % 4 === 0) {
          headers['content-encoding'] = 'gzip';
          body = gzipSync(Buffer.from(body as string, 'utf8'));
          note += ' (gzip, express)';
        }
        break;
      }
    }
  }

  fencePaths(args, input.fenceRoot);
  if (body === undefined) {
    const envelope = { arguments: argsValue };
    body = serialize(envelope, hasRaw);
    const view = parsedView(argsValue);
    // what the server's JSON.parse sees (undefined properties dropped, -0 kept as 0 by JSON)
    if (!opaque && view && view.value !== null && typeof view.value === 'object' && !Array.isArray(view.value))
      parsedArgs = { value: jsonRoundTrip(view.value, body.length) };
  }
  if (typeof body === 'string' && hasLoneSurrogateEscape(body)) {
    // JSON.stringify writes a lone surrogate as a \udXXX escape, which the server refuses (issue 15) before
    // any schema check. Guards that answer before the body is read (token, Host, Origin, content type) keep
    // their verdict; an unknown tool name may be answered either way (the fast path reads the body first).
    parsedArgs = undefined;
    if (m?.kind === 'tool_name') expect = undefined;
    else if (!opaque && !(expect && BEFORE_BODY_CODES.has(expect.code))) expect = { status: 400, code: 'INVALID_JSON' };
    note += ' (a lone surrogate escape: INVALID_JSON)';
  }
  return { path: urlPath, headers, body, parsedArgs, expect, timeoutMs, note };
}

/** Codes the HTTP guards answer before the body is read. */
const BEFORE_BODY_CODES: ReadonlySet<string> = new Set(['UNAUTHORIZED', 'FORBIDDEN_HOST', 'UNSUPPORTED_MEDIA_TYPE']);

/**
 * True when JSON text holds a `\uXXXX` escape of a lone surrogate (a high one not followed by an escaped low
 * one, or a low one alone). Escaped backslashes are skipped, so `\\ud800` (a backslash, then "ud800") is not one.
 */
export function hasLoneSurrogateEscape(text: string): boolean {
  const hexAt = (i: number) => (/^[0-9a-fA-F]{4}$/.test(text.slice(i, i + 4)) ? parseInt(text.slice(i, i + 4), 16) : -1);
  for (let i = text.indexOf('\\'); i >= 0 && i < text.length;) {
    if (text[i + 1] !== 'u') {
      i = text.indexOf('\\', i + 2);
      continue;
    }
    const c = hexAt(i + 2);
    if (c >= 0xdc00 && c <= 0xdfff) return true;
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text[i + 6] === '\\' && text[i + 7] === 'u' ? hexAt(i + 8) : -1;
      if (d < 0xdc00 || d > 0xdfff) return true;
      i = text.indexOf('\\', i + 12);
    } else i = text.indexOf('\\', i + 6);
  }
  return false;
}

/** A deep copy of plain data that keeps own `__proto__` properties as properties. */
function structuredCloneOwn<T>(v: T): T {
  if (Array.isArray(v)) return v.map(structuredCloneOwn) as T;
  if (v === null || typeof v !== 'object' || v instanceof Raw) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) define(out, k, structuredCloneOwn(x));
  return out as T;
}

/** `v` as JSON.parse(JSON.stringify(v)) gives it back (done for small bodies; big ones are equivalent data already). */
function jsonRoundTrip(v: unknown, size: number): unknown {
  return size < 2_000_000 ? JSON.parse(JSON.stringify(v)) : v;
}
