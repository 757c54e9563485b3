import { z } from 'zod';

/**
 * Shared zod pieces for tool inputs. Ids accept a positive integer or its decimal string (QualCoder-v2
 * clients send ids as strings); positions are non-negative integers counting code points.
 */
export function id(what: string) {
  return z
    .union([z.number().int().positive(), z.string().regex(/^[1-9][0-9]{0,14}$/).transform(Number)])
    .describe(`${what} (a positive integer)`);
}

/** A text position in code points of the source text. */
export function position(what: string) {
  return z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).describe(`${what}, in Unicode code points from the start of the source text`);
}

/** A hex colour `#RRGGBB`. */
export const color = z.string().regex(/^#[0-9A-Fa-f]{6}$/, 'must be a hex colour #RRGGBB').describe('hex colour #RRGGBB, e.g. #4E79A7');

/** An object schema that rejects unknown keys, so a misspelt parameter is an error and not ignored. */
export const args = z.strictObject;

/** A memo: free text, at most 100,000 characters; null clears it where a tool says so. */
export const memo = z.string().max(100_000);
