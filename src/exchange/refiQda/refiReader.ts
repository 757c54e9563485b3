/**
 * The steps of reading a REFI-QDA file into a plan (refiImport.ts): coders and notes, the codebook, variables,
 * cases, and what is left out; the sources are refiSources.ts. Each step takes the {@link RefiRead} the steps
 * share and adds to its plan.
 */
import { normalizeGuid } from '../../domain/exchangeIds';
import type { ImportOptions, PlannedAttribute, PlannedCase } from '../importers/plan';
import { memoOf, normalizeColor, skip, warn } from '../importers/plan';
import type { OffsetConvention } from './offsets';
import { attr, child, joinMemos, list, locate, readBytes, decodeText, textOf, variableValueOf, type Container, type Node, type TextAnchor } from './refiFile';
import type { RefiFileCounts, RefiImportPlan } from './refiImport';

/** A text selection as read, positions already in code points, for cases that refer to it. */
export interface SelectionInfo {
  source: string;
  start: number;
  end: number;
  owner: string | null;
  created_at: string | null;
  coded: boolean;
}

/** One REFI-QDA file being read: what the reading steps share. */
export interface RefiRead {
  file: string;
  options: ImportOptions;
  c: Container;
  /** the `Project` (or `CodeBook`) element */
  top: Node;
  plan: RefiImportPlan;
  counts: RefiFileCounts;
  convention: OffsetConvention;
  producer: string | null;
  /** numbers the items without a GUID */
  anon: number;
  /** coder names by GUID */
  users: Map<string, string>;
  /** note texts by GUID, and the GUIDs referred to */
  notes: Map<string, string>;
  noteRefsSeen: Set<string>;
  /** codable codes by ref; every Code's name by ref (for messages); refs of Codes that are not codable */
  codeRefs: Map<string, string>;
  codeNames: Map<string, string>;
  notCodable: Set<string>;
  variables: Map<string, { name: string; type: string | null }>;
  /** text selections by GUID, for cases */
  selections: Map<string, SelectionInfo>;
  /** the refs of the sources imported */
  sourceRefs: Set<string>;
  /** what strict refuses: "the text of "X": where" for each text file named but not found */
  missing: string[];
  /** one re-anchoring helper per source text */
  anchorers: Map<string, TextAnchor>;
}

/** The state of reading `top` of `file` into `plan`. */
export function newRead(
  file: string,
  options: ImportOptions,
  c: Container,
  top: Node,
  plan: RefiImportPlan,
  producer: string | null,
  convention: OffsetConvention,
): RefiRead {
  return {
    file,
    options,
    c,
    top,
    plan,
    counts: plan.refi.file_counts,
    convention,
    producer,
    anon: 0,
    users: new Map(),
    notes: new Map(),
    noteRefsSeen: new Set(),
    codeRefs: new Map(),
    codeNames: new Map(),
    notCodable: new Set(),
    variables: new Map(),
    selections: new Map(),
    sourceRefs: new Set(),
    missing: [],
    anchorers: new Map(),
  };
}

/** Reads the file's users (coders, by GUID) and notes (memos, by GUID; a note's text inline or from its file). */
export async function readUsersAndNotes(rd: RefiRead): Promise<void> {
  const { plan, counts, users, notes, c, top } = rd;
  for (const u of list(child(top, 'Users'), 'User')) {
    counts.users++;
    const guid = normalizeGuid(attr(u, 'guid'));
    if (!guid) continue;
    const name = (attr(u, 'name') ?? '').trim() || (attr(u, 'id') ?? '').trim() || `user ${guid.slice(0, 8)}`;
    users.set(guid, name);
    plan.users.push({ guid, name });
  }
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
}

/** The name of the coder a `creatingUser` GUID names, or null. */
export function ownerOf(rd: RefiRead, raw: string | null): string | null {
  const g = normalizeGuid(raw);
  return g ? (rd.users.get(g) ?? null) : null;
}

/** The texts of the notes `node` refers to (marked as referred to); their GUIDs are added to `guids`. */
export function notesOf(rd: RefiRead, node: Node | undefined, guids?: string[]): string[] {
  const out: string[] = [];
  for (const r of list(node, 'NoteRef')) {
    const g = normalizeGuid(attr(r, 'targetGUID'));
    if (!g) continue;
    rd.noteRefsSeen.add(g);
    const t = rd.notes.get(g);
    if (t) {
      out.push(t);
      guids?.push(g);
    } else if (t === undefined) skip(rd.plan, 'note_refs_to_missing_notes');
  }
  return out;
}

/**
 * Reads the codebook: a `Code` with children, or one that is not codable, is a category (a codable one is also
 * a code, its twin, in that category); any other `Code` is a code.
 */
export function readCodebook(rd: RefiRead, kind: 'project' | 'codebook'): void {
  const { plan, counts, codeRefs, codeNames, notCodable, top } = rd;
  const walk = (code: Node, parentCategory: string | null) => {
    counts.codes++;
    const guid = normalizeGuid(attr(code, 'guid'));
    const ref = guid ?? `anon-code:${++rd.anon}`;
    const name = attr(code, 'name') ?? '';
    codeNames.set(ref, name);
    const kids = list(code, 'Code');
    const codable = !/^(false|0)$/i.test((attr(code, 'isCodable') ?? 'true').trim());
    const memo = joinMemos([textOf(code, 'Description'), ...notesOf(rd, code)]);
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
}

/** The code ref a `Coding` applies, or null (counted: a code the codebook lacks, or one that is not codable). */
export function codeOf(rd: RefiRead, coding: Node): string | null {
  const g = normalizeGuid(attr(child(coding, 'CodeRef'), 'targetGUID'));
  if (g && rd.codeRefs.has(g)) return g;
  skip(rd.plan, g && rd.notCodable.has(g) ? 'codings_of_non_codable_codes' : 'codings_of_unknown_codes');
  return null;
}

/** The name of the code a `Coding` applies, for messages (`unknown code <guid>` when the codebook lacks it). */
export function codeNameOf(rd: RefiRead, coding: Node): string {
  const g = normalizeGuid(attr(child(coding, 'CodeRef'), 'targetGUID'));
  return (g ? rd.codeNames.get(g) : undefined) ?? `unknown code ${g ?? attr(child(coding, 'CodeRef'), 'targetGUID') ?? '(none)'}`;
}

/** `code 'X'` or `codes 'X', 'Y'` for the codings of a selection (`no code` when it has none). */
export function codesPhrase(rd: RefiRead, codings: Node[]): string {
  const names = [...new Set(codings.map((coding) => codeNameOf(rd, coding)))];
  return names.length === 0 ? 'no code' : `${names.length === 1 ? 'code' : 'codes'} ${names.map((n) => `'${n}'`).join(', ')}`;
}

/** Reads the project's variables (by GUID, with their declared types). */
export function readVariables(rd: RefiRead): void {
  for (const v of list(child(rd.top, 'Variables'), 'Variable')) {
    rd.counts.variables++;
    const guid = normalizeGuid(attr(v, 'guid'));
    if (!guid) continue;
    rd.variables.set(guid, { name: attr(v, 'name') ?? 'variable', type: attr(v, 'typeOfVariable') });
    rd.plan.variables.push({ guid, name: attr(v, 'name') ?? 'variable' });
  }
}

/** The typed attributes of `node`'s `VariableValue`s (`where` names the node in warnings); unreadable ones are counted. */
export function attributesOf(rd: RefiRead, node: Node, where: string): PlannedAttribute[] {
  const { plan } = rd;
  const out: PlannedAttribute[] = [];
  for (const vv of list(node, 'VariableValue')) {
    const g = normalizeGuid(attr(child(vv, 'VariableRef'), 'targetGUID'));
    const def = g ? rd.variables.get(g) : undefined;
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
}

/** Reads the cases: memo, whole sources (`SourceRef`), ranges (`SelectionRef` to a text selection), attributes. */
export function readCases(rd: RefiRead): void {
  const { plan, counts, sourceRefs, selections, top } = rd;
  for (const k of list(child(top, 'Cases'), 'Case')) {
    counts.cases++;
    const guid = normalizeGuid(attr(k, 'guid'));
    const name = (attr(k, 'name') ?? '').trim() || `Case ${guid ? guid.slice(0, 8) : ++rd.anon}`;
    const kase: PlannedCase = {
      name,
      memo: memoOf(textOf(k, 'Description')),
      sources: [],
      ranges: [],
      attributes: attributesOf(rd, k, `the case "${name}"`),
      guid,
    };
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
    plan.cases.push(kase);
  }
}

/** Counts what the project holds that Marginalia leaves out (REFI-QDA section 7 asks importers to say so). */
export function countLeftOut(rd: RefiRead): void {
  const { plan, selections, notes, noteRefsSeen, top } = rd;
  const referencedSelections = new Set<string>();
  for (const k of plan.cases) for (const r of k.ranges) if (r.selection_guid) referencedSelections.add(r.selection_guid);
  for (const [g, sel] of selections) if (!sel.coded && !referencedSelections.has(g)) skip(plan, 'uncoded_selections');
  for (const g of notes.keys()) if (!noteRefsSeen.has(g)) skip(plan, 'notes_attached_to_nothing');
  skip(plan, 'sets', list(child(top, 'Sets'), 'Set').length);
  skip(plan, 'links', list(child(top, 'Links'), 'Link').length);
  skip(plan, 'graphs', list(child(top, 'Graphs'), 'Graph').length);
  if (textOf(top, 'Description')) skip(plan, 'project_description');
  skip(plan, 'project_notes', list(top, 'NoteRef').length);
  if (rd.convention === 'utf16') warn(plan, `Text positions were converted from ${rd.producer}'s UTF-16 code units to code points`);
}
