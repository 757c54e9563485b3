import * as fs from 'node:fs';
import * as path from 'node:path';
import { ToolError, type ErrorCode } from '../../core/errors';
import type { PathPolicy } from '../../core/pathPolicy';
import { codePointLength, sliceCp, toWellFormed } from '../../core/text';
import { MAX_CASE_NAME } from '../../domain/cases';
import type { SourceType } from '../../domain/model';
import type { AttributeType, AttributeValue } from '../../domain/ports';
import type { AnchoringReport } from '../reanchor';
import type { RefiFileInfo } from '../refiQda/refiImport';

/**
 * The import plan: what an importer read from a foreign file, held in memory, before anything is written.
 * An importer only reads (a file, a database) and returns a plan; `applyImportPlan` (applyPlan.ts), the one
 * applier of every format, then writes the whole plan through the domain services in the caller's one
 * transaction, so an import either happens entirely or not at all.
 *
 * Items of a plan refer to each other through {@link PlanRef}s: strings unique within their kind (a
 * foreign id such as `"cid:12"`, or a name), never project ids. Text positions are Unicode code points of
 * the planned source's `text`, half-open `[start_pos, end_pos)`; each importer converts its producer's
 * convention (RQDA and QualCoder count characters, Taguette counts UTF-8 bytes of its HTML's text nodes).
 *
 * Formats that name their items by exchange ids (REFI-QDA's GUIDs) set the optional `guid` fields: the
 * applier then finds an item the project already knows by its GUID first, and stores the GUIDs of what it
 * writes (table exchange_guids) so a later export names them as the file did. Items may also carry the file's
 * creation time (`created_at`, ISO 8601 UTC), kept on what is created. How names that clash are treated is
 * the plan's {@link MergeRules}.
 */

/** A GUID of the file (lower case), or null when the item had no valid one. */
export type ExchangeGuid = string | null;

/** A reference to another item of the same plan. */
export type PlanRef = string;

/** A category to find by name (case-insensitive) or create; `parent` nests it. */
export interface PlannedCategory {
  ref: PlanRef;
  name: string;
  parent: PlanRef | null;
  memo: string | null;
  /** the coder the foreign file names, recorded as the owner; null: the importing actor */
  owner?: string | null;
  guid?: ExchangeGuid;
}

/** A code to find by name (case-insensitive) or create. */
export interface PlannedCode {
  ref: PlanRef;
  name: string;
  /** `#RRGGBB`, or null to take a palette colour no code uses yet ({@link CODE_PALETTE}, see CodeColourPicker) */
  color: string | null;
  memo: string | null;
  category: PlanRef | null;
  owner?: string | null;
  guid?: ExchangeGuid;
  /**
   * set on the code made from a REFI-QDA codable `Code` with children: the ref of the category made from the
   * same element (same GUID, same name); the code takes the name its category got, so the pair stays one element
   */
  twin_of?: PlanRef;
}

/** A source folder to find by name within its parent, or create. */
export interface PlannedFolder {
  ref: PlanRef;
  name: string;
  parent: PlanRef | null;
}

/** A text source. An existing source with the same name and exactly this text is reused; any other name clash fails the import. */
export interface PlannedSource {
  ref: PlanRef;
  name: string;
  /** the text exactly as stored; positions of segments and case ranges count its code points */
  text: string;
  memo: string | null;
  /** where it came from, e.g. `QualCoder: /path/data.qda` */
  origin: string | null;
  folder: PlanRef | null;
  owner?: string | null;
  /**
   * Document attributes (src/domain/sourceAttributes.ts), set in order on the created or reused source; an
   * existing attribute of the same name is overwritten (its type too). Absent or empty: none.
   */
  attributes?: PlannedAttribute[];
  guid?: ExchangeGuid;
  /** the GUID of the note its memo came from */
  note_guid?: ExchangeGuid;
  /** when the file says it was made (ISO 8601 UTC), kept as the created source's creation time */
  created_at?: string | null;
  /** `text` (default), or `pdf` for a PDF whose text representation the file holds */
  type?: 'text' | 'pdf';
  /** the file the text came from (a PDF), or null */
  file_path?: string | null;
  mime?: string | null;
}

/** A source without text: audio, video, image, or a PDF without a text representation (REFI-QDA). */
export interface PlannedMediaSource {
  ref: PlanRef;
  name: string;
  type: Exclude<SourceType, 'text'>;
  memo: string | null;
  origin: string | null;
  /** the media file: extracted from the imported archive, or the external file when found; null when not available */
  file_path: string | null;
  mime: string | null;
  size_bytes: number | null;
  owner: string | null;
  guid: ExchangeGuid;
  created_at: string | null;
  /** the GUID of the note its memo came from */
  note_guid: ExchangeGuid;
  /** its document attributes, typed */
  attributes: PlannedAttribute[];
}

/** A coding: `code` applied to `[start_pos, end_pos)` (code points) of `source`. */
export interface PlannedSegment {
  code: PlanRef;
  source: PlanRef;
  start_pos: number;
  end_pos: number;
  memo: string | null;
  /** 0 to 2 */
  importance: number;
  owner?: string | null;
  /** the coding's GUID */
  guid?: ExchangeGuid;
  /** the GUID of the selection the coding is of */
  selection_guid?: ExchangeGuid;
  /** the GUID of the (first) note its memo came from */
  note_guid?: ExchangeGuid;
  created_at?: string | null;
}

/** A coding of an audio or video source: `code` applied to `[start_ms, end_ms)` (milliseconds) of `source`. */
export interface PlannedAvSegment {
  code: PlanRef;
  source: PlanRef;
  start_ms: number;
  end_ms: number;
  transcript: string | null;
  memo: string | null;
  owner: string | null;
  created_at: string | null;
  guid: ExchangeGuid;
  selection_guid: ExchangeGuid;
  /** the GUID of the (first) note its memo came from */
  note_guid: ExchangeGuid;
}

/** A range `[start_pos, end_pos)` (code points) of a planned source held by a case. */
export interface PlannedCaseRange {
  source: PlanRef;
  start_pos: number;
  end_pos: number;
  /** who made the range and when (kept on the created range) */
  owner?: string | null;
  created_at?: string | null;
  /** the GUID of the selection the range comes from */
  selection_guid?: ExchangeGuid;
}

/** A typed case or document attribute; the value is already of its type (a string for text and ISO 8601 dates). */
export interface PlannedAttribute {
  name: string;
  type: AttributeType;
  value: AttributeValue;
}

/** A case to find by name (case-insensitive) or create, with whole sources, ranges and attributes to add. */
export interface PlannedCase {
  name: string;
  memo: string | null;
  /** sources linked as wholes */
  sources: PlanRef[];
  ranges: PlannedCaseRange[];
  /** set in order; an existing attribute of the same name is overwritten (its type too) */
  attributes: PlannedAttribute[];
  owner?: string | null;
  guid?: ExchangeGuid;
}

/**
 * A coding whose stored quote disagreed with its offsets, or that lies outside its text, named by plan refs:
 * the applier names it in the report's `anchoring` by the source's and code's names as imported
 * (src/exchange/reanchor.ts). Positions are code points.
 */
export interface PlannedAnchoring {
  status: 'reanchored' | 'kept_offsets' | 'unplaceable';
  source: PlanRef;
  /** the code's ref (null when the coding names none) */
  code: PlanRef | null;
  /** the code's name in the file (for codes the import does not create) */
  code_name: string;
  start_pos: number;
  end_pos: number;
  stored_start_pos: number;
  stored_end_pos: number;
  /** the selection's quote, null when it carried none */
  quote: string | null;
}

/**
 * How the applier merges what a plan names twice or leaves unclear; {@link DEFAULT_RULES} unless the plan says.
 * - `same_names`: `merge` (items of one kind with the same name, case-insensitive, are one item; a source name
 *   twice with different texts fails the import), or `keep_apart` (the later item gets its parent's name, or a
 *   number, in brackets: formats whose items are told apart by GUID); names changed are reported in `renamed`.
 * - `unknown_refs`: a coding or case referring to an item the plan does not hold `fail`s the import, or is
 *   `skip`ped and counted (`codings_of_unknown_codes_or_sources`, `case_refs_to_unknown_sources`).
 * - `mistyped_values`: an attribute value not of its type `fail`s the import, or is written `as_text`.
 * - `case_attribute_events`: `per_case` (one case.attributes_set event per case) or `per_value` (one
 *   case.attribute_set event per value: the spec's AttributeSet, as REFI-QDA imports raise them).
 */
export interface MergeRules {
  same_names: 'merge' | 'keep_apart';
  unknown_refs: 'fail' | 'skip';
  mistyped_values: 'fail' | 'as_text';
  case_attribute_events: 'per_case' | 'per_value';
}

/** The rules of the formats whose items are named by name (QualCoder, RQDA, Taguette, CSV, code lists). */
export const DEFAULT_RULES: MergeRules = { same_names: 'merge', unknown_refs: 'fail', mistyped_values: 'fail', case_attribute_events: 'per_case' };

/** Everything one import would write. Categories may come in any order (parents are resolved first). */
export interface ImportPlan {
  /** the import format, e.g. `rqda` */
  format: string;
  /** the absolute path the plan was read from */
  file: string;
  categories: PlannedCategory[];
  codes: PlannedCode[];
  folders: PlannedFolder[];
  sources: PlannedSource[];
  segments: PlannedSegment[];
  cases: PlannedCase[];
  /** what was read but left out, by reason (e.g. `soft_deleted_codings: 3`); reported with the result */
  skipped: Record<string, number>;
  /** human-readable notes about the file (at most a few dozen; counts go into `skipped`) */
  warnings: string[];
  /**
   * codings whose stored quote disagreed with their stored offsets, by what re-anchoring did with them
   * (src/exchange/reanchor.ts); set by importers of formats that store the quote (RQDA, QualCoder)
   */
  anchoring?: AnchoringReport;
  /** the same, by plan refs, to be named as imported (REFI-QDA, whose names the import may change); the report's `anchoring` then always lists */
  quote_anchoring?: PlannedAnchoring[];
  /** sources without text, written after `sources` */
  media_sources?: PlannedMediaSource[];
  /** codings of audio and video sources, written after `segments` */
  av_segments?: PlannedAvSegment[];
  /** the file's coders with their GUIDs (stored so a later export names them as the file did) */
  users?: { guid: string; name: string }[];
  /** the file's variables (attribute names) with their GUIDs */
  variables?: { guid: string; name: string }[];
  /** how to merge; absent: {@link DEFAULT_RULES} */
  rules?: MergeRules;
  /** REFI-QDA's account of the file (producer, offset convention, counts, missing sources), passed on to the report */
  refi?: RefiFileInfo;
}

/** Options an importer may honour (import_data's optional parameters). */
export interface ImportOptions {
  /** csv and analytics_csv: the column holding the case name (default: see each importer) */
  name_column?: string;
  /** called now and then while a large file is read: `done` of `total` units of `unit` (total null when unknown) */
  onProgress?: (p: ImportProgress) => void;
  /**
   * Where further files the imported file refers to may be read from (REFI-QDA's `absolute://` and
   * `relative://` sources): the caller's path policy (src/core/pathPolicy.ts). A reference outside it is
   * treated as missing, with a warning naming the rule. Absent: anywhere.
   */
  paths?: PathPolicy;
  /**
   * refi_qda: all or nothing. True: a source whose text file is missing fails the whole import (IMPORT_FAILED,
   * nothing written). Absent or false: everything else is imported and the report lists the missing sources
   * with the codings that could not be placed.
   */
  strict?: boolean;
  /**
   * Re-anchor codings by their stored quote (src/exchange/reanchor.ts) where the format stores one; default
   * true. false keeps every stored offset unchecked (the bench's baseline; not offered by import_data).
   */
  reanchor?: boolean;
}

/** Progress of a long import step. */
export interface ImportProgress {
  phase: 'read' | 'apply';
  done: number;
  total: number | null;
  /** what `done` counts: `bytes`, `items` */
  unit: 'bytes' | 'items';
}

/**
 * One import format: reads `filePath` (absolute) into a plan, writing nothing.
 * Errors: IMPORT_FAILED (missing, unreadable or malformed file; the message says which and where), or the
 * format's own codes (analytics: ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND, ANALYTICS_NOT_IMPORTED/NO_PROFILES).
 */
export interface Importer {
  format: string;
  /** one line for tool descriptions: what file the format reads */
  description: string;
  /** the file extensions the format's files usually have (lower case, with the dot), for file pickers; not enforced */
  extensions: readonly string[];
  plan(filePath: string, options: ImportOptions): Promise<ImportPlan>;
}

/** An empty plan for `format` read from `file`. */
export function emptyPlan(format: string, file: string): ImportPlan {
  return { format, file, categories: [], codes: [], folders: [], sources: [], segments: [], cases: [], skipped: {}, warnings: [] };
}

/** The cases a database importer plans (QualCoder, RQDA), by the foreign file's case id. */
export class PlannedCases {
  readonly byId = new Map<number, PlannedCase>();
  /** the planned names, lower case */
  private readonly names = new Set<string>();
  constructor(private readonly plan: ImportPlan) {}

  /**
   * Plans case `id` named `rawName` (fitted to the case name rules; `Case <id>` when blank), with no sources,
   * ranges or attributes yet. A name already planned (case-insensitive) is left out and counted in
   * `skipped.duplicate_case_names`.
   */
  add(id: number, rawName: unknown, memo: string | null, owner: string | null): void {
    const name = fitName(rawName, MAX_CASE_NAME, `Case ${id}`);
    if (this.names.has(name.toLowerCase())) {
      skip(this.plan, 'duplicate_case_names');
      return;
    }
    this.names.add(name.toLowerCase());
    const planned: PlannedCase = { name, memo, sources: [], ranges: [], attributes: [], owner };
    this.byId.set(id, planned);
    this.plan.cases.push(planned);
  }
}

/** Adds `n` to `plan.skipped[reason]` (nothing when n is 0). */
export function skip(plan: ImportPlan, reason: string, n = 1): void {
  if (n > 0) plan.skipped[reason] = (plan.skipped[reason] ?? 0) + n;
}

/** Most warnings a plan keeps; further ones are counted in `skipped.more_warnings`. */
export const MAX_WARNINGS = 50;

/** Adds a warning, keeping at most {@link MAX_WARNINGS}. */
export function warn(plan: ImportPlan, message: string): void {
  if (plan.warnings.length < MAX_WARNINGS) plan.warnings.push(message);
  else skip(plan, 'more_warnings');
}

/** The palette imported codes that bring no colour take from (Tableau 20; see domain/codeColours, which picks an unused one). */
export { CODE_PALETTE } from '../../domain/codeColours';

/** `#RRGGBB` in upper case when `raw` is a hex colour (`#abc`, `#aabbcc`, with or without `#`), else null. */
export function normalizeColor(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const s = raw.trim().replace(/^#/, '');
  if (/^[0-9A-Fa-f]{6}$/.test(s)) return `#${s.toUpperCase()}`;
  if (/^[0-9A-Fa-f]{3}$/.test(s))
    return `#${[...s]
      .map((c) => c + c)
      .join('')
      .toUpperCase()}`;
  return null;
}

/**
 * A foreign name made fit for Marginalia's rules (1..`max` code points, no control characters): unpaired
 * surrogates become U+FFFD, control characters and runs of white space one space, then NFC and trim; an
 * overlong name is cut to `max` code points. An empty result becomes `fallback`.
 */
export function fitName(raw: unknown, max: number, fallback: string): string {
  const s = toWellFormed(String(raw ?? ''))
    // eslint-disable-next-line no-control-regex -- replacing control characters is the point
    .replace(/[\u0000-\u001f\u007f\s]+/g, ' ')
    .normalize('NFC')
    .trim();
  if (s === '') return fallback;
  return codePointLength(s) > max ? sliceCp(s, 0, max).trim() : s;
}

/** A memo from a foreign value: null for null, undefined and blank strings, else the string (well-formed). */
export function memoOf(raw: unknown): string | null {
  if (raw === null || raw === undefined) return null;
  const s = toWellFormed(String(raw));
  return s.trim() === '' ? null : s;
}

/**
 * Checks that `filePath` is an absolute path of a readable regular file and returns its size in bytes.
 * Errors: `code` (IMPORT_FAILED unless given) naming the problem: relative path, no such file, a directory, unreadable.
 */
export function checkImportFile(filePath: string, code: ErrorCode = 'IMPORT_FAILED'): number {
  if (!path.isAbsolute(filePath)) throw new ToolError(code, `source_path must be an absolute path (got "${filePath}")`);
  let st: fs.Stats;
  try {
    st = fs.statSync(filePath);
  } catch {
    throw new ToolError(code, `No file at ${filePath}`);
  }
  if (!st.isFile()) throw new ToolError(code, `${filePath} is not a file`);
  try {
    fs.accessSync(filePath, fs.constants.R_OK);
  } catch {
    throw new ToolError(code, `${filePath} cannot be read`);
  }
  return st.size;
}
