/**
 * REFI-QDA import: a `.qdpx` (zip with `project.qde` and a sources folder), a bare `.qde` (its sources found
 * beside it) or a `.qdc` codebook, read into an import plan (../importers/plan.ts) that refiApply.ts writes.
 * Sources: REFI-QDA 1.5 (../shared/corpus/refi-qda/schemas/REFI-QDA-1-5.pdf) and Project.xsd; the producers'
 * deviations observed in ../shared/notes/corpus.md ("REFI-QDA .qdpx: structure observed", "ATLAS.ti 26
 * exports").
 *
 * Reading rules:
 * - The XML must be well-formed and its root `Project` in `urn:QDA-XML:project:1.0` or `CodeBook` in
 *   `urn:QDA-XML:codebook:1.0`, exactly (a file with `urn:QDA-XML:codebook:1:0` is refused: IMPORT_FAILED).
 * - In a `.qdpx`, `project.qde` (any case) at the root; failing that, the one `*.qde` at the root (ATLAS.ti 26
 *   names it after the project; a warning says so); several: IMPORT_FAILED. The sources folder is matched
 *   case-insensitively (`sources/` per the standard, `Sources/` from NVivo) and may be missing. A path without
 *   a scheme (qc writes `plainTextPath="sources/x.txt"`) is looked for in the archive, from its root and from its
 *   sources folder, before the disk (`locate`).
 * - Source texts: UTF-8 (or UTF-16LE with its mark); exactly one leading byte-order mark is the file's signature
 *   and is dropped, a second one is the text's first character and kept ({@link decodeText}).
 * - A text source whose text file is missing is left out with its codings, listed in `refi.missing_sources`
 *   (each selection with its codes' names) and counted; everything else is imported. `strict: true`
 *   (ImportOptions) refuses the whole file instead (IMPORT_FAILED, as before).
 * - GUIDs compare case-insensitively, braces dropped (src/domain/exchangeIds.ts).
 * - Codebook: a `Code` with child codes, or with `isCodable="false"`, becomes a category (nesting as in the
 *   file); a codable `Code` becomes a code, and a codable `Code` with children becomes both: a category and,
 *   inside it, a code of the same name (both keep the file's GUID), so codings of the parent are kept and the
 *   export writes the pair back as one codable `Code`. `Description` and the notes a `Code` refers to become
 *   the memo (of the code, or of the category when the `Code` is not codable).
 * - Text positions are converted from the producer's convention to code points (offsets.ts). Each `Coding` of
 *   a `PlainTextSelection` becomes a segment; a `Coding` of a whole text source covers all its text. Its coder
 *   is the coding's `creatingUser` (else the selection's), its time the coding's `creationDateTime` (else the
 *   selection's; a time without a zone is read as UTC); its memo the selection's `Description` (ATLAS.ti
 *   writes selection memos there), then the notes of the selection and of the coding.
 * - A selection's `name` (ATLAS.ti, QualCoder and qc write the quoted text there) or `Description` that is a
 *   plausible quote is checked against the text at the offsets; when they differ the selection is re-anchored
 *   at the quote (../reanchor.ts) and reported in `refi.anchoring` ({@link anchorSelection}). A selection
 *   outside its text is left out with a warning naming the selection, its codes and its source.
 * - `AudioSelection` / `VideoSelection` codings become AV segments (`begin`/`end` in milliseconds), the
 *   selection's `Description` their transcript. Embedded media files are extracted beside the imported file
 *   into `<file name>.media/`; external ones (`absolute://`, `relative://` against `basePath`) are referred to
 *   where they are, when found.
 * - Cases: `Description` -> memo, `SourceRef` -> whole sources, `SelectionRef` to a text selection -> a case
 *   range, `VariableValue` -> typed attributes (Text -> text, Boolean -> boolean, Integer and Float -> number,
 *   Date and DateTime -> date). The `VariableValue`s of a source (`TextSource`, `PDFSource`, ...) become its
 *   document attributes, typed the same way (src/domain/sourceAttributes.ts).
 * - Left out, counted in the plan's `skipped` (REFI-QDA section 7 asks importers to say what they drop):
 *   picture and PDF region selections, transcripts and their selections, selections of zero length or outside
 *   their text, codings of unknown or non-codable codes, case `CodeRef`s, sets, links, graphs, notes attached
 *   to nothing, the project's own description.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import JSZip from 'jszip';
import { isToolError, ToolError } from '../../core/errors';
import type { PathPolicy } from '../../core/pathPolicy';
import { codePointLength, toWellFormed } from '../../core/text';
import { isIsoDate } from '../../domain/cases';
import { normalizeGuid } from '../../domain/exchangeIds';
import type { SourceType } from '../../domain/model';
import type { AttributeType, AttributeValue } from '../../domain/ports';
import type { ImportOptions, ImportPlan, Importer, PlannedAttribute, PlannedCase, PlannedCaseRange, PlannedCategory, PlannedCode, PlannedSegment, PlannedSource } from '../importers/plan';
import { checkImportFile, emptyPlan, memoOf, normalizeColor, skip, warn } from '../importers/plan';
import { OffsetMap } from '../../core/offsets';
import { QuoteAnchorer, type AnchorResult } from '../reanchor';
import { offsetConventionOf, positionConverter, type OffsetConvention } from './offsets';
import { REFI_CODEBOOK_NS, REFI_PROJECT_NS } from './refiExport';

// ----- the plan ---------------------------------------------------------------------------------------------

/** What a REFI item keeps besides the common plan fields: the file's GUID, when it had a valid one. */
interface Guided {
  guid: string | null;
}

/** When and by whom a REFI item was made (`creationDateTime`, ISO 8601 UTC; null when the file does not say). */
interface Stamped {
  created_at: string | null;
}

/** A category of a REFI plan. */
export type RefiCategory = PlannedCategory & Guided;
/**
 * A code of a REFI plan. `twin_of` is set on the code made from a codable `Code` with children: the ref of the
 * category made from the same element (same GUID, same name), so the pair is written back as one `Code`.
 */
export type RefiCode = PlannedCode & Guided & { twin_of?: string };
/** A source with text (a `TextSource`, or a `PDFSource` with its text `Representation`). */
export type RefiTextSource = PlannedSource & Guided & Stamped & { type: 'text' | 'pdf'; file_path: string | null; mime: string | null; note_guid: string | null };
/** A coding of a text selection; `guid` is the coding's GUID, `selection_guid` the selection's. */
export type RefiSegment = PlannedSegment & Stamped & { guid: string | null; selection_guid: string | null; note_guid: string | null };
/** A case range, from a `SelectionRef`. */
export type RefiCaseRange = PlannedCaseRange & Stamped & { owner: string | null; selection_guid: string | null };
/** A case of a REFI plan. */
export type RefiCase = Omit<PlannedCase, 'ranges'> & Guided & { ranges: RefiCaseRange[] };

/** A source without text: audio, video, image, or a PDF without a text representation. */
export interface RefiMediaSource extends Guided, Stamped {
  ref: string;
  name: string;
  type: Exclude<SourceType, 'text'>;
  memo: string | null;
  origin: string | null;
  /** the media file: extracted from the zip, or the external file when found; null when not available */
  file_path: string | null;
  mime: string | null;
  size_bytes: number | null;
  owner: string | null;
  /** the GUID of the note its memo came from */
  note_guid: string | null;
  /** its document attributes (the source's `VariableValue`s), typed */
  attributes: PlannedAttribute[];
}

/** A coding of an audio or video selection: `[start_ms, end_ms)` in milliseconds. */
export interface RefiAvSegment extends Stamped {
  code: string;
  source: string;
  start_ms: number;
  end_ms: number;
  transcript: string | null;
  memo: string | null;
  owner: string | null;
  guid: string | null;
  selection_guid: string | null;
  /** the GUID of the (first) note its memo came from */
  note_guid: string | null;
}

/** What the REFI file itself holds, counted as it says it (for the report and for checks against the file). */
export interface RefiFileCounts {
  users: number;
  /** every `Code` element, nested ones included */
  codes: number;
  sources: number;
  /** `PlainTextSelection` elements */
  text_selections: number;
  /** `Coding` elements of text selections and text sources */
  text_codings: number;
  /** `AudioSelection` and `VideoSelection` elements */
  av_selections: number;
  cases: number;
  variables: number;
  notes: number;
}

/** A coded selection of a source whose text is missing: where the file put it and which codes it carries. */
export interface RefiUnplacedSelection {
  /** the selection's GUID; null for a coding of the whole source (or a selection without one) */
  selection_guid: string | null;
  /** positions as the file wrote them (its producer's unit, not converted: there is no text to convert them in); null for a whole-source coding */
  start_position: number | null;
  end_position: number | null;
  /** the names of the codes applied (`unknown code <guid>` for a code the codebook does not hold) */
  codes: string[];
}

/** A text source that was not imported because its text is missing, with the codings that could not be placed. */
export interface RefiMissingSource {
  /** the source's name in the file */
  source: string;
  guid: string | null;
  /** where its text was looked for (the archive entry or file), or why there is none */
  where: string;
  /** true when the file names a text file that is not there (what `strict` refuses); false when the source names no text at all */
  file_missing: boolean;
  selections: RefiUnplacedSelection[];
}

/**
 * A coding whose selection carried a quote that disagreed with its offsets, or that lies outside its text: what
 * became of it (../reanchor.ts). Positions are code points (converted from the producer's unit); `source` is the
 * plan's source ref and `code` the code's GUID (null when the coding names none), named in the report by
 * refiApply.ts.
 */
export interface RefiAnchoring {
  status: 'reanchored' | 'kept_offsets' | 'unplaceable';
  source: string;
  code: string | null;
  /** the code's name in the file (for codes the import does not create) */
  code_name: string;
  start_pos: number;
  end_pos: number;
  stored_start_pos: number;
  stored_end_pos: number;
  /** the selection's quote (its name or Description), null when it carried none */
  quote: string | null;
}

/** The plan of a REFI-QDA import: the common plan, with GUIDs and times, plus what only REFI carries. */
export interface RefiImportPlan extends ImportPlan {
  categories: RefiCategory[];
  codes: RefiCode[];
  sources: RefiTextSource[];
  segments: RefiSegment[];
  cases: PlannedCase[];
  refi: {
    /** the `origin` attribute: which tool wrote the file */
    producer: string | null;
    /** how the file counted text positions (converted to code points in this plan) */
    offset_convention: OffsetConvention;
    /** `project` for `.qdpx`/`.qde`, `codebook` for `.qdc` */
    kind: 'project' | 'codebook';
    file_counts: RefiFileCounts;
    /** the file's users, by GUID */
    users: { guid: string; name: string }[];
    /** the file's variables (case attributes by name), by GUID */
    variables: { guid: string; name: string }[];
    /** the same cases as `cases`, with GUIDs and stamped ranges (refiApply.ts writes these) */
    cases: RefiCase[];
    media_sources: RefiMediaSource[];
    av_segments: RefiAvSegment[];
    /** where embedded media files were extracted, or null */
    media_dir: string | null;
    /** text sources whose text is missing (not imported), each with the codings that could not be placed */
    missing_sources: RefiMissingSource[];
    /** codings moved to their quote, kept at offsets their quote contradicts, or outside their text */
    anchoring: RefiAnchoring[];
  };
}

/** True when `plan` came from the REFI-QDA importer. */
export function isRefiPlan(plan: ImportPlan): plan is RefiImportPlan {
  return (plan as Partial<RefiImportPlan>).refi !== undefined;
}

// ----- XML access --------------------------------------------------------------------------------------------

type Node = Record<string, unknown>;

/** Elements that may repeat (parsed as arrays wherever they occur). */
const REPEATED = new Set([
  'User',
  'Code',
  'Variable',
  'Case',
  'CodeRef',
  'VariableValue',
  'SourceRef',
  'SelectionRef',
  'TextSource',
  'PictureSource',
  'PDFSource',
  'AudioSource',
  'VideoSource',
  'PlainTextSelection',
  'PictureSelection',
  'PDFSelection',
  'AudioSelection',
  'VideoSelection',
  'Transcript',
  'TranscriptSelection',
  'SyncPoint',
  'Coding',
  'NoteRef',
  'Note',
  'Link',
  'Set',
  'Graph',
  'MemberCode',
  'MemberSource',
  'MemberNote',
  'Vertex',
  'Edge',
]);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  processEntities: true,
  htmlEntities: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  isArray: (name) => REPEATED.has(name),
});

function list(node: unknown, name: string): Node[] {
  if (!node || typeof node !== 'object') return [];
  const v = (node as Node)[name];
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]).map((x) => (typeof x === 'object' && x !== null ? (x as Node) : { '#text': String(x) }));
}

function child(node: unknown, name: string): Node | undefined {
  return list(node, name)[0];
}

function attr(node: Node | undefined, name: string): string | null {
  const v = node?.[`@${name}`];
  return typeof v === 'string' ? v : null;
}

/** The text content of child element `name` (null when absent). */
function textOf(node: Node | undefined, name: string): string | null {
  if (!node) return null;
  const v = node[name];
  if (v === undefined || v === null) return null;
  const first = Array.isArray(v) ? v[0] : v;
  if (typeof first === 'string') return first;
  if (first && typeof first === 'object') {
    const t = (first as Node)['#text'];
    return typeof t === 'string' ? t : t === undefined ? '' : String(t);
  }
  return String(first);
}

/** The local name and namespace of a document's root element. */
function rootOf(xml: string): { local: string; ns: string | null } {
  const body = xml.replace(/^\uFEFF/, '').replace(/<\?[\s\S]*?\?>/g, '').replace(/<!--[\s\S]*?-->/g, '').replace(/<!DOCTYPE[^>]*>/i, '');
  const m = /<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)((?:\s+[^\s=>/]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*\/?>/.exec(body);
  if (!m) return { local: '', ns: null };
  const prefix = m[1] ? m[1].slice(0, -1) : null;
  const attrs = m[3] ?? '';
  const want = prefix ? `xmlns:${prefix}` : 'xmlns';
  const re = /([^\s=]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
  let ns: string | null = null;
  for (let a = re.exec(attrs); a; a = re.exec(attrs)) if (a[1] === want) ns = a[2] ?? a[3] ?? null;
  return { local: m[2] as string, ns };
}

// ----- reading the container -------------------------------------------------------------------------------

/** The XML document and where its source files are. */
interface Container {
  xml: string;
  zip: JSZip | null;
  /** zip entries by lower-case path */
  entries: Map<string, JSZip.JSZipObject>;
  /** the directory of a bare `.qde` / `.qdc` (sources are looked for beside it) */
  dir: string;
  /** where referenced files may be read from (ImportOptions.paths); absent: anywhere */
  paths?: PathPolicy;
}

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];

/**
 * `bytes` decoded with `encoding`, one leading byte-order mark (the encoding's signature) dropped and every
 * further U+FEFF kept as text. (`TextDecoder` without `ignoreBOM` drops a leading mark by itself, so dropping
 * another one after it would remove a character of the text.)
 */
function decodeDroppingOneBom(bytes: Uint8Array, encoding: 'utf-8' | 'utf-16le' | 'utf-16be'): string {
  const s = new TextDecoder(encoding, { ignoreBOM: true }).decode(bytes);
  return s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
}

/** Decodes XML bytes: UTF-8 (a byte-order mark dropped), or UTF-16 with its byte-order mark. */
function decodeXml(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decodeDroppingOneBom(bytes, 'utf-16le');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decodeDroppingOneBom(bytes, 'utf-16be');
  return decodeDroppingOneBom(bytes, 'utf-8');
}

async function openContainer(file: string, plan: ImportPlan): Promise<Container> {
  let bytes: Uint8Array;
  try {
    bytes = await fs.readFile(file);
  } catch (e) {
    throw new ToolError('IMPORT_FAILED', `${file} cannot be read: ${(e as Error).message}`);
  }
  if (bytes.length === 0) throw new ToolError('IMPORT_FAILED', `${file} is empty`);
  const dir = path.dirname(file);
  if (!ZIP_MAGIC.every((b, i) => bytes[i] === b)) return { xml: decodeXml(bytes), zip: null, entries: new Map(), dir };
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(bytes);
  } catch (e) {
    throw new ToolError('IMPORT_FAILED', `${file} is not a readable zip (.qdpx): ${(e as Error).message}`);
  }
  const entries = new Map<string, JSZip.JSZipObject>();
  zip.forEach((rel, entry) => {
    if (!entry.dir) entries.set(rel.replace(/\\/g, '/').toLowerCase(), entry);
  });
  let qde = entries.get('project.qde');
  if (!qde) {
    const root = [...entries.keys()].filter((k) => !k.includes('/') && k.endsWith('.qde'));
    if (root.length === 0) throw new ToolError('IMPORT_FAILED', `${file} holds no project.qde (a .qdpx must hold one at its root)`);
    if (root.length > 1) throw new ToolError('IMPORT_FAILED', `${file} holds no project.qde but several .qde files (${root.join(', ')}); which one is the project is unclear`);
    qde = entries.get(root[0] as string) as JSZip.JSZipObject;
    warn(plan, `The archive names its project file "${qde.name}" instead of project.qde (as ATLAS.ti 26 does); it was read as the project`);
  }
  return { xml: decodeXml(await qde.async('uint8array')), zip, entries, dir };
}

/** Where a REFI path (`internal://`, `relative://`, `absolute://`, or plain) points: a zip entry or a file. */
type Located = { kind: 'entry'; entry: JSZip.JSZipObject; name: string } | { kind: 'file'; file: string } | { kind: 'missing'; where: string };

/**
 * Finds the file a REFI path names. `internal://x`: the archive's `sources/x` (any case), else a file `x` in a
 * bare .qde's `sources/` folder. A path without a scheme (qc's `sources/x.txt`): the archive entry at that path
 * from the archive's root or from its `sources/` folder, else a file relative to `basePath` (a bare .qde's folder,
 * or its `sources/` folder, when there is none). `relative://` against `basePath`, `absolute://` as it is
 * (REFI-QDA 1.5 section 8.3). Files outside the container's path policy count as missing.
 */
async function locate(c: Container, raw: string, basePath: string | null): Promise<Located> {
  const p = raw.trim();
  const exists = async (f: string) => {
    try {
      return (await fs.stat(f)).isFile();
    } catch {
      return false;
    }
  };
  if (/^internal:\/\//i.test(p)) {
    const name = p.replace(/^internal:\/\//i, '').replace(/^\/+/, '');
    const key = name.replace(/\\/g, '/').toLowerCase();
    const entry = c.entries.get(`sources/${key}`) ?? c.entries.get(key) ?? [...c.entries.entries()].find(([k]) => k.endsWith(`/${key}`))?.[1];
    if (entry) return { kind: 'entry', entry, name };
    for (const folder of ['sources', 'Sources', '']) {
      const f = path.join(c.dir, folder, name);
      if (!c.zip && (await exists(f))) return allowedFile(c, f, { kind: 'file', file: f });
    }
    return { kind: 'missing', where: c.zip ? `sources/${name} in the archive` : `${path.join(c.dir, 'sources', name)}` };
  }
  const plain = !/^[a-z][a-z0-9+.-]*:\/\//i.test(p);
  if (plain) {
    // a path without a scheme (qc writes `plainTextPath="sources/x.txt"`): inside the archive first, relative
    // to its root or to its sources folder; in a bare .qde's folder, also relative to its sources folder
    const key = p.replace(/\\/g, '/').replace(/^(\.\/)+/, '').replace(/^\/+/, '').toLowerCase();
    const entry = c.entries.get(key) ?? c.entries.get(`sources/${key}`);
    if (entry) return { kind: 'entry', entry, name: p };
    if (!c.zip && !path.isAbsolute(p) && !(basePath && basePath.trim() !== '')) {
      for (const folder of ['', 'sources', 'Sources']) {
        const f = path.resolve(c.dir, folder, p);
        if (await exists(f)) return allowedFile(c, f, { kind: 'file', file: f });
      }
    }
  }
  let file: string;
  if (/^absolute:\/\//i.test(p)) {
    file = p.replace(/^absolute:\/\//i, '');
    if (/^\/[A-Za-z]:[\\/]/.test(file)) file = file.slice(1);
  } else {
    const rel = p.replace(/^relative:\/\//i, '').replace(/^\/+(?=[^/])/, '');
    const base = basePath && basePath.trim() !== '' ? basePath.replace(/^(absolute|relative):\/\//i, '') : c.dir;
    file = path.isAbsolute(rel) ? rel : path.resolve(path.isAbsolute(base) ? base : path.join(c.dir, base), rel);
  }
  if (await exists(file)) return allowedFile(c, file, { kind: 'file', file });
  return { kind: 'missing', where: plain && c.zip ? `${p} (neither in the archive nor at ${file})` : file };
}

/** `found` unless it is a file outside the container's path policy, which is then missing (with the reason). */
function allowedFile(c: Container, file: string, found: Located): Located {
  if (found.kind !== 'file' || !c.paths?.restricted) return found;
  const r = c.paths.resolve(file, 'read');
  return r.ok ? found : { kind: 'missing', where: `${file}, refused: ${r.reason}` };
}

async function readBytes(loc: Located): Promise<Uint8Array | null> {
  if (loc.kind === 'entry') return loc.entry.async('uint8array');
  if (loc.kind === 'file') return fs.readFile(loc.file);
  return null;
}

/**
 * A plain-text file's text: UTF-8 (REFI-QDA 9.1.2) or UTF-16LE with its byte-order mark. Exactly one leading
 * byte-order mark is the file's encoding signature and is dropped (NVivo writes one and counts its positions
 * without it); a second one is the text's first character and is kept, so a text that begins with U+FEFF
 * (as Marginalia's export writes it: signature + text) comes back whole. Invalid bytes become U+FFFD.
 */
export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return decodeDroppingOneBom(bytes, 'utf-16le');
  return decodeDroppingOneBom(bytes, 'utf-8');
}

// ----- values ------------------------------------------------------------------------------------------------

/** A REFI `xsd:dateTime` as ISO 8601 UTC with milliseconds (a time without a zone read as UTC), or null. */
export function refiTime(raw: string | null): string | null {
  if (!raw) return null;
  const s = raw.trim();
  const m = /^(-?\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:\d{2})?$/.exec(s);
  if (!m) return null;
  const d = new Date(`${m[1]}${m[2] ?? 'Z'}`);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

const MEDIA_MIME: Record<string, string> = {
  '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4',
  '.wav': 'audio/wav',
  '.ogg': 'audio/ogg',
  '.flac': 'audio/flac',
  '.mp4': 'video/mp4',
  '.m4v': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.avi': 'video/x-msvideo',
  '.mkv': 'video/x-matroska',
  '.aac': 'audio/aac',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.bmp': 'image/bmp',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.pdf': 'application/pdf',
};

/** A typed attribute value from a `VariableValue`, or a reason it cannot be read. */
function variableValueOf(vv: Node, declared: string | null): { type: AttributeType; value: AttributeValue } | { error: string } {
  const elements = ['TextValue', 'BooleanValue', 'IntegerValue', 'FloatValue', 'DateValue', 'DateTimeValue'];
  const element = elements.find((e) => vv[e] !== undefined);
  if (!element) return { error: 'no value' };
  const raw = (textOf(vv, element) ?? '').trim();
  const asText = { type: 'text' as const, value: toWellFormed(textOf(vv, element) ?? '') };
  switch (element) {
    case 'TextValue':
      return asText;
    case 'BooleanValue':
      if (/^(true|1)$/i.test(raw)) return { type: 'boolean', value: true };
      if (/^(false|0)$/i.test(raw)) return { type: 'boolean', value: false };
      return { error: `"${raw}" is not a boolean` };
    case 'IntegerValue':
    case 'FloatValue': {
      const n = Number(raw);
      return raw !== '' && Number.isFinite(n) ? { type: 'number', value: n } : { error: `"${raw}" is not a number` };
    }
    default: {
      // DateValue, DateTimeValue: ISO 8601 as Marginalia keeps dates; a zone on a plain date is dropped
      const v = element === 'DateValue' ? raw.replace(/(Z|[+-]\d{2}:\d{2})$/, '') : raw;
      if (isIsoDate(v)) return { type: 'date', value: v };
      void declared;
      return { error: `"${raw}" is not an ISO 8601 date` };
    }
  }
}

function joinMemos(parts: (string | null | undefined)[]): string | null {
  const kept = parts.filter((p): p is string => typeof p === 'string' && p.trim() !== '');
  return kept.length === 0 ? null : memoOf(kept.join('\n\n'));
}

// ----- quotes ------------------------------------------------------------------------------------------------

/** A source text prepared for re-anchoring: its code point map and its {@link QuoteAnchorer}. */
interface TextAnchor {
  map: OffsetMap;
  anchorer: QuoteAnchorer;
}

/** Where a selection that carries a quote was placed, and which of its texts was the quote. */
export interface QuotedSelection extends AnchorResult {
  quote: string;
  from: 'name' | 'description';
}

/** Every run of white space as one space, ends trimmed (XML attribute values turn line breaks into spaces). */
function squash(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/**
 * True when `quote` can be the text of a selection stored as `storedLength` code points: at least 3 code points,
 * and its length within a quarter (at least 2 code points) of the stored length. A selection's `name` or
 * `Description` is often not a quote at all (a name the researcher gave, a memo: ATLAS.ti writes selection memos
 * in `Description`); a short or differently sized text found somewhere else in the source is no evidence that the
 * coding belongs there, so such texts never move a selection.
 */
export function plausibleQuote(quote: string, storedLength: number): boolean {
  const n = codePointLength(quote);
  return n >= 3 && Math.abs(n - storedLength) <= Math.max(2, Math.floor(storedLength / 4));
}

/**
 * Checks a REFI text selection stored as `[storedStart, storedEnd)` (code points, converted from the producer's
 * unit) against the quote it may carry: its `name` (ATLAS.ti, QualCoder and qc write the quoted text there),
 * then its `Description`. Returns null when neither is a quote (empty, or not {@link plausibleQuote} and not the
 * text at the offsets); `exact` when one of them is the text at the offsets (compared with white space squashed;
 * a name also as a prefix of it, as names may be cut); else what ../reanchor.ts (`QuoteAnchorer`) finds for the first
 * plausible one: `reanchored` (the nearest occurrence, exact then white-space-normalised), `kept_offsets` (not
 * found, offsets inside the text) or `unplaceable` (not found, offsets outside); a `Description` found nowhere
 * is taken for the memo it usually is (null). Positions are code points.
 */
function anchorSelection(prepare: () => TextAnchor, name: string | null, description: string | null, storedStart: number, storedEnd: number): QuotedSelection | null {
  const candidates: [QuotedSelection['from'], string][] = [];
  if (name !== null && name.trim() !== '') candidates.push(['name', name]);
  if (description !== null && description.trim() !== '') candidates.push(['description', description]);
  if (candidates.length === 0) return null;
  const t = prepare();
  const inside = storedStart >= 0 && storedStart < storedEnd && storedEnd <= t.map.cpLength;
  if (inside) {
    const at = t.map.text.slice(t.map.toUtf16(storedStart), t.map.toUtf16(storedEnd));
    const squashedAt = squash(at);
    for (const [from, quote] of candidates) {
      const q = squash(quote);
      if (at === quote || squashedAt === q || (from === 'name' && q.length >= 3 && squashedAt.startsWith(q))) return { status: 'exact', start_pos: storedStart, end_pos: storedEnd, quote, from };
    }
  }
  let fallback: QuotedSelection | null = null;
  for (const [from, quote] of candidates) {
    if (!plausibleQuote(quote, storedEnd - storedStart)) continue;
    const r = t.anchorer.anchor(quote, storedStart, storedEnd);
    if (r.status === 'reanchored' || r.status === 'exact') return { ...r, quote, from };
    // a Description found nowhere in the text is a memo, not a quote: only a name vouches for kept offsets
    if (from === 'name') fallback ??= { ...r, quote, from };
  }
  return fallback;
}

// ----- the importer ----------------------------------------------------------------------------------------

/** A text selection as read, positions already in code points, for cases that refer to it. */
interface SelectionInfo {
  source: string;
  start: number;
  end: number;
  owner: string | null;
  created_at: string | null;
  coded: boolean;
}

/**
 * Reads a REFI-QDA file into a {@link RefiImportPlan}, writing nothing but, for a `.qdpx` with embedded media,
 * the extracted media files (into `<file>.media/` beside it, existing files of the same size left alone).
 * Errors: IMPORT_FAILED (unreadable, empty, not a zip or not XML, not a REFI-QDA document, no project.qde, a
 * text source whose text file is missing; the message says which).
 */
export async function readRefiQda(file: string, options: ImportOptions = {}): Promise<RefiImportPlan> {
  checkImportFile(file);
  const base = emptyPlan('refi_qda', file);
  const c = await openContainer(file, base);
  c.paths = options.paths;
  const valid = XMLValidator.validate(c.xml);
  if (valid !== true) throw new ToolError('IMPORT_FAILED', `${path.basename(file)} is not well-formed XML: ${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})`);
  const root = rootOf(c.xml);
  const kind = root.local === 'Project' && root.ns === REFI_PROJECT_NS ? 'project' : root.local === 'CodeBook' && root.ns === REFI_CODEBOOK_NS ? 'codebook' : null;
  if (kind === null) {
    throw new ToolError(
      'IMPORT_FAILED',
      `${path.basename(file)} is not a REFI-QDA document: its root is <${root.local}> in namespace "${root.ns ?? '(none)'}", ` +
        `expected <Project> in "${REFI_PROJECT_NS}" or <CodeBook> in "${REFI_CODEBOOK_NS}"`,
    );
  }
  let doc: Node;
  try {
    doc = parser.parse(c.xml) as Node;
  } catch (e) {
    throw new ToolError('IMPORT_FAILED', `${path.basename(file)} cannot be parsed: ${(e as Error).message}`);
  }
  const top = child(doc, kind === 'project' ? 'Project' : 'CodeBook') ?? {};
  const producer = attr(top, 'origin');
  const convention = offsetConventionOf(producer);
  const plan: RefiImportPlan = {
    ...base,
    categories: [],
    codes: [],
    sources: [],
    segments: [],
    cases: [],
    refi: {
      producer,
      offset_convention: convention,
      kind,
      file_counts: { users: 0, codes: 0, sources: 0, text_selections: 0, text_codings: 0, av_selections: 0, cases: 0, variables: 0, notes: 0 },
      users: [],
      variables: [],
      cases: [],
      media_sources: [],
      av_segments: [],
      media_dir: null,
      missing_sources: [],
      anchoring: [],
    },
  };
  const counts = plan.refi.file_counts;
  try {
    // users
    const users = new Map<string, string>();
    for (const u of list(child(top, 'Users'), 'User')) {
      counts.users++;
      const guid = normalizeGuid(attr(u, 'guid'));
      if (!guid) continue;
      const name = (attr(u, 'name') ?? '').trim() || (attr(u, 'id') ?? '').trim() || `user ${guid.slice(0, 8)}`;
      users.set(guid, name);
      plan.refi.users.push({ guid, name });
    }
    const ownerOf = (raw: string | null) => {
      const g = normalizeGuid(raw);
      return g ? (users.get(g) ?? null) : null;
    };

    // notes (memos), by GUID; those referred to are marked
    const notes = new Map<string, string>();
    const noteRefsSeen = new Set<string>();
    for (const n of list(child(top, 'Notes'), 'Note')) {
      counts.notes++;
      const guid = normalizeGuid(attr(n, 'guid'));
      if (!guid) continue;
      let text = textOf(n, 'PlainTextContent');
      const p = attr(n, 'plainTextPath');
      if (text === null && p) {
        const bytes = await readBytes(await locate(c, p, attr(top, 'basePath')));
        text = bytes ? decodeText(bytes) : null;
      }
      const desc = textOf(n, 'Description');
      notes.set(guid, joinMemos([text, desc]) ?? '');
    }
    /** The texts of the notes `node` refers to; their GUIDs are added to `guids`. */
    const notesOf = (node: Node | undefined, guids?: string[]): string[] => {
      const out: string[] = [];
      for (const r of list(node, 'NoteRef')) {
        const g = normalizeGuid(attr(r, 'targetGUID'));
        if (!g) continue;
        noteRefsSeen.add(g);
        const t = notes.get(g);
        if (t) {
          out.push(t);
          guids?.push(g);
        } else if (t === undefined) skip(plan, 'note_refs_to_missing_notes');
      }
      return out;
    };

    // codebook
    const codeRefs = new Map<string, string>();
    /** every Code's name by ref, codable or not (for messages) */
    const codeNames = new Map<string, string>();
    const notCodable = new Set<string>();
    let anon = 0;
    const walk = (code: Node, parentCategory: string | null) => {
      counts.codes++;
      const guid = normalizeGuid(attr(code, 'guid'));
      const ref = guid ?? `anon-code:${++anon}`;
      const name = attr(code, 'name') ?? '';
      codeNames.set(ref, name);
      const kids = list(code, 'Code');
      const codable = !/^(false|0)$/i.test((attr(code, 'isCodable') ?? 'true').trim());
      const memo = joinMemos([textOf(code, 'Description'), ...notesOf(code)]);
      const color = normalizeColor(attr(code, 'color'));
      if (kids.length > 0 || !codable) {
        const catRef = `category:${ref}`;
        plan.categories.push({ ref: catRef, name, parent: parentCategory, memo: codable ? null : memo, guid });
        if (codable) {
          plan.codes.push({ ref, name, color, memo, category: catRef, guid, twin_of: catRef });
          codeRefs.set(ref, ref);
        } else notCodable.add(ref);
        for (const k of kids) walk(k, catRef);
      } else {
        plan.codes.push({ ref, name, color, memo, category: parentCategory, guid });
        codeRefs.set(ref, ref);
      }
    };
    const codebook = kind === 'project' ? child(child(top, 'CodeBook'), 'Codes') : child(top, 'Codes');
    for (const code of list(codebook, 'Code')) walk(code, null);
    const codeOf = (coding: Node): string | null => {
      const g = normalizeGuid(attr(child(coding, 'CodeRef'), 'targetGUID'));
      if (g && codeRefs.has(g)) return g;
      skip(plan, g && notCodable.has(g) ? 'codings_of_non_codable_codes' : 'codings_of_unknown_codes');
      return null;
    };
    if (kind === 'codebook') {
      skip(plan, 'sets', list(child(top, 'Sets'), 'Set').length);
      return plan;
    }

    // variables
    const variables = new Map<string, { name: string; type: string | null }>();
    for (const v of list(child(top, 'Variables'), 'Variable')) {
      counts.variables++;
      const guid = normalizeGuid(attr(v, 'guid'));
      if (!guid) continue;
      variables.set(guid, { name: attr(v, 'name') ?? 'variable', type: attr(v, 'typeOfVariable') });
      plan.refi.variables.push({ guid, name: attr(v, 'name') ?? 'variable' });
    }
    const attributesOf = (node: Node, where: string): PlannedAttribute[] => {
      const out: PlannedAttribute[] = [];
      for (const vv of list(node, 'VariableValue')) {
        const g = normalizeGuid(attr(child(vv, 'VariableRef'), 'targetGUID'));
        const def = g ? variables.get(g) : undefined;
        if (!def) {
          skip(plan, 'values_of_unknown_variables');
          continue;
        }
        const v = variableValueOf(vv, def.type);
        if ('error' in v) {
          warn(plan, `The value of "${def.name}" of ${where} was left out: ${v.error}`);
          skip(plan, 'unreadable_variable_values');
          continue;
        }
        out.push({ name: def.name, type: v.type, value: v.value });
      }
      return out;
    };

    // sources
    const basePath = attr(top, 'basePath');
    const selections = new Map<string, SelectionInfo>();
    const sourceRefs = new Set<string>();
    /** what strict refuses: "the text of "X": where" for each text file named but not found */
    const missing: string[] = [];
    const mediaDir = path.join(path.dirname(file), `${path.basename(file)}.media`);
    const sourcesNode = child(top, 'Sources');
    const sourceName = (node: Node, guid: string | null, fallback: string) => (attr(node, 'name') ?? '').trim() || fallback || `Source ${guid ? guid.slice(0, 8) : ++anon}`;

    /**
     * Reads the text of a TextSource-typed element (inline, or from its plainTextPath): the text, or where it was
     * looked for (`file_missing` false when the element names no plain text at all).
     */
    const readText = async (node: Node, what: string): Promise<{ text: string } | { where: string; file_missing: boolean }> => {
      const inline = textOf(node, 'PlainTextContent');
      if (inline !== null) return { text: toWellFormed(inline) };
      const p = attr(node, 'plainTextPath');
      if (!p) {
        const rich = attr(node, 'richTextPath');
        return { where: rich ? `it names only a rich-text file (${rich}), no plain text` : 'it has neither PlainTextContent nor a plainTextPath', file_missing: false };
      }
      const loc = await locate(c, p, basePath);
      const bytes = await readBytes(loc);
      if (!bytes) {
        const where = loc.kind === 'missing' ? loc.where : p;
        missing.push(`${what}: ${where}`);
        return { where, file_missing: true };
      }
      return { text: toWellFormed(decodeText(bytes)) };
    };

    /** The name of the code a `Coding` applies, for messages (`unknown code <guid>` when the codebook lacks it). */
    const codeNameOf = (coding: Node): string => {
      const g = normalizeGuid(attr(child(coding, 'CodeRef'), 'targetGUID'));
      return (g ? codeNames.get(g) : undefined) ?? `unknown code ${g ?? attr(child(coding, 'CodeRef'), 'targetGUID') ?? '(none)'}`;
    };
    /** `code 'X'` or `codes 'X', 'Y'` for the codings of a selection (`no code` when it has none). */
    const codesPhrase = (codings: Node[]): string => {
      const names = [...new Set(codings.map(codeNameOf))];
      return names.length === 0 ? 'no code' : `${names.length === 1 ? 'code' : 'codes'} ${names.map((n) => `'${n}'`).join(', ')}`;
    };

    /** Records a text source whose text is missing, with its codings that cannot be placed (counted as skipped). */
    const missingSource = (textNode: Node, name: string, guid: string | null, where: string, fileMissing: boolean) => {
      const unplaced: RefiUnplacedSelection[] = [];
      for (const sel of list(textNode, 'PlainTextSelection')) {
        counts.text_selections++;
        const codings = list(sel, 'Coding');
        counts.text_codings += codings.length;
        if (codings.length === 0) continue;
        const pos = (a: string) => {
          const n = Number(attr(sel, a));
          return attr(sel, a) !== null && Number.isInteger(n) ? n : null;
        };
        unplaced.push({ selection_guid: normalizeGuid(attr(sel, 'guid')), start_position: pos('startPosition'), end_position: pos('endPosition'), codes: [...new Set(codings.map(codeNameOf))] });
      }
      for (const coding of list(textNode, 'Coding')) {
        counts.text_codings++;
        unplaced.push({ selection_guid: null, start_position: null, end_position: null, codes: [codeNameOf(coding)] });
      }
      const codings = unplaced.reduce((n, u) => n + u.codes.length, 0);
      skip(plan, 'codings_of_sources_without_text', codings);
      skip(plan, 'sources_without_text');
      plan.refi.missing_sources.push({ source: name, guid, where, file_missing: fileMissing, selections: unplaced });
      const codes = [...new Set(unplaced.flatMap((u) => u.codes))];
      warn(
        plan,
        `The text of source '${name}' was not found (${where}): the source and its ${codings} coding(s)${codes.length > 0 ? ` of ${codes.length === 1 ? 'code' : 'codes'} ${codes.map((n) => `'${n}'`).join(', ')}` : ''} were not imported (listed in missing_sources)`,
      );
    };

    /** One re-anchoring helper per source text (its maps built once, when a selection first carries a candidate quote). */
    const anchorers = new Map<string, TextAnchor>();
    const anchorerOf = (ref: string, text: string): (() => TextAnchor) => () => {
      let a = anchorers.get(ref);
      if (!a) anchorers.set(ref, (a = { map: new OffsetMap(text), anchorer: new QuoteAnchorer(text) }));
      return a;
    };

    /**
     * The plan's segments of a text (its selections and whole-text codings); positions converted, then checked
     * against the selection's quote when it carries one ({@link anchorSelection}).
     */
    const readSelections = (node: Node, ref: string, sourceName: string, text: string) => {
      const conv = positionConverter(text, convention);
      const length = codePointLength(text);
      for (const sel of list(node, 'PlainTextSelection')) {
        counts.text_selections++;
        const selGuid = normalizeGuid(attr(sel, 'guid'));
        const rawStart = Number(attr(sel, 'startPosition'));
        const rawEnd = Number(attr(sel, 'endPosition'));
        const codings = list(sel, 'Coding');
        counts.text_codings += codings.length;
        const which = () => `selection ${selGuid ?? attr(sel, 'guid') ?? `[${attr(sel, 'startPosition')}, ${attr(sel, 'endPosition')})`} of ${codesPhrase(codings)} in source '${sourceName}'`;
        if (!Number.isInteger(rawStart) || !Number.isInteger(rawEnd) || rawStart < 0) {
          skip(plan, 'selections_with_invalid_positions');
          warn(plan, `${which()} has invalid positions (startPosition "${attr(sel, 'startPosition') ?? ''}", endPosition "${attr(sel, 'endPosition') ?? ''}") and was left out`);
          continue;
        }
        const storedStart = conv(rawStart);
        const storedEnd = conv(rawEnd);
        if (storedEnd === storedStart) {
          skip(plan, 'selections_of_zero_length');
          continue;
        }
        const description = textOf(sel, 'Description');
        const quoted = options.reanchor === false ? null : anchorSelection(anchorerOf(ref, text), attr(sel, 'name'), description, storedStart, storedEnd);
        const anchored = (status: RefiAnchoring['status']) => {
          for (const coding of codings) {
            const g = normalizeGuid(attr(child(coding, 'CodeRef'), 'targetGUID'));
            plan.refi.anchoring.push({
              status,
              source: ref,
              code: g,
              code_name: codeNameOf(coding),
              start_pos: quoted?.start_pos ?? storedStart,
              end_pos: quoted?.end_pos ?? storedEnd,
              stored_start_pos: storedStart,
              stored_end_pos: storedEnd,
              quote: quoted?.quote ?? null,
            });
          }
        };
        if (quoted?.status === 'unplaceable' || (!quoted && (storedEnd < storedStart || storedEnd > length))) {
          skip(plan, 'selections_outside_their_text');
          warn(plan, `${which()} is outside its text (${length} code points): [${rawStart}, ${rawEnd}) was left out${quoted ? ' (its quote is not in the text either)' : ''}`);
          anchored('unplaceable');
          continue;
        }
        if (quoted && quoted.status !== 'exact') anchored(quoted.status);
        const start = quoted?.start_pos ?? storedStart;
        const end = quoted?.end_pos ?? storedEnd;
        const selOwner = ownerOf(attr(sel, 'creatingUser'));
        const selTime = refiTime(attr(sel, 'creationDateTime'));
        const selNoteGuids: string[] = [];
        // a Description that is the coded text (the quote) is not a memo
        const selMemo = [quoted?.from === 'description' && quoted.status !== 'kept_offsets' ? null : description, ...notesOf(sel, selNoteGuids)];
        if (selGuid) selections.set(selGuid, { source: ref, start, end, owner: selOwner, created_at: selTime, coded: codings.length > 0 });
        for (const coding of codings) {
          const code = codeOf(coding);
          if (code === null) continue;
          const noteGuids: string[] = [];
          const codingNotes = notesOf(coding, noteGuids);
          plan.segments.push({
            code,
            source: ref,
            start_pos: start,
            end_pos: end,
            memo: joinMemos([...selMemo, ...codingNotes]),
            note_guid: noteGuids[0] ?? selNoteGuids[0] ?? null,
            importance: 0,
            owner: ownerOf(attr(coding, 'creatingUser')) ?? selOwner,
            created_at: refiTime(attr(coding, 'creationDateTime')) ?? selTime,
            guid: normalizeGuid(attr(coding, 'guid')),
            selection_guid: selGuid,
          });
        }
      }
      for (const coding of list(node, 'Coding')) {
        counts.text_codings++;
        const code = codeOf(coding);
        if (code === null) continue;
        if (length === 0) {
          skip(plan, 'codings_of_empty_sources');
          continue;
        }
        const noteGuids: string[] = [];
        plan.segments.push({
          code,
          source: ref,
          start_pos: 0,
          end_pos: length,
          memo: joinMemos(notesOf(coding, noteGuids)),
          note_guid: noteGuids[0] ?? null,
          importance: 0,
          owner: ownerOf(attr(coding, 'creatingUser')),
          created_at: refiTime(attr(coding, 'creationDateTime')),
          guid: normalizeGuid(attr(coding, 'guid')),
          selection_guid: null,
        });
      }
    };

    /** A media file of a source: extracted from the zip into `mediaDir`, or the external file; null when unavailable. */
    const mediaFile = async (node: Node, guid: string | null, name: string): Promise<{ file: string | null; size: number | null; ext: string }> => {
      const p = attr(node, 'path') ?? attr(node, 'currentPath');
      if (!p) return { file: null, size: null, ext: '' };
      let loc = await locate(c, p, basePath);
      if (loc.kind === 'missing' && attr(node, 'currentPath') && p !== attr(node, 'currentPath')) loc = await locate(c, attr(node, 'currentPath') as string, basePath);
      const ext = path.extname(loc.kind === 'entry' ? loc.name : loc.kind === 'file' ? loc.file : p).toLowerCase();
      if (loc.kind === 'file') return { file: loc.file, size: (await fs.stat(loc.file)).size, ext };
      if (loc.kind === 'missing') {
        warn(plan, `The media file of "${name}" was not found (${loc.where}); the source is imported without its file`);
        skip(plan, 'media_files_not_found');
        return { file: null, size: null, ext };
      }
      const bytes = await loc.entry.async('uint8array');
      await fs.mkdir(mediaDir, { recursive: true });
      // an identical file already there (an earlier import of this file) is used; a different one is never overwritten
      const stem = guid ?? `source-${++anon}`;
      for (let n = 1; ; n++) {
        const target = path.join(mediaDir, `${stem}${n === 1 ? '' : `-${n}`}${ext}`);
        const existing = await fs.readFile(target).catch(() => null);
        if (existing !== null && !Buffer.from(bytes).equals(existing)) continue;
        if (existing === null) await fs.writeFile(target, bytes, { flag: 'wx' });
        plan.refi.media_dir = mediaDir;
        return { file: target, size: bytes.length, ext };
      }
    };

    const addTextSource = async (
      node: Node,
      type: 'text' | 'pdf',
      textNode: Node,
      guid: string | null,
      ref: string,
      name: string,
      memo: string | null,
      media: { file: string | null } | null,
      noteGuid: string | null,
      attributes: PlannedAttribute[],
    ) => {
      const read = await readText(textNode, `the text of "${name}"`);
      if (!('text' in read)) {
        missingSource(textNode, name, guid, read.where, read.file_missing);
        skip(plan, 'variable_values_of_sources_without_text', attributes.length);
        return false;
      }
      const text = read.text;
      plan.sources.push({
        ref,
        name,
        text,
        memo,
        origin: `REFI-QDA: ${path.basename(file)}${producer ? ` (${producer})` : ''}`,
        folder: null,
        owner: ownerOf(attr(node, 'creatingUser')),
        guid,
        created_at: refiTime(attr(node, 'creationDateTime')),
        type,
        file_path: media?.file ?? null,
        mime: type === 'pdf' ? 'application/pdf' : 'text/plain',
        note_guid: noteGuid,
        attributes,
      });
      readSelections(textNode, ref, name, text);
      return true;
    };

    const mediaSource = (
      node: Node,
      type: RefiMediaSource['type'],
      guid: string | null,
      ref: string,
      name: string,
      memo: string | null,
      f: { file: string | null; size: number | null; ext: string },
      noteGuid: string | null,
      attributes: PlannedAttribute[],
    ) => {
      plan.refi.media_sources.push({
        ref,
        name,
        type,
        memo,
        origin: `REFI-QDA: ${path.basename(file)}${producer ? ` (${producer})` : ''}`,
        file_path: f.file,
        mime: MEDIA_MIME[f.ext] ?? null,
        size_bytes: f.size,
        owner: ownerOf(attr(node, 'creatingUser')),
        guid,
        created_at: refiTime(attr(node, 'creationDateTime')),
        note_guid: noteGuid,
        attributes,
      });
    };

    const elementKinds = ['TextSource', 'PDFSource', 'PictureSource', 'AudioSource', 'VideoSource'] as const;
    for (const element of elementKinds) {
      for (const node of list(sourcesNode, element)) {
        counts.sources++;
        const guid = normalizeGuid(attr(node, 'guid'));
        const ref = guid ?? `anon-source:${++anon}`;
        const name = sourceName(node, guid, '');
        const sourceNotes: string[] = [];
        const memo = joinMemos([textOf(node, 'Description'), ...notesOf(node, sourceNotes)]);
        const noteGuid = sourceNotes[0] ?? null;
        const vars = attributesOf(node, `the source "${name}"`);
        let added = true;
        if (element === 'TextSource') {
          added = await addTextSource(node, 'text', node, guid, ref, name, memo, null, noteGuid, vars);
        } else if (element === 'PDFSource') {
          const f = await mediaFile(node, guid, name);
          const rep = child(node, 'Representation');
          skip(plan, 'pdf_region_selections', list(node, 'PDFSelection').length);
          if (rep && (textOf(rep, 'PlainTextContent') !== null || attr(rep, 'plainTextPath'))) added = await addTextSource(node, 'pdf', rep, guid, ref, name, memo, f, noteGuid, vars);
          else mediaSource(node, 'pdf', guid, ref, name, memo, f, noteGuid, vars);
          for (const coding of list(node, 'Coding')) if (codeOf(coding) !== null) skip(plan, 'codings_of_whole_media_sources');
        } else {
          const type = element === 'PictureSource' ? 'image' : element === 'AudioSource' ? 'audio' : 'video';
          const f = await mediaFile(node, guid, name);
          mediaSource(node, type, guid, ref, name, memo, f, noteGuid, vars);
          if (type === 'image') skip(plan, 'picture_region_selections', list(node, 'PictureSelection').length);
          for (const t of list(node, 'Transcript')) {
            skip(plan, 'transcripts');
            skip(plan, 'transcript_selections', list(t, 'TranscriptSelection').length);
          }
          for (const sel of list(node, type === 'audio' ? 'AudioSelection' : 'VideoSelection')) {
            counts.av_selections++;
            const begin = Number(attr(sel, 'begin'));
            const end = Number(attr(sel, 'end'));
            const codings = list(sel, 'Coding');
            if (!Number.isSafeInteger(begin) || !Number.isSafeInteger(end) || begin < 0 || end <= begin) {
              skip(plan, 'av_selections_with_invalid_times', Math.max(1, codings.length));
              warn(
                plan,
                `${type} selection ${normalizeGuid(attr(sel, 'guid')) ?? attr(sel, 'guid') ?? ''} of ${codesPhrase(codings)} in source '${name}' has invalid times (begin "${attr(sel, 'begin') ?? ''}", end "${attr(sel, 'end') ?? ''}" ms) and was left out`,
              );
              continue;
            }
            const selOwner = ownerOf(attr(sel, 'creatingUser'));
            const selTime = refiTime(attr(sel, 'creationDateTime'));
            const transcript = memoOf(textOf(sel, 'Description'));
            const selNoteGuids: string[] = [];
            const selNotes = notesOf(sel, selNoteGuids);
            if (codings.length === 0) skip(plan, 'uncoded_av_selections');
            for (const coding of codings) {
              const code = codeOf(coding);
              if (code === null) continue;
              const noteGuids: string[] = [];
              const codingNotes = notesOf(coding, noteGuids);
              plan.refi.av_segments.push({
                code,
                source: ref,
                start_ms: begin,
                end_ms: end,
                transcript,
                memo: joinMemos([...selNotes, ...codingNotes]),
                note_guid: noteGuids[0] ?? selNoteGuids[0] ?? null,
                owner: ownerOf(attr(coding, 'creatingUser')) ?? selOwner,
                created_at: refiTime(attr(coding, 'creationDateTime')) ?? selTime,
                guid: normalizeGuid(attr(coding, 'guid')),
                selection_guid: normalizeGuid(attr(sel, 'guid')),
              });
            }
          }
          for (const coding of list(node, 'Coding')) if (codeOf(coding) !== null) skip(plan, 'codings_of_whole_media_sources');
        }
        if (added) sourceRefs.add(ref);
      }
    }
    if (missing.length > 0 && options.strict) {
      throw new ToolError(
        'IMPORT_FAILED',
        `${missing.length} text file(s) the project refers to are missing: ${missing.slice(0, 10).join('; ')}${missing.length > 10 ? '; ...' : ''}. Nothing was imported (strict: true; ` +
          'without it, everything else is imported and the missing sources are listed).',
        { missing },
      );
    }

    // cases
    for (const k of list(child(top, 'Cases'), 'Case')) {
      counts.cases++;
      const guid = normalizeGuid(attr(k, 'guid'));
      const name = (attr(k, 'name') ?? '').trim() || `Case ${guid ? guid.slice(0, 8) : ++anon}`;
      const kase: RefiCase = { name, memo: memoOf(textOf(k, 'Description')), sources: [], ranges: [], attributes: attributesOf(k, `the case "${name}"`), guid };
      skip(plan, 'case_code_refs', list(k, 'CodeRef').length);
      for (const r of list(k, 'SourceRef')) {
        const g = normalizeGuid(attr(r, 'targetGUID'));
        if (g && sourceRefs.has(g)) kase.sources.push(g);
        else skip(plan, 'case_refs_to_unknown_sources');
      }
      for (const r of list(k, 'SelectionRef')) {
        const g = normalizeGuid(attr(r, 'targetGUID'));
        const sel = g ? selections.get(g) : undefined;
        if (!sel) {
          skip(plan, 'case_refs_to_unknown_or_media_selections');
          continue;
        }
        kase.ranges.push({ source: sel.source, start_pos: sel.start, end_pos: sel.end, owner: sel.owner, created_at: sel.created_at, selection_guid: g });
      }
      plan.refi.cases.push(kase);
    }
    plan.cases = plan.refi.cases.map((k) => ({ name: k.name, memo: k.memo, sources: k.sources, ranges: k.ranges.map((r) => ({ source: r.source, start_pos: r.start_pos, end_pos: r.end_pos })), attributes: k.attributes }));

    // what is left out
    const referencedSelections = new Set<string>();
    for (const k of plan.refi.cases) for (const r of k.ranges) if (r.selection_guid) referencedSelections.add(r.selection_guid);
    for (const [g, sel] of selections) if (!sel.coded && !referencedSelections.has(g)) skip(plan, 'uncoded_selections');
    for (const g of notes.keys()) if (!noteRefsSeen.has(g)) skip(plan, 'notes_attached_to_nothing');
    skip(plan, 'sets', list(child(top, 'Sets'), 'Set').length);
    skip(plan, 'links', list(child(top, 'Links'), 'Link').length);
    skip(plan, 'graphs', list(child(top, 'Graphs'), 'Graph').length);
    if (textOf(top, 'Description')) skip(plan, 'project_description');
    skip(plan, 'project_notes', list(top, 'NoteRef').length);
    if (convention === 'utf16') warn(plan, `Text positions were converted from ${producer}'s UTF-16 code units to code points`);
    return plan;
  } catch (e) {
    if (isToolError(e)) throw e;
    throw new ToolError('IMPORT_FAILED', `${path.basename(file)} could not be read as REFI-QDA: ${(e as Error).message}`);
  }
}

/** The `refi_qda` entry of the import table (../importers/index.ts). */
export const refiQdaImporter: Importer = {
  format: 'refi_qda',
  extensions: ['.qdpx', '.qde', '.qdc'],
  description: 'a REFI-QDA project (.qdpx, or a bare .qde with its sources folder beside it) or codebook (.qdc), as NVivo, ATLAS.ti, MAXQDA, QualCoder and Marginalia export them',
  plan: (filePath, options) => readRefiQda(filePath, options),
};
