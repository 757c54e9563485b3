/**
 * Reading a REFI-QDA file (REFI-QDA 1.5, QDA-XML): the XML access the reader uses, the container (a `.qdpx`
 * zip, or a bare `.qde`/`.qdc` with its sources beside it) and the files it refers to, the values of variables
 * and times, and the quotes of selections. Used by refiReader.ts, refiSources.ts and refiImport.ts.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import JSZip from 'jszip';
import { ToolError } from '../../core/errors';
import type { PathPolicy } from '../../core/pathPolicy';
import { codePointLength, toWellFormed } from '../../core/text';
import { isIsoDate } from '../../domain/cases';
import type { AttributeType, AttributeValue } from '../../domain/ports';
import type { ImportPlan } from '../importers/plan';
import { memoOf, warn } from '../importers/plan';
import { OffsetMap } from '../../core/offsets';
import { QuoteAnchorer, type AnchorResult } from '../reanchor';

// ----- XML access --------------------------------------------------------------------------------------------

export type Node = Record<string, unknown>;

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

export const parser = new XMLParser({
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

/** The child elements `name` of a parsed XML node as a list (fast-xml-parser gives one object or an array); text values become `{"#text"}` nodes; [] when absent. */
export function list(node: unknown, name: string): Node[] {
  if (!node || typeof node !== 'object') return [];
  const v = (node as Node)[name];
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]).map((x) => (typeof x === 'object' && x !== null ? (x as Node) : { '#text': String(x) }));
}

/** The first child element `name` of a parsed XML node, or undefined. */
export function child(node: unknown, name: string): Node | undefined {
  return list(node, name)[0];
}

/** Attribute `name` of a parsed XML node (fast-xml-parser's `@name` key) as a string, or null when absent. */
export function attr(node: Node | undefined, name: string): string | null {
  const v = node?.[`@${name}`];
  return typeof v === 'string' ? v : null;
}

/** The text content of child element `name` (null when absent). */
export function textOf(node: Node | undefined, name: string): string | null {
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
export function rootOf(xml: string): { local: string; ns: string | null } {
  const body = xml
    .replace(/^\uFEFF/, '')
    .replace(/<\?[\s\S]*?\?>/g, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<!DOCTYPE[^>]*>/i, '');
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
export interface Container {
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

/**
 * Opens a REFI-QDA file: a `.qdpx` (zip with `project.qde`, or one other root `.qde` with a warning on `plan`) or a
 * bare `.qde`/`.qdc` (not a zip), and decodes its XML (UTF-8 or UTF-16 by byte-order mark). Errors: IMPORT_FAILED
 * (unreadable, empty, a broken zip, no or several root .qde files).
 */
export async function openContainer(file: string, plan: ImportPlan): Promise<Container> {
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
    if (root.length > 1)
      throw new ToolError('IMPORT_FAILED', `${file} holds no project.qde but several .qde files (${root.join(', ')}); which one is the project is unclear`);
    qde = entries.get(root[0] as string) as JSZip.JSZipObject;
    warn(plan, `The archive names its project file "${qde.name}" instead of project.qde (as ATLAS.ti 26 does); it was read as the project`);
  }
  return { xml: decodeXml(await qde.async('uint8array')), zip, entries, dir };
}

/** Where a REFI path (`internal://`, `relative://`, `absolute://`, or plain) points: a zip entry or a file. */
export type Located = { kind: 'entry'; entry: JSZip.JSZipObject; name: string } | { kind: 'file'; file: string } | { kind: 'missing'; where: string };

/**
 * Finds the file a REFI path names. `internal://x`: the archive's `sources/x` (any case), else a file `x` in a
 * bare .qde's `sources/` folder. A path without a scheme (qc's `sources/x.txt`): the archive entry at that path
 * from the archive's root or from its `sources/` folder, else a file relative to `basePath` (a bare .qde's folder,
 * or its `sources/` folder, when there is none). `relative://` against `basePath`, `absolute://` as it is
 * (REFI-QDA 1.5 section 8.3). Files outside the container's path policy count as missing.
 */
export async function locate(c: Container, raw: string, basePath: string | null): Promise<Located> {
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
    const key = p
      .replace(/\\/g, '/')
      .replace(/^(\.\/)+/, '')
      .replace(/^\/+/, '')
      .toLowerCase();
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

/** The bytes of a located source file (a zip entry or a file beside the project), or null when it is missing or refused. */
export async function readBytes(loc: Located): Promise<Uint8Array | null> {
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

export const MEDIA_MIME: Record<string, string> = {
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
export function variableValueOf(vv: Node, declared: string | null): { type: AttributeType; value: AttributeValue } | { error: string } {
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

/** The non-blank memo parts joined by a blank line (REFI-QDA descriptions and notes of one item), or null when none. */
export function joinMemos(parts: (string | null | undefined)[]): string | null {
  const kept = parts.filter((p): p is string => typeof p === 'string' && p.trim() !== '');
  return kept.length === 0 ? null : memoOf(kept.join('\n\n'));
}

// ----- quotes ------------------------------------------------------------------------------------------------

/** A source text prepared for re-anchoring: its code point map and its {@link QuoteAnchorer}. */
export interface TextAnchor {
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
export function anchorSelection(
  prepare: () => TextAnchor,
  name: string | null,
  description: string | null,
  storedStart: number,
  storedEnd: number,
): QuotedSelection | null {
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
      if (at === quote || squashedAt === q || (from === 'name' && q.length >= 3 && squashedAt.startsWith(q)))
        return { status: 'exact', start_pos: storedStart, end_pos: storedEnd, quote, from };
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
