import { ToolError, type ErrorCode } from '../core/errors';
import { codePointLength, toWellFormed } from '../core/text';

/** Longest code or category name, in code points (agent-context spec, create_code schema). */
export const MAX_CODE_NAME = 100;
/** Longest folder name, in code points (HTTP spec, rule 3). */
export const MAX_FOLDER_NAME = 255;
/** Longest source name, in code points. */
export const MAX_SOURCE_NAME = 255;
/** A code colour: `#RRGGBB`. */
export const COLOR_PATTERN = /^#[0-9A-Fa-f]{6}$/;

/**
 * The key under which code, category and source names are compared for uniqueness: NFC-normalised,
 * trimmed and lower-cased (Unicode-aware), so "Trust" and "trust " collide.
 */
export function nameKey(name: string): string {
  return name.normalize('NFC').trim().toLowerCase();
}

/**
 * A trimmed, NFC-normalised name of 1..max code points (unpaired surrogates replaced by U+FFFD, which UTF-8
 * storage cannot hold), or `code` thrown with a message naming `what`.
 */
export function cleanName(name: string, max: number, what: string, code: ErrorCode): string {
  const n = toWellFormed(name).normalize('NFC').trim();
  const len = codePointLength(n);
  if (len === 0) throw new ToolError(code, `The ${what} name must not be empty`);
  if (len > max) throw new ToolError(code, `The ${what} name is ${len} characters; at most ${max} are allowed`);
  // eslint-disable-next-line no-control-regex -- rejecting control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(n)) throw new ToolError(code, `The ${what} name must not contain control characters`);
  return n;
}

/**
 * A valid folder name (HTTP spec rule 3: 1 to 255 characters, no slash), or `code` thrown
 * (FOLDER_NOT_CREATED on create, FOLDER_RENAME_FAILED on rename).
 */
export function cleanFolderName(name: string, code: ErrorCode): string {
  const n = cleanName(name, MAX_FOLDER_NAME, 'folder', code);
  if (n.includes('/')) throw new ToolError(code, `The folder name "${n}" must not contain a slash`);
  return n;
}
