/**
 * Turns zod's validation issues into messages that say what was expected: "code_id must be a positive
 * integer", "name must be at most 100 characters (got 101)", "start_position is required", "unknown
 * parameter "colour"", instead of zod's "Invalid input". Used by the pipeline's validation stage
 * (src/agent/pipeline.ts), so every tool on every surface (HTTP, REST, WebSocket, MCP, gRPC, CLI, LM tools)
 * answers with these messages under the spec's INVALID_ARGUMENTS.
 *
 * Issue shapes: zod 4's `$ZodIssue` (invalid_type, too_big, too_small, invalid_format, not_multiple_of,
 * unrecognized_keys, invalid_union, invalid_key, invalid_element, invalid_value, custom). Messages the
 * schemas set themselves (src/tools/schemas.ts) are predicates starting with "must " and are kept as written.
 */
import type { z } from 'zod';

/** One refused argument, as `details.issues` of an INVALID_ARGUMENTS envelope lists it. */
export interface ArgumentIssue {
  /** the argument's path, dotted (`operations.0.start_position`); '' for the arguments object itself */
  path: string;
  /** the whole sentence, naming the argument: "name must be at most 100 characters (got 101)" */
  message: string;
  /** zod's issue code (invalid_type, too_big, custom, unrecognized_keys, ...) */
  code: string;
}

type Issue = z.core.$ZodIssue;
type PathKey = PropertyKey;

/** `operations[0].start_position`; "arguments" for the root. */
export function argumentName(path: readonly PathKey[]): string {
  if (path.length === 0) return 'arguments';
  let out = '';
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`;
    else out += out === '' ? String(k) : `.${String(k)}`;
  }
  return out;
}

/** The value at `path` in `input`, or undefined when some step is missing. */
function valueAt(input: unknown, path: readonly PathKey[]): unknown {
  let v = input;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(v, k as string)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[k as string];
  }
  return v;
}

/** What a JSON value is, for "(got ...)": null, array, string, number, boolean, object. */
function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a number';
  if (typeof v === 'boolean') return 'a boolean';
  if (typeof v === 'object') return 'an object';
  return typeof v;
}

/**
 * What a branch of a union wanted, as phrases for "must be A, B or C": a type ("a string"), a literal
 * (`0`, `"0"`), or a nested union's own "must be ..." sentence or branches; undefined when the branch
 * refused for another reason (a length, a pattern), which then speaks for itself.
 */
function wantedPhrases(i: Issue): string[] | undefined {
  if (i.code === 'invalid_type') return [expectedPhrase(i.expected)];
  if (i.code === 'invalid_value') return i.values.map((v) => shown(v));
  if (i.code === 'invalid_union') {
    if (i.message.startsWith('must be ')) return [i.message.slice('must be '.length)];
    const nested = i.errors.map((branch) => branch.find((x) => x.path.length === 0));
    const out = nested.map((x) => (x === undefined ? undefined : wantedPhrases(x)));
    return out.every((p) => p !== undefined) ? (out.flat() as string[]) : undefined;
  }
  return undefined;
}

/** Longest quoted string shown in "(got ...)", in code points. */
const SHOWN_STRING = 40;

/**
 * A value as "(got ...)" shows it: a string quoted (cut to {@link SHOWN_STRING} code points), a number,
 * boolean or null as JSON, anything else by its kind ("an object", "an array"). Never serialises a nested
 * value: an argument may be nested 20,000 deep or be megabytes long.
 */
function shown(v: unknown): string {
  if (typeof v === 'string') {
    const cps = [...v.slice(0, SHOWN_STRING * 2)];
    return cps.length > SHOWN_STRING || v.length > SHOWN_STRING * 2 ? `${JSON.stringify(cps.slice(0, SHOWN_STRING).join(''))}...` : JSON.stringify(v);
  }
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  return kindOf(v);
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
  bigint: 'an integer',
  date: 'a date',
};

function expectedPhrase(expected: string): string {
  return EXPECTED[expected] ?? expected;
}

function plural(n: number | bigint, one: string, many: string): string {
  return `${n} ${Number(n) === 1 ? one : many}`;
}

/** The predicate ("must be ...") of one issue at a value, without the argument's name. */
function predicate(issue: Issue, value: unknown): string {
  if (issue.message.startsWith('must ')) return issue.message;
  switch (issue.code) {
    case 'invalid_type':
      return `must be ${expectedPhrase(issue.expected)} (got ${kindOf(value)})`;
    case 'too_big': {
      const max = issue.maximum;
      if (issue.origin === 'string') return `must be at most ${plural(max, 'character', 'characters')}`;
      if (issue.origin === 'array' || issue.origin === 'set') {
        const got = Array.isArray(value) ? ` (got ${value.length})` : '';
        return issue.exact ? `must have exactly ${plural(max, 'item', 'items')}${got}` : `must have at most ${plural(max, 'item', 'items')}${got}`;
      }
      return issue.inclusive === false ? `must be less than ${max}` : `must be at most ${max}`;
    }
    case 'too_small': {
      const min = issue.minimum;
      if (issue.origin === 'string') return Number(min) === 1 ? 'must not be empty' : `must be at least ${plural(min, 'character', 'characters')}`;
      if (issue.origin === 'array' || issue.origin === 'set') {
        const got = Array.isArray(value) ? ` (got ${value.length})` : '';
        return issue.exact ? `must have exactly ${plural(min, 'item', 'items')}${got}` : `must have at least ${plural(min, 'item', 'items')}${got}`;
      }
      return issue.inclusive === false ? `must be greater than ${min}` : `must be at least ${min}`;
    }
    case 'invalid_format':
      return issue.format === 'regex' && issue.pattern ? `must match the pattern ${issue.pattern}` : `must be a valid ${issue.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'invalid_value':
      return `must be ${issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`}${value === undefined ? '' : ` (got ${shown(value)})`}`;
    case 'invalid_union': {
      // every branch refused the type: list what each wanted; otherwise the first branch's own reason
      const roots = issue.errors.map((branch) => branch.find((i) => i.path.length === 0));
      const phrases = roots.map((i) => (i === undefined ? undefined : wantedPhrases(i)));
      if (phrases.every((p) => p !== undefined)) {
        // each branch refused the value's type or wanted a literal (`0`, `null`): list them all
        const wanted = [...new Set(phrases.flat() as string[])];
        const list = wanted.length <= 2 ? wanted.join(' or ') : `${wanted.slice(0, -1).join(', ')} or ${wanted[wanted.length - 1]}`;
        return `must be ${list} (got ${kindOf(value)})`;
      }
      const first = roots.find((i) => i !== undefined && i.code !== 'invalid_type');
      return first ? predicate(first, value) : 'does not match any accepted form';
    }
    case 'invalid_key':
      return `has an invalid key: ${issue.issues.map((i) => predicate(i, undefined)).join('; ')}`;
    case 'invalid_element':
      return `has an invalid entry ${JSON.stringify(String(issue.key))}: ${issue.issues.map((i) => predicate(i, undefined)).join('; ')}`;
    case 'unrecognized_keys':
      return `has unknown ${issue.keys.length === 1 ? 'key' : 'keys'} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    case 'custom':
      return issue.message;
    default:
      return (issue as { message: string }).message;
  }
}

/**
 * One sentence for one issue, naming the argument: "<name> is required" when the argument is missing,
 * "unknown parameter "x"" for a key the tool does not take, "<name> <predicate>" otherwise. A schema's own
 * message that already names its argument ("start_position is required", "confirm must be true: ...") is
 * kept as written.
 */
export function describeIssue(issue: Issue, input: unknown): ArgumentIssue {
  const path = issue.path as PathKey[];
  const name = argumentName(path);
  const value = valueAt(input, path);
  const present =
    path.length === 0
      ? input !== undefined
      : valueAt(input, path.slice(0, -1)) !== undefined && hasKey(valueAt(input, path.slice(0, -1)), path[path.length - 1]!);
  const last = path.length > 0 ? String(path[path.length - 1]) : undefined;
  let message: string;
  if (last !== undefined && issue.message.startsWith(`${last} `)) {
    // a schema's own sentence about its argument ("confirm must be true: erasure cannot be undone")
    message = path.length > 1 ? `${argumentName(path.slice(0, -1))}.${issue.message}` : issue.message;
  } else if (issue.code === 'unrecognized_keys' && path.length === 0) {
    message = `unknown ${issue.keys.length === 1 ? 'parameter' : 'parameters'} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')} (a misspelt parameter is refused, not ignored)`;
  } else if (!present && (issue.code === 'invalid_type' || issue.code === 'invalid_union' || (issue.code === 'custom' && issue.message.startsWith('must ')))) {
    message = `${name} is required`;
  } else if (issue.code === 'custom' && !issue.message.startsWith('must ')) {
    message = `${name}: ${issue.message}`;
  } else {
    message = `${name} ${predicate(issue, value)}`;
  }
  return { path: path.map(String).join('.'), message, code: issue.code };
}

function hasKey(obj: unknown, key: PathKey): boolean {
  return obj !== null && typeof obj === 'object' && Object.prototype.hasOwnProperty.call(obj, key as string);
}

/**
 * Every issue of a failed parse as a sentence, and the whole refusal as one message: "Invalid arguments for
 * `tool`: name must be at most 100 characters (got 101); start_position is required".
 */
export function describeInvalidArguments(tool: string, issues: readonly Issue[], input: unknown): { message: string; issues: ArgumentIssue[] } {
  const described = issues.map((i) => describeIssue(i, input));
  return { message: `Invalid arguments for ${tool}: ${described.map((i) => i.message).join('; ')}`, issues: described };
}
