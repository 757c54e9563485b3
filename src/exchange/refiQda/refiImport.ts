/**
 * REFI-QDA import: a `.qdpx` (zip with `project.qde` and a sources folder), a bare `.qde` (its sources found
 * beside it) or a `.qdc` codebook, read into an import plan (../importers/plan.ts) that ../importers/applyPlan.ts writes, as it writes every format's.
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
import * as path from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { isToolError, ToolError } from '../../core/errors';
import type { ImportOptions, ImportPlan, Importer, MergeRules } from '../importers/plan';
import { checkImportFile, emptyPlan, skip } from '../importers/plan';
import { offsetConventionOf, type OffsetConvention } from './offsets';
import { REFI_CODEBOOK_NS, REFI_PROJECT_NS } from './refiExport';
import { attr, child, list, openContainer, parser, rootOf, type Node } from './refiFile';
import { countLeftOut, newRead, readCases, readCodebook, readUsersAndNotes, readVariables } from './refiReader';
import { readSources } from './refiSources';

export { decodeText, plausibleQuote, refiTime, type QuotedSelection } from './refiFile';

// ----- the plan ---------------------------------------------------------------------------------------------

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

/** REFI-QDA's account of the file, carried by the plan (`ImportPlan.refi`) into the import report. */
export interface RefiFileInfo {
  /** the `origin` attribute: which tool wrote the file */
  producer: string | null;
  /** how the file counted text positions (converted to code points in the plan) */
  offset_convention: OffsetConvention;
  /** `project` for `.qdpx`/`.qde`, `codebook` for `.qdc` */
  kind: 'project' | 'codebook';
  file_counts: RefiFileCounts;
  /** where embedded media files were extracted, or null */
  media_dir: string | null;
  /** text sources whose text is missing (not imported), each with the codings that could not be placed */
  missing_sources: RefiMissingSource[];
}

/**
 * How a REFI-QDA import merges (../importers/plan.ts): items are told apart by GUID, so two items of the file
 * with the same name stay two; what the file refers to but does not hold is left out and counted; a value not of
 * its variable's type is kept as text; case attributes raise one case.attribute_set (the spec's AttributeSet) each.
 */
export const REFI_RULES: MergeRules = { same_names: 'keep_apart', unknown_refs: 'skip', mistyped_values: 'as_text', case_attribute_events: 'per_value' };

/** The plan of a REFI-QDA import: the common plan (../importers/plan.ts) with every REFI-QDA part present. */
export type RefiImportPlan = ImportPlan &
  Required<Pick<ImportPlan, 'refi' | 'users' | 'variables' | 'media_sources' | 'av_segments' | 'quote_anchoring' | 'rules'>>;

// ----- reading ----------------------------------------------------------------------------------------------

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
  if (valid !== true)
    throw new ToolError('IMPORT_FAILED', `${path.basename(file)} is not well-formed XML: ${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})`);
  const root = rootOf(c.xml);
  const kind =
    root.local === 'Project' && root.ns === REFI_PROJECT_NS ? 'project' : root.local === 'CodeBook' && root.ns === REFI_CODEBOOK_NS ? 'codebook' : null;
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
    users: [],
    variables: [],
    media_sources: [],
    av_segments: [],
    quote_anchoring: [],
    rules: REFI_RULES,
    refi: {
      producer,
      offset_convention: convention,
      kind,
      file_counts: { users: 0, codes: 0, sources: 0, text_selections: 0, text_codings: 0, av_selections: 0, cases: 0, variables: 0, notes: 0 },
      media_dir: null,
      missing_sources: [],
    },
  };
  const rd = newRead(file, options, c, top, plan, producer, convention);
  try {
    await readUsersAndNotes(rd);
    readCodebook(rd, kind);
    if (kind === 'codebook') {
      skip(plan, 'sets', list(child(top, 'Sets'), 'Set').length);
      return plan;
    }
    readVariables(rd);
    await readSources(rd);
    readCases(rd);
    countLeftOut(rd);
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
  description:
    'a REFI-QDA project (.qdpx, or a bare .qde with its sources folder beside it) or codebook (.qdc), as NVivo, ATLAS.ti, MAXQDA, QualCoder and Marginalia export them',
  plan: (filePath, options) => readRefiQda(filePath, options),
};
