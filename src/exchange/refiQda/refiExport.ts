/**
 * REFI-QDA export: a project as a `.qdpx` (QDA-XML 1.0 project exchange) and its codebook as a `.qdc`
 * (codebook exchange). Sources: the REFI-QDA 1.5 standard (bundled as ../shared/corpus/refi-qda/schemas/
 * REFI-QDA-1-5.pdf: sections 8 to 13) and its Project.xsd, whose element order this writer follows.
 *
 * Mapping (what Marginalia holds -> what the file says):
 * - coders (the owners of what is exported, and the exporting coder) -> `Users/User` (GUID per coder name).
 * - categories -> `Code isCodable="false"` (the standard's "code folders", section 11), nesting their
 *   sub-categories and codes; codes -> `Code isCodable="true" color`. A category and its twin code (what
 *   importing a codable parent code makes, see refiImport.ts: same stored GUID; or a code of the category's own
 *   name) are written back as ONE codable `Code` with children, carrying the code's GUID, colour and memo
 *   (see writeCodes in refiCodebook.ts).
 * - code and category memos -> the `Code`'s `Description` (its definition, as NVivo and ATLAS.ti use it).
 * - typed case and document (source) attributes -> `Variables/Variable`, one per name (text -> Text, boolean -> Boolean, number -> Integer when every
 *   value is an integer else Float, date -> Date when every value is a calendar date else DateTime, with
 *   `HH:MM` times completed to `HH:MM:00`); an attribute name used with several types becomes a Text variable.
 * - document attributes -> `VariableValue`s of their source element (`TextSource`, `PDFSource`, ...).
 * - cases -> `Cases/Case` with `Description` (memo), `VariableValue`, `SourceRef` (whole sources) and
 *   `SelectionRef` (case ranges, written as uncoded `PlainTextSelection`s of their sources).
 * - text sources -> `TextSource plainTextPath="internal://<guid>.txt"` with the text, UTF-8 without a
 *   byte-order mark (one is written when the text itself begins with U+FEFF, see {@link textFileBytes}), in
 *   `sources/<guid>.txt`; PDF sources -> `PDFSource` (the PDF embedded when its file is
 *   found) with the text as its `Representation`; images -> `PictureSource`; audio and video ->
 *   `AudioSource` / `VideoSource`. Media files are embedded (`internal://`) when found and at most
 *   {@link MAX_EMBEDDED_MEDIA_BYTES}, else referenced by absolute path (`absolute:///...`, section 8.3).
 * - text segments -> `PlainTextSelection startPosition endPosition` in code points of the text (section 10.2),
 *   end exclusive, with one `Coding`/`CodeRef` per code, `creatingUser` and `creationDateTime`; segments that
 *   came from one REFI selection (same stored selection GUID and range) are written as that one selection again.
 * - AV segments -> `AudioSelection` / `VideoSelection begin end` (milliseconds, section 10.4), the transcript as
 *   the selection's `Description`.
 * - memos of sources, segments and AV segments -> `Notes/Note` (a note is a text source, section 3.9) with the
 *   memo as `PlainTextContent`, attached by `NoteRef` (a segment's memo on its selection, or on its `Coding` when
 *   the selection holds several codings).
 *
 * Not carried (reported as warnings when the project has them): folders, segment importance, segments set aside
 * after outside edits, media files that cannot be found. Owners and creation times of codes, categories and
 * cases have no place in the schema.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import * as fs from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import JSZip from 'jszip';
import { deriveGuid } from '../../domain/exchangeIds';
import type { Segment } from '../../domain/model';
import type { AttributeType, AttributeValue, AvSegment, CaseSegment } from '../../domain/ports';
import type { ProjectSnapshot, SnapshotSource } from '../projectSnapshot';
import { writeCodes } from './refiCodebook';
import { absoluteUrl, placeMedia, type MediaPlacement } from './refiMedia';
import { variableType, variableValue } from './refiVariables';
import { XmlWriter } from './xml';

export { absoluteUrl, MAX_EMBEDDED_MEDIA_BYTES, placeMedia, type MediaPlacement } from './refiMedia';

/** The project exchange namespace (Project.xsd). */
export const REFI_PROJECT_NS = 'urn:QDA-XML:project:1.0';
/** The codebook exchange namespace (Codebook.xsd, standard section 5.2); note the dot in `1.0`. */
export const REFI_CODEBOOK_NS = 'urn:QDA-XML:codebook:1.0';
/** Where the official Project.xsd is published (written as `xsi:schemaLocation`, as ATLAS.ti does). */
export const REFI_PROJECT_SCHEMA_LOCATION = 'http://schema.qdasoftware.org/versions/Project/v1.0/Project.xsd';
/** The `origin` attribute Marginalia writes. */
export const EXPORT_ORIGIN = 'Marginalia';
/** What an export wrote, by kind. */
export interface RefiCounts {
  users: number;
  /** codable `Code` elements */
  codes: number;
  /** non-codable `Code` elements (categories) */
  categories: number;
  sources: number;
  /** text selections (`PlainTextSelection`), coded or referenced by a case */
  selections: number;
  /** `Coding` elements (one per text or AV segment) */
  codings: number;
  /** `AudioSelection` and `VideoSelection` elements */
  av_selections: number;
  cases: number;
  variables: number;
  notes: number;
}

/** A `project.qde` and the files that go beside it in the `.qdpx`. */
export interface ProjectQde {
  xml: string;
  /** text files: zip entry -> text (UTF-8, written by {@link textFileBytes}) */
  texts: { entry: string; text: string }[];
  /** media files to embed: zip entry -> file on disk */
  media: { entry: string; file: string }[];
  counts: RefiCounts;
  /** what the file could not carry (REFI-QDA section 7, "Data loss") */
  warnings: string[];
}

/** xsd:dateTime as Marginalia stores times (ISO 8601), or undefined for anything else (the attribute is left out). */
function dateTime(s: string | null | undefined): string | undefined {
  return s && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?$/.test(s) ? s : undefined;
}

/** One `PlainTextSelection` to write: coded segments (sharing a range) or a case range. */
interface TextSelection {
  guid: string;
  start: number;
  end: number;
  owner: string;
  created_at: string;
  segments: Segment[];
  caseSegment: CaseSegment | null;
}

/** Collects what a writer needs while the document is built: users seen, notes to write, warnings. */
class Collector {
  readonly notes: { guid: string; name: string; owner: string; created_at: string; text: string }[] = [];
  readonly warnings: string[] = [];
  constructor(private readonly snapshot: ProjectSnapshot) {}

  user(name: string): string {
    return this.snapshot.guids.guid('user', name);
  }

  /** Registers a memo as a note of item `key` (`<kind>:<id>`) and returns the note's GUID. */
  note(key: string, name: string, owner: string, createdAt: string, text: string): string {
    const guid = this.snapshot.guids.guid('note', key);
    this.user(owner);
    this.notes.push({ guid, name, owner, created_at: createdAt, text });
    return guid;
  }
}

/** The text selections of one source: its coded segments (grouped by their REFI selection) and its case ranges. */
function textSelections(s: ProjectSnapshot, segments: Segment[], caseSegments: CaseSegment[]): TextSelection[] {
  const groups = new Map<string, TextSelection>();
  const used = new Set<string>();
  const out: TextSelection[] = [];
  for (const g of segments) {
    const stored = s.guids.storedGuid('selection', g.segment_id);
    const key = stored ? `${stored}\u0000${g.start_pos}\u0000${g.end_pos}` : null;
    const existing = key ? groups.get(key) : undefined;
    if (existing) {
      existing.segments.push(g);
      if (g.created_at < existing.created_at) existing.created_at = g.created_at;
      continue;
    }
    // a stored GUID already used by a selection with another range (the text was edited since): a fresh one
    const guid = stored !== undefined && !used.has(stored) ? stored : deriveGuid(s.guids.projectGuid, 'selection', g.segment_id);
    used.add(guid);
    const sel: TextSelection = {
      guid,
      start: g.start_pos,
      end: g.end_pos,
      owner: g.owner,
      created_at: g.created_at,
      segments: [g],
      caseSegment: null,
    };
    if (key) groups.set(key, sel);
    out.push(sel);
  }
  for (const r of caseSegments) {
    out.push({
      guid: s.guids.guid('case_selection', r.case_segment_id),
      start: r.start_pos,
      end: r.end_pos,
      owner: r.owner,
      created_at: r.created_at,
      segments: [],
      caseSegment: r,
    });
  }
  return out.sort((a, b) => a.start - b.start || a.end - b.end || (a.guid < b.guid ? -1 : a.guid > b.guid ? 1 : 0));
}

/** Writes the `PlainTextSelection` elements of `selections`. */
function writeTextSelections(w: XmlWriter, s: ProjectSnapshot, c: Collector, sourceName: string, selections: TextSelection[], counts: RefiCounts): void {
  const codeNames = new Map(s.codes.map((k) => [k.code_id, k.name]));
  for (const sel of selections) {
    counts.selections++;
    w.start('PlainTextSelection', {
      guid: sel.guid,
      startPosition: sel.start,
      endPosition: sel.end,
      creatingUser: c.user(sel.owner),
      creationDateTime: dateTime(sel.created_at),
    });
    const single = sel.segments.length === 1;
    for (const g of sel.segments) {
      counts.codings++;
      w.start('Coding', { guid: s.guids.guid('coding', g.segment_id), creatingUser: c.user(g.owner), creationDateTime: dateTime(g.created_at) });
      w.empty('CodeRef', { targetGUID: s.guids.guid('code', g.code_id) });
      if (!single && g.memo) {
        w.empty('NoteRef', {
          targetGUID: c.note(`segment:${g.segment_id}`, `Memo: ${codeNames.get(g.code_id) ?? 'code'} in ${sourceName}`, g.owner, g.created_at, g.memo),
        });
      }
      w.end();
    }
    const only = single ? (sel.segments[0] as Segment) : undefined;
    if (only?.memo) {
      w.empty('NoteRef', {
        targetGUID: c.note(
          `segment:${only.segment_id}`,
          `Memo: ${codeNames.get(only.code_id) ?? 'code'} in ${sourceName}`,
          only.owner,
          only.created_at,
          only.memo,
        ),
      });
    }
    w.end();
  }
}

/** Writes the `AudioSelection` / `VideoSelection` elements of an AV source. */
function writeAvSelections(
  w: XmlWriter,
  s: ProjectSnapshot,
  c: Collector,
  element: string,
  sourceName: string,
  segments: AvSegment[],
  counts: RefiCounts,
): void {
  const codeNames = new Map(s.codes.map((k) => [k.code_id, k.name]));
  for (const g of segments) {
    counts.av_selections++;
    counts.codings++;
    w.start(element, {
      guid: s.guids.guid('av_selection', g.segment_id),
      begin: g.start_ms,
      end: g.end_ms,
      creatingUser: c.user(g.owner),
      creationDateTime: dateTime(g.created_at),
    });
    if (g.transcript) w.text('Description', g.transcript);
    w.start('Coding', { guid: s.guids.guid('av_coding', g.segment_id), creatingUser: c.user(g.owner), creationDateTime: dateTime(g.created_at) });
    w.empty('CodeRef', { targetGUID: s.guids.guid('code', g.code_id) });
    w.end();
    if (g.memo)
      w.empty('NoteRef', {
        targetGUID: c.note(`av_segment:${g.segment_id}`, `Memo: ${codeNames.get(g.code_id) ?? 'code'} in ${sourceName}`, g.owner, g.created_at, g.memo),
      });
    w.end();
  }
}

/** What the writers of one `project.qde` share while it is built. */
interface QdeBuild {
  s: ProjectSnapshot;
  c: Collector;
  w: XmlWriter;
  counts: RefiCounts;
  texts: ProjectQde['texts'];
  embedded: ProjectQde['media'];
  /** attribute name -> its REFI Variable */
  variables: Map<string, { guid: string; type: string }>;
}

/**
 * Builds `project.qde` for `snapshot`: the XML (valid against Project.xsd) and the files to put beside it.
 * `media` comes from {@link placeMedia}. Pure apart from that decision.
 */
export function buildProjectQde(snapshot: ProjectSnapshot, media: Map<number, MediaPlacement>): ProjectQde {
  const s = snapshot;
  const b: QdeBuild = {
    s,
    c: new Collector(s),
    w: new XmlWriter(),
    counts: { users: 0, codes: 0, categories: 0, sources: 0, selections: 0, codings: 0, av_selections: 0, cases: 0, variables: 0, notes: 0 },
    texts: [],
    embedded: [],
    variables: new Map(),
  };
  const { c, w } = b;
  writeUsers(b);
  if (s.codes.length + s.categories.length > 0) {
    w.start('CodeBook').start('Codes');
    const n = writeCodes(w, s);
    b.counts.codes = n.codes;
    b.counts.categories = n.categories;
    c.warnings.push(...n.warnings);
    w.end().end();
  }
  writeVariables(b);
  writeCases(b);
  const importance = writeSources(b, media);
  writeNotes(b);
  w.end();

  if (w.replaced > 0) c.warnings.push(`${w.replaced} character(s) that XML 1.0 cannot carry (control characters) were written as U+FFFD in names or memos`);
  if (s.folders.length > 0) c.warnings.push(`REFI-QDA has no source folders: the ${s.folders.length} folder(s) are not exported (the sources are)`);
  if (importance > 0) c.warnings.push(`REFI-QDA has no importance: ${importance} segment(s) marked important are exported without it`);
  if (s.orphan_count > 0) c.warnings.push(`${s.orphan_count} segment(s) set aside after outside edits (orphaned) are not exported`);
  return { xml: w.toString(), texts: b.texts, media: b.embedded, counts: b.counts, warnings: c.warnings };
}

/** Opens `Project` and writes `Users`: every coder the document names (Users comes first in the schema's order). */
function writeUsers({ s, c, w, counts }: QdeBuild): void {
  const users = new Set<string>([s.user]);
  for (const x of [...s.sources, ...s.segments, ...s.av_segments, ...s.case_segments]) users.add(x.owner);
  w.start('Project', {
    xmlns: REFI_PROJECT_NS,
    'xmlns:xsi': 'http://www.w3.org/2001/XMLSchema-instance',
    'xsi:schemaLocation': `${REFI_PROJECT_NS} ${REFI_PROJECT_SCHEMA_LOCATION}`,
    name: s.name,
    origin: EXPORT_ORIGIN,
    creatingUserGUID: s.guids.guid('user', s.user),
    creationDateTime: dateTime(s.taken_at),
    basePath: '',
  });
  w.start('Users');
  for (const u of [...users].sort()) {
    counts.users++;
    w.empty('User', { guid: c.user(u), name: u });
  }
  w.end();
}

/**
 * Writes `Variables` and fills `b.variables`: one per attribute name, case and document attributes alike (a
 * REFI Variable may have values on cases and on sources).
 */
function writeVariables(b: QdeBuild): void {
  const { s, c, w, variables } = b;
  const byName = new Map<string, { type: AttributeType; value: AttributeValue }[]>();
  for (const a of [...s.attributes, ...s.source_attributes]) {
    const list = byName.get(a.name) ?? [];
    list.push({ type: a.type, value: a.value });
    byName.set(a.name, list);
  }
  for (const [name, values] of [...byName.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
    const t = variableType(values);
    if (t.mixed)
      c.warnings.push(
        `The attribute "${name}" has values of several types (${[...new Set(values.map((v) => v.type))].join(', ')}); it is exported as a Text variable`,
      );
    variables.set(name, { guid: s.guids.guid('variable', name), type: t.type });
  }
  if (variables.size > 0) {
    w.start('Variables');
    for (const [name, { guid, type }] of variables) w.empty('Variable', { guid, name, typeOfVariable: type });
    w.end();
    b.counts.variables = variables.size;
  }
}

/** One `VariableValue` per attribute that has a Variable. */
function writeVariableValues({ w, variables }: QdeBuild, attributes: readonly { name: string; value: AttributeValue }[]): void {
  for (const a of attributes) {
    const v = variables.get(a.name);
    if (!v) continue;
    const [element, literal] = variableValue(v.type, a.value);
    w.start('VariableValue').empty('VariableRef', { targetGUID: v.guid }).text(element, literal).end();
  }
}

/** Writes `Cases`: each with its memo, attribute values, whole sources and ranges. */
function writeCases(b: QdeBuild): void {
  const { s, w, counts } = b;
  if (s.cases.length === 0) return;
  const sourcesByCase = groupBy(s.case_sources, (m) => m.case_id);
  const rangesByCase = groupBy(s.case_segments, (r) => r.case_id);
  const attributesByCase = groupBy(s.attributes, (a) => a.case_id);
  w.start('Cases');
  for (const k of s.cases) {
    counts.cases++;
    w.start('Case', { guid: s.guids.guid('case', k.case_id), name: k.name });
    if (k.memo) w.text('Description', k.memo);
    writeVariableValues(b, attributesByCase.get(k.case_id) ?? []);
    for (const m of sourcesByCase.get(k.case_id) ?? []) w.empty('SourceRef', { targetGUID: s.guids.guid('source', m.source_id) });
    for (const r of rangesByCase.get(k.case_id) ?? []) w.empty('SelectionRef', { targetGUID: s.guids.guid('case_selection', r.case_segment_id) });
    w.end();
  }
  w.end();
}

/** Writes `Sources`, each with its selections; returns how many segments marked important lose that mark. */
function writeSources(b: QdeBuild, media: Map<number, MediaPlacement>): number {
  const { s, w } = b;
  const by = {
    segments: groupBy(s.segments, (g) => g.source_id),
    av: groupBy(s.av_segments, (g) => g.source_id),
    ranges: groupBy(s.case_segments, (r) => r.source_id),
    attributes: groupBy(s.source_attributes, (a) => a.source_id),
  };
  let importance = 0;
  if (s.sources.length > 0) w.start('Sources');
  for (const src of s.sources) {
    const segs = by.segments.get(src.source_id) ?? [];
    importance += segs.filter((g) => g.importance > 0).length;
    writeSource(b, src, media.get(src.source_id), {
      segments: segs,
      av: by.av.get(src.source_id) ?? [],
      ranges: by.ranges.get(src.source_id) ?? [],
      attributes: by.attributes.get(src.source_id) ?? [],
    });
  }
  if (s.sources.length > 0) w.end();
  return importance;
}

/** One source element (`TextSource`, `PDFSource`, `PictureSource`, `AudioSource`, `VideoSource`) with its selections. */
function writeSource(
  b: QdeBuild,
  src: SnapshotSource,
  place: MediaPlacement | undefined,
  of: { segments: Segment[]; av: AvSegment[]; ranges: CaseSegment[]; attributes: { name: string; value: AttributeValue }[] },
): void {
  const { s, c, w, counts, texts } = b;
  counts.sources++;
  const guid = s.guids.guid('source', src.source_id);
  const segs = of.segments;
  const common = { guid, name: src.name, creatingUser: c.user(src.owner), creationDateTime: dateTime(src.created_at) };
  // the source's memo, then its document attributes: the last children of every source element in the schema
  const memoRef = () => {
    if (src.memo) w.empty('NoteRef', { targetGUID: c.note(`source:${src.source_id}`, `Memo: ${src.name}`, src.owner, src.created_at, src.memo) });
    writeVariableValues(b, of.attributes);
  };
  if (place && place.mode !== 'internal') c.warnings.push(place.reason);
  if (place?.mode === 'internal') b.embedded.push({ entry: place.entry, file: place.file });
  const filePath = place && place.mode !== 'none' ? place.path : undefined;
  const currentPath = place && place.mode === 'internal' ? absoluteUrl(place.file) : undefined;
  if (src.type === 'text' || (src.type !== 'pdf' && src.text !== null && segs.length > 0)) {
    // a media source holding text and text codings (not made by Marginalia's own tools) is exported as its text
    texts.push({ entry: `sources/${guid}.txt`, text: src.text ?? '' });
    w.start('TextSource', {
      guid,
      name: src.name,
      plainTextPath: `internal://${guid}.txt`,
      creatingUser: common.creatingUser,
      creationDateTime: common.creationDateTime,
    });
    writeTextSelections(w, s, c, src.name, textSelections(s, segs, of.ranges), counts);
    memoRef();
    w.end();
    if (src.type !== 'text') c.warnings.push(`The ${src.type} source "${src.name}" holds text and text codings; it is exported as a text source`);
  } else if (src.type === 'pdf') {
    w.start('PDFSource', { ...common, path: filePath, currentPath });
    if (src.text !== null) {
      const rep = deriveGuid(s.guids.projectGuid, 'representation', src.source_id);
      texts.push({ entry: `sources/${rep}.txt`, text: src.text });
      w.start('Representation', {
        guid: rep,
        name: src.name,
        plainTextPath: `internal://${rep}.txt`,
        creatingUser: common.creatingUser,
        creationDateTime: common.creationDateTime,
      });
      writeTextSelections(w, s, c, src.name, textSelections(s, segs, of.ranges), counts);
      w.end();
    }
    memoRef();
    w.end();
  } else if (src.type === 'image') {
    w.start('PictureSource', { ...common, path: filePath, currentPath });
    memoRef();
    w.end();
  } else {
    w.start(src.type === 'audio' ? 'AudioSource' : 'VideoSource', { ...common, path: filePath, currentPath });
    writeAvSelections(w, s, c, src.type === 'audio' ? 'AudioSelection' : 'VideoSelection', src.name, of.av, counts);
    memoRef();
    w.end();
  }
}

/** Writes `Notes`: the memos registered while the rest was written. */
function writeNotes({ s, c, w, counts }: QdeBuild): void {
  if (c.notes.length === 0) return;
  w.start('Notes');
  for (const note of c.notes) {
    w.start('Note', { guid: note.guid, name: note.name, creatingUser: s.guids.guid('user', note.owner), creationDateTime: dateTime(note.created_at) });
    w.text('PlainTextContent', note.text);
    w.end();
  }
  w.end();
  counts.notes = c.notes.length;
}

/**
 * The bytes of a source's text file in the `.qdpx`: UTF-8 (REFI-QDA 9.1.2) without a byte-order mark, except
 * that a text beginning with U+FEFF gets one in front: readers (NVivo's files, Marginalia's importer) take one
 * leading byte-order mark as the encoding's signature and drop it, so the text's own U+FEFF comes back whole and
 * every position stays where it was.
 */
export function textFileBytes(text: string): Buffer {
  return Buffer.from(text.charCodeAt(0) === 0xfeff ? `\uFEFF${text}` : text, 'utf8');
}

/**
 * Writes the project as a `.qdpx` file at `file` (atomically, see `atomically`): a zip holding `project.qde`
 * and a `sources/` folder with the texts and the embedded media (REFI-QDA section 8.1; texts deflated, media
 * stored as they are and streamed from disk, so large media never sit in memory whole).
 */
export async function exportQdpx(
  snapshot: ProjectSnapshot,
  file: string,
  atomically: (file: string, write: (tmp: string) => Promise<void>) => Promise<void>,
): Promise<{ bytes: number; counts: RefiCounts; warnings: string[] }> {
  const media = await placeMedia(snapshot);
  const qde = buildProjectQde(snapshot, media);
  const zip = new JSZip();
  zip.file('project.qde', qde.xml, { compression: 'DEFLATE' });
  for (const t of qde.texts) zip.file(t.entry, textFileBytes(t.text), { compression: 'DEFLATE' });
  for (const m of qde.media) zip.file(m.entry, createReadStream(m.file), { compression: 'STORE', binary: true });
  await atomically(file, async (tmp) => {
    await pipeline(zip.generateNodeStream({ type: 'nodebuffer', streamFiles: true, platform: 'UNIX' }), createWriteStream(tmp));
  });
  return { bytes: (await fs.stat(file)).size, counts: qde.counts, warnings: qde.warnings };
}

/** The codebook as a `.qdc` file (`urn:QDA-XML:codebook:1.0`, standard section 5.2): categories and codes, nested. */
export function exportQdc(snapshot: ProjectSnapshot): { xml: string; counts: { codes: number; categories: number }; warnings: string[] } {
  const w = new XmlWriter();
  w.start('CodeBook', { xmlns: REFI_CODEBOOK_NS, origin: EXPORT_ORIGIN });
  w.start('Codes');
  const { warnings, ...counts } = writeCodes(w, snapshot);
  w.end().end();
  if (w.replaced > 0) warnings.push(`${w.replaced} character(s) that XML 1.0 cannot carry were written as U+FFFD`);
  return { xml: w.toString(), counts, warnings };
}

function groupBy<T, K>(items: readonly T[], key: (t: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const t of items) {
    const k = key(t);
    const list = out.get(k);
    if (list) list.push(t);
    else out.set(k, [t]);
  }
  return out;
}
