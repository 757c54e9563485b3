import { z } from 'zod';
import { codePointLength } from '../core/text';
import { COLOR_PATTERN, MAX_FOLDER_NAME } from '../domain/rules';

/**
 * Shared zod pieces for tool inputs. Every limit a tool's JSON Schema advertises (`GET /tools`, MCP
 * `tools/list`, docs/reference/tools.md, all from `z.toJSONSchema`) is the rule that runs, checked here once:
 * - string lengths count code points, as JSON Schema's `minLength`/`maxLength` do (draft 2020-12 section
 *   6.3.1: "characters as defined by RFC 8259") and as the domain counts names; zod's own `.max()` counts
 *   UTF-16 units, so tool inputs use {@link text} and {@link nameText} instead of `z.string().max()`;
 * - messages are predicates ("must be ...") that src/tools/argumentErrors.ts puts after the argument's name,
 *   so a refusal reads "code_id must be a positive integer".
 * Ids accept a positive integer or its decimal string (QualCoder-v2 clients send ids as strings); positions
 * are non-negative integers counting code points.
 */

const POSITIVE = 'must be a positive integer';

/** An id: a positive integer or its decimal string (at most 15 digits); refused as "<name> must be a positive integer". */
export function id(what: string) {
  return z
    .union(
      [
        z.number({ error: POSITIVE }).int({ error: POSITIVE }).positive({ error: POSITIVE }),
        z
          .string()
          .regex(/^[1-9][0-9]{0,14}$/, { error: POSITIVE })
          .transform(Number),
      ],
      { error: POSITIVE },
    )
    .describe(`${what} (a positive integer)`);
}

const NON_NEGATIVE = 'must be a non-negative integer (a position in code points)';

/** A text position in code points of the source text: an integer 0..2^53-1. */
export function position(what: string) {
  return z
    .number({ error: NON_NEGATIVE })
    .int({ error: NON_NEGATIVE })
    .min(0, { error: NON_NEGATIVE })
    .max(Number.MAX_SAFE_INTEGER, { error: NON_NEGATIVE })
    .describe(`${what}, in Unicode code points from the start of the source text`);
}

/** A hex colour `#RRGGBB` (the domain's COLOR_PATTERN, which it checks again). */
export const color = z.string().regex(COLOR_PATTERN, 'must be a hex colour #RRGGBB, e.g. #4E79A7').describe('hex colour #RRGGBB, e.g. #4E79A7');

/** An object schema that rejects unknown keys, so a misspelt parameter is an error and not ignored. */
export const args = z.strictObject;

/** The issue of a string outside [min, max] code points, or undefined. */
function lengthIssue(value: string, min: number, max: number): string | undefined {
  const n = codePointLength(value);
  if (n > max) return `must be at most ${max} characters (got ${n})`;
  if (n < min) return min === 1 ? 'must not be empty' : `must be at least ${min} characters (got ${n})`;
  return undefined;
}

/**
 * A string of `min` (default 0) to `max` code points; JSON Schema `minLength`/`maxLength` say the same.
 * Refused as "<name> must be at most N characters (got M)" / "must not be empty".
 */
export function text(max: number, min = 0) {
  return z
    .string()
    .superRefine((v, ctx) => {
      const issue = lengthIssue(v, min, max);
      if (issue) ctx.addIssue({ code: 'custom', message: issue, params: { limit: issue.startsWith('must be at most') ? 'maxLength' : 'minLength' } });
    })
    .meta({ ...(min > 0 ? { minLength: min } : {}), maxLength: max });
}

/**
 * What a name may be (the rule of src/domain/rules.ts `cleanName`, which trims first): after white space at
 * either end, at least one character that is not white space and no control character (U+0000-U+001F,
 * U+007F). ECMA-262 regular-expression syntax, as JSON Schema's `pattern` is; `\s` is exactly the white
 * space `String.prototype.trim` removes (WhiteSpace and LineTerminator).
 */
export const NAME_PATTERN = '^\\s*[^\\s\\u0000-\\u001F\\u007F](?:[^\\u0000-\\u001F\\u007F]*[^\\s\\u0000-\\u001F\\u007F])?\\s*$';
// eslint-disable-next-line no-control-regex -- rejecting control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * A code, category, source, case or attribute name as the domain accepts it: 1 to `max` code points, not
 * blank, no control character; JSON Schema `minLength` 1, `maxLength` max, `pattern` {@link NAME_PATTERN}.
 * `max` is the domain's constant (MAX_CODE_NAME, MAX_SOURCE_NAME, ...), which the domain checks again after
 * trimming and NFC normalisation. Refused (INVALID_ARGUMENTS) as "<name> must be at most 100 characters (got 101)",
 * "must not be empty or only white space", "must not contain control characters".
 */
export function nameText(max: number) {
  return z
    .string()
    .superRefine((v, ctx) => {
      const issue = lengthIssue(v, 1, max);
      if (issue) ctx.addIssue({ code: 'custom', message: issue, params: { limit: issue.startsWith('must be at most') ? 'maxLength' : 'minLength' } });
      else if (v.trim() === '') ctx.addIssue({ code: 'custom', message: 'must not be empty or only white space', params: { limit: 'pattern' } });
      else if (CONTROL.test(v.trim()))
        ctx.addIssue({ code: 'custom', message: 'must not contain control characters (U+0000-U+001F, U+007F)', params: { limit: 'pattern' } });
    })
    .meta({ minLength: 1, maxLength: max, pattern: NAME_PATTERN });
}

/**
 * What a folder name may be (HTTP spec rule 3: 1 to 255 characters, no slash; and, as {@link NAME_PATTERN},
 * not blank and no control character once trimmed), as JSON Schema `pattern`.
 */
export const FOLDER_NAME_PATTERN = '^\\s*[^/\\s\\u0000-\\u001F\\u007F](?:[^/\\u0000-\\u001F\\u007F]*[^/\\s\\u0000-\\u001F\\u007F])?\\s*$';

/**
 * A folder name. The schema advertises the spec's rule (1 to {@link MAX_FOLDER_NAME} code points, no slash,
 * {@link FOLDER_NAME_PATTERN}); the domain (src/domain/rules.ts `cleanFolderName`) enforces it with the
 * spec's own error codes (FOLDER_NOT_CREATED on create, FOLDER_RENAME_FAILED on rename) rather than
 * INVALID_ARGUMENTS, so zod checks only the type here.
 */
export function folderName() {
  return z.string().meta({ minLength: 1, maxLength: MAX_FOLDER_NAME, pattern: FOLDER_NAME_PATTERN });
}

/** Longest memo, in code points. */
export const MAX_MEMO = 100_000;

/** A memo: free text, at most {@link MAX_MEMO} code points; null clears it where a tool says so. */
export const memo = text(MAX_MEMO);

/**
 * The JSON Schema of "each pair `[name, alias]` is given under at least one of its names", without a
 * top-level `anyOf`/`allOf`/`oneOf` (the Anthropic Messages API refuses tool schemas with those at the root,
 * and with them every tool of the list; MCP clients pass our schemas through): a root `not` of "some pair is
 * missing", where "pair missing" is `not: {anyOf: [{required: [name]}, {required: [alias]}]}`.
 */
export function aliasRequirement(pairs: readonly (readonly [string, string])[]): Record<string, unknown> {
  return { not: { anyOf: pairs.map(([name, alias]) => ({ not: { anyOf: [{ required: [name] }, { required: [alias] }] } })) } };
}

/**
 * The pairs of names an {@link aliasRequirement} in `schema` (a tool's JSON Schema) requires, or [] when it
 * has none; for the docs and the schema contract test.
 */
export function requiredAliasPairs(schema: { not?: unknown }): string[][] {
  const groups = (schema.not as { anyOf?: { not?: { anyOf?: { required?: string[] }[] } }[] } | undefined)?.anyOf ?? [];
  return groups.map((g) => (g.not?.anyOf ?? []).flatMap((a) => a.required ?? [])).filter((names) => names.length > 0);
}

/**
 * `schema` (an object of optional properties) where each pair `[name, alias]` is required under either
 * name: the JSON Schema says so ({@link aliasRequirement}), and the check refuses a missing pair as "<name>
 * is required (or its alias <alias>)" and, since JSON Schema cannot compare two properties, an alias that
 * disagrees with its name (said in the tool's description).
 */
export function requiredAliases<T extends z.ZodObject>(schema: T, pairs: readonly (readonly [string, string])[]) {
  return schema
    .superRefine((o, ctx) => {
      const rec = o as Record<string, unknown>;
      for (const [name, alias] of pairs) {
        const a = rec[name];
        const b = rec[alias];
        if (a === undefined && b === undefined) ctx.addIssue({ code: 'custom', path: [name], message: `${name} is required (or its alias ${alias})` });
        else if (a !== undefined && b !== undefined && a !== b)
          ctx.addIssue({ code: 'custom', path: [alias], message: `${alias} must equal ${name} when both are given (got ${String(b)} and ${String(a)})` });
      }
    })
    .meta(aliasRequirement(pairs));
}
