/**
 * Reading the sources of a REFI-QDA project into a plan (refiImport.ts, refiReader.ts): text sources with their
 * selections and codings (positions converted to code points, checked against their quotes), media sources with
 * their files and audio and video codings, and the text sources whose text is missing.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { OffsetMap } from '../../core/offsets';
import { ToolError } from '../../core/errors';
import { codePointLength, toWellFormed } from '../../core/text';
import { normalizeGuid } from '../../domain/exchangeIds';
import type { PlannedAnchoring, PlannedAttribute, PlannedMediaSource } from '../importers/plan';
import { memoOf, skip, warn } from '../importers/plan';
import { QuoteAnchorer } from '../reanchor';
import { positionConverter } from './offsets';
import {
  anchorSelection,
  attr,
  child,
  decodeText,
  joinMemos,
  list,
  locate,
  MEDIA_MIME,
  readBytes,
  refiTime,
  textOf,
  type Node,
  type TextAnchor,
} from './refiFile';
import type { RefiUnplacedSelection } from './refiImport';
import { attributesOf, codeNameOf, codeOf, codesPhrase, notesOf, ownerOf, type RefiRead } from './refiReader';

/** A source's name: its `name`, else `fallback`, else `Source <guid or number>`. */
function sourceName(rd: RefiRead, node: Node, guid: string | null, fallback: string): string {
  return (attr(node, 'name') ?? '').trim() || fallback || `Source ${guid ? guid.slice(0, 8) : ++rd.anon}`;
}

/**
 * Reads the text of a TextSource-typed element (inline, or from its plainTextPath): the text, or where it was
 * looked for (`file_missing` false when the element names no plain text at all).
 */
async function readText(rd: RefiRead, node: Node, what: string): Promise<{ text: string } | { where: string; file_missing: boolean }> {
  const { c, missing } = rd;
  const basePath = attr(rd.top, 'basePath');
  const inline = textOf(node, 'PlainTextContent');
  if (inline !== null) return { text: toWellFormed(inline) };
  const p = attr(node, 'plainTextPath');
  if (!p) {
    const rich = attr(node, 'richTextPath');
    return {
      where: rich ? `it names only a rich-text file (${rich}), no plain text` : 'it has neither PlainTextContent nor a plainTextPath',
      file_missing: false,
    };
  }
  const loc = await locate(c, p, basePath);
  const bytes = await readBytes(loc);
  if (!bytes) {
    const where = loc.kind === 'missing' ? loc.where : p;
    missing.push(`${what}: ${where}`);
    return { where, file_missing: true };
  }
  return { text: toWellFormed(decodeText(bytes)) };
}

/** Records a text source whose text is missing, with its codings that cannot be placed (counted as skipped). */
function missingSource(rd: RefiRead, textNode: Node, name: string, guid: string | null, where: string, fileMissing: boolean) {
  const { plan, counts } = rd;
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
    unplaced.push({
      selection_guid: normalizeGuid(attr(sel, 'guid')),
      start_position: pos('startPosition'),
      end_position: pos('endPosition'),
      codes: [...new Set(codings.map((coding) => codeNameOf(rd, coding)))],
    });
  }
  for (const coding of list(textNode, 'Coding')) {
    counts.text_codings++;
    unplaced.push({ selection_guid: null, start_position: null, end_position: null, codes: [codeNameOf(rd, coding)] });
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
}

/** One re-anchoring helper per source text (its maps built once, when a selection first carries a candidate quote). */
function anchorerOf(rd: RefiRead, ref: string, text: string): () => TextAnchor {
  return () => {
    let a = rd.anchorers.get(ref);
    if (!a) rd.anchorers.set(ref, (a = { map: new OffsetMap(text), anchorer: new QuoteAnchorer(text) }));
    return a;
  };
}

/**
 * The plan's segments of a text (its selections and whole-text codings); positions converted, then checked
 * against the selection's quote when it carries one ({@link anchorSelection}).
 */
function readSelections(rd: RefiRead, node: Node, ref: string, sourceName: string, text: string) {
  const { plan, counts, options, convention, selections } = rd;
  const conv = positionConverter(text, convention);
  const length = codePointLength(text);
  for (const sel of list(node, 'PlainTextSelection')) {
    counts.text_selections++;
    const selGuid = normalizeGuid(attr(sel, 'guid'));
    const rawStart = Number(attr(sel, 'startPosition'));
    const rawEnd = Number(attr(sel, 'endPosition'));
    const codings = list(sel, 'Coding');
    counts.text_codings += codings.length;
    const which = () =>
      `selection ${selGuid ?? attr(sel, 'guid') ?? `[${attr(sel, 'startPosition')}, ${attr(sel, 'endPosition')})`} of ${codesPhrase(rd, codings)} in source '${sourceName}'`;
    if (!Number.isInteger(rawStart) || !Number.isInteger(rawEnd) || rawStart < 0) {
      skip(plan, 'selections_with_invalid_positions');
      warn(
        plan,
        `${which()} has invalid positions (startPosition "${attr(sel, 'startPosition') ?? ''}", endPosition "${attr(sel, 'endPosition') ?? ''}") and was left out`,
      );
      continue;
    }
    const storedStart = conv(rawStart);
    const storedEnd = conv(rawEnd);
    if (storedEnd === storedStart) {
      skip(plan, 'selections_of_zero_length');
      continue;
    }
    const description = textOf(sel, 'Description');
    const quoted = options.reanchor === false ? null : anchorSelection(anchorerOf(rd, ref, text), attr(sel, 'name'), description, storedStart, storedEnd);
    const anchored = (status: PlannedAnchoring['status']) => {
      for (const coding of codings) {
        const g = normalizeGuid(attr(child(coding, 'CodeRef'), 'targetGUID'));
        plan.quote_anchoring.push({
          status,
          source: ref,
          code: g,
          code_name: codeNameOf(rd, coding),
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
      warn(
        plan,
        `${which()} is outside its text (${length} code points): [${rawStart}, ${rawEnd}) was left out${quoted ? ' (its quote is not in the text either)' : ''}`,
      );
      anchored('unplaceable');
      continue;
    }
    if (quoted && quoted.status !== 'exact') anchored(quoted.status);
    const start = quoted?.start_pos ?? storedStart;
    const end = quoted?.end_pos ?? storedEnd;
    const selOwner = ownerOf(rd, attr(sel, 'creatingUser'));
    const selTime = refiTime(attr(sel, 'creationDateTime'));
    const selNoteGuids: string[] = [];
    // a Description that is the coded text (the quote) is not a memo
    const selMemo = [quoted?.from === 'description' && quoted.status !== 'kept_offsets' ? null : description, ...notesOf(rd, sel, selNoteGuids)];
    if (selGuid) selections.set(selGuid, { source: ref, start, end, owner: selOwner, created_at: selTime, coded: codings.length > 0 });
    for (const c of codingsOfSelection(rd, codings, { memo: selMemo, noteGuids: selNoteGuids, owner: selOwner, time: selTime })) {
      plan.segments.push({
        code: c.code,
        source: ref,
        start_pos: start,
        end_pos: end,
        memo: c.memo,
        note_guid: c.note_guid,
        importance: 0,
        owner: c.owner,
        created_at: c.created_at,
        guid: c.guid,
        selection_guid: selGuid,
      });
    }
  }
  for (const coding of list(node, 'Coding')) {
    counts.text_codings++;
    const code = codeOf(rd, coding);
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
      memo: joinMemos(notesOf(rd, coding, noteGuids)),
      note_guid: noteGuids[0] ?? null,
      importance: 0,
      owner: ownerOf(rd, attr(coding, 'creatingUser')),
      created_at: refiTime(attr(coding, 'creationDateTime')),
      guid: normalizeGuid(attr(coding, 'guid')),
      selection_guid: null,
    });
  }
}

/** A media file of a source: extracted from the zip into `mediaDir`, or the external file; null when unavailable. */
async function mediaFile(rd: RefiRead, node: Node, guid: string | null, name: string): Promise<{ file: string | null; size: number | null; ext: string }> {
  const { plan, c } = rd;
  const basePath = attr(rd.top, 'basePath');
  const mediaDir = path.join(path.dirname(rd.file), `${path.basename(rd.file)}.media`);
  const p = attr(node, 'path') ?? attr(node, 'currentPath');
  if (!p) return { file: null, size: null, ext: '' };
  let loc = await locate(c, p, basePath);
  if (loc.kind === 'missing' && attr(node, 'currentPath') && p !== attr(node, 'currentPath'))
    loc = await locate(c, attr(node, 'currentPath') as string, basePath);
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
  const stem = guid ?? `source-${++rd.anon}`;
  for (let n = 1; ; n++) {
    const target = path.join(mediaDir, `${stem}${n === 1 ? '' : `-${n}`}${ext}`);
    const existing = await fs.readFile(target).catch(() => null);
    if (existing !== null && !Buffer.from(bytes).equals(existing)) continue;
    if (existing === null) await fs.writeFile(target, bytes, { flag: 'wx' });
    plan.refi.media_dir = mediaDir;
    return { file: target, size: bytes.length, ext };
  }
}

async function addTextSource(
  rd: RefiRead,
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
) {
  const { plan, file, producer } = rd;
  const read = await readText(rd, textNode, `the text of "${name}"`);
  if (!('text' in read)) {
    missingSource(rd, textNode, name, guid, read.where, read.file_missing);
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
    owner: ownerOf(rd, attr(node, 'creatingUser')),
    guid,
    created_at: refiTime(attr(node, 'creationDateTime')),
    type,
    file_path: media?.file ?? null,
    mime: type === 'pdf' ? 'application/pdf' : 'text/plain',
    note_guid: noteGuid,
    attributes,
  });
  readSelections(rd, textNode, ref, name, text);
  return true;
}

function mediaSource(
  rd: RefiRead,
  node: Node,
  type: PlannedMediaSource['type'],
  guid: string | null,
  ref: string,
  name: string,
  memo: string | null,
  f: { file: string | null; size: number | null; ext: string },
  noteGuid: string | null,
  attributes: PlannedAttribute[],
) {
  const { plan, file, producer } = rd;
  plan.media_sources.push({
    ref,
    name,
    type,
    memo,
    origin: `REFI-QDA: ${path.basename(file)}${producer ? ` (${producer})` : ''}`,
    file_path: f.file,
    mime: MEDIA_MIME[f.ext] ?? null,
    size_bytes: f.size,
    owner: ownerOf(rd, attr(node, 'creatingUser')),
    guid,
    created_at: refiTime(attr(node, 'creationDateTime')),
    note_guid: noteGuid,
    attributes,
  });
}

/**
 * Reads the project's sources: text sources (and PDFs with a text representation) with their selections and
 * codings, media sources (media files extracted or found) with their audio and video codings; a text source
 * whose text is missing is listed, and under `strict` fails the import.
 * Errors: IMPORT_FAILED (strict, and a text file is missing: nothing is imported).
 */
export async function readSources(rd: RefiRead): Promise<void> {
  const { plan, counts, options, missing, sourceRefs } = rd;
  const sourcesNode = child(rd.top, 'Sources');
  const elementKinds = ['TextSource', 'PDFSource', 'PictureSource', 'AudioSource', 'VideoSource'] as const;
  for (const element of elementKinds) {
    for (const node of list(sourcesNode, element)) {
      counts.sources++;
      const guid = normalizeGuid(attr(node, 'guid'));
      const ref = guid ?? `anon-source:${++rd.anon}`;
      const name = sourceName(rd, node, guid, '');
      const sourceNotes: string[] = [];
      const memo = joinMemos([textOf(node, 'Description'), ...notesOf(rd, node, sourceNotes)]);
      const noteGuid = sourceNotes[0] ?? null;
      const vars = attributesOf(rd, node, `the source "${name}"`);
      let added = true;
      if (element === 'TextSource') {
        added = await addTextSource(rd, node, 'text', node, guid, ref, name, memo, null, noteGuid, vars);
      } else if (element === 'PDFSource') {
        const f = await mediaFile(rd, node, guid, name);
        const rep = child(node, 'Representation');
        skip(plan, 'pdf_region_selections', list(node, 'PDFSelection').length);
        if (rep && (textOf(rep, 'PlainTextContent') !== null || attr(rep, 'plainTextPath')))
          added = await addTextSource(rd, node, 'pdf', rep, guid, ref, name, memo, f, noteGuid, vars);
        else mediaSource(rd, node, 'pdf', guid, ref, name, memo, f, noteGuid, vars);
        for (const coding of list(node, 'Coding')) if (codeOf(rd, coding) !== null) skip(plan, 'codings_of_whole_media_sources');
      } else {
        const type = element === 'PictureSource' ? 'image' : element === 'AudioSource' ? 'audio' : 'video';
        const f = await mediaFile(rd, node, guid, name);
        mediaSource(rd, node, type, guid, ref, name, memo, f, noteGuid, vars);
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
              `${type} selection ${normalizeGuid(attr(sel, 'guid')) ?? attr(sel, 'guid') ?? ''} of ${codesPhrase(rd, codings)} in source '${name}' has invalid times (begin "${attr(sel, 'begin') ?? ''}", end "${attr(sel, 'end') ?? ''}" ms) and was left out`,
            );
            continue;
          }
          const selOwner = ownerOf(rd, attr(sel, 'creatingUser'));
          const selTime = refiTime(attr(sel, 'creationDateTime'));
          const transcript = memoOf(textOf(sel, 'Description'));
          const selNoteGuids: string[] = [];
          const selNotes = notesOf(rd, sel, selNoteGuids);
          if (codings.length === 0) skip(plan, 'uncoded_av_selections');
          for (const c of codingsOfSelection(rd, codings, { memo: selNotes, noteGuids: selNoteGuids, owner: selOwner, time: selTime })) {
            plan.av_segments.push({
              code: c.code,
              source: ref,
              start_ms: begin,
              end_ms: end,
              transcript,
              memo: c.memo,
              note_guid: c.note_guid,
              owner: c.owner,
              created_at: c.created_at,
              guid: c.guid,
              selection_guid: normalizeGuid(attr(sel, 'guid')),
            });
          }
        }
        for (const coding of list(node, 'Coding')) if (codeOf(rd, coding) !== null) skip(plan, 'codings_of_whole_media_sources');
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
}

/**
 * The codings of one selection whose code is known, in order, each with what it adds to the selection's own:
 * memo (the selection's memo parts, then the coding's notes), note GUID, owner and time (the coding's, else the
 * selection's).
 */
function codingsOfSelection(
  rd: RefiRead,
  codings: Node[],
  sel: { memo: (string | null | undefined)[]; noteGuids: string[]; owner: string | null; time: string | null },
): { code: string; memo: string | null; note_guid: string | null; owner: string | null; created_at: string | null; guid: string | null }[] {
  const out = [];
  for (const coding of codings) {
    const code = codeOf(rd, coding);
    if (code === null) continue;
    const noteGuids: string[] = [];
    const codingNotes = notesOf(rd, coding, noteGuids);
    out.push({
      code,
      memo: joinMemos([...sel.memo, ...codingNotes]),
      note_guid: noteGuids[0] ?? sel.noteGuids[0] ?? null,
      owner: ownerOf(rd, attr(coding, 'creatingUser')) ?? sel.owner,
      created_at: refiTime(attr(coding, 'creationDateTime')) ?? sel.time,
      guid: normalizeGuid(attr(coding, 'guid')),
    });
  }
  return out;
}
