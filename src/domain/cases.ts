import { ToolError } from '../core/errors';
import { sliceCp, toWellFormed } from '../core/text';
import { stampOf } from './codebook';
import type { DomainContext } from './events';
import type { AttributeType, AttributeValue, CaseAttribute, CaseSegment, CaseSourceLink, CaseWithCounts, ProjectRepository, SourceWithCounts } from './ports';
import { cleanName, nameKey } from './rules';
import { requireRangeInside, requireSource } from './sources';

/**
 * Cases: units of analysis (a participant, a household, a site) that hold whole sources, ranges of
 * sources and typed attributes (HTTP spec, section 2: "Case | case_id | attributes (typed: text, number,
 * date, boolean), linked sources, summary info"; agent-context spec, section 4: create_case, delete_case,
 * add_source_to_case, add_segment_to_case, set_case_attribute).
 *
 * Positions are Unicode code points of the source's stored text, half-open `[start_pos, end_pos)`.
 * Dates are ISO 8601 strings: a date `YYYY-MM-DD` or a datetime `YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM]`.
 */

type Ctx = DomainContext<ProjectRepository>;

/** Longest case name, in code points. */
export const MAX_CASE_NAME = 255;
/** Longest attribute name, in code points. */
export const MAX_ATTRIBUTE_NAME = 100;
/** The attribute types, in the spec's order. */
export const ATTRIBUTE_TYPES: readonly AttributeType[] = ['text', 'number', 'date', 'boolean'];

/** The case with id `id` and its counts, or CASE_NOT_FOUND. */
export function requireCase(ctx: Ctx, id: number): CaseWithCounts {
  const c = ctx.repo.getCase(id);
  if (!c) throw new ToolError('CASE_NOT_FOUND', `No case with case_id ${id}`);
  return c;
}

/**
 * Creates a case. Names are 1-255 code points and unique case-insensitively (compared through `nameKey`,
 * so "P01" and "p01 " collide); an empty memo is stored as null. Emits case.created {case_id, name, memo}.
 * Errors: DUPLICATE_NAME, INVALID_ARGUMENTS (empty, too long, or control characters in the name).
 */
export function createCase(ctx: Ctx, input: { name: string; memo?: string | null }): CaseWithCounts {
  const name = cleanName(input.name, MAX_CASE_NAME, 'case', 'INVALID_ARGUMENTS');
  const key = nameKey(name);
  const clash = ctx.repo.findCaseByKey(key);
  if (clash) throw new ToolError('DUPLICATE_NAME', `A case named "${clash.name}" already exists (case_id ${clash.case_id})`, { case_id: clash.case_id });
  const memo = input.memo === undefined || input.memo === null || input.memo === '' ? null : input.memo;
  const id = ctx.repo.insertCase(name, key, memo, stampOf(ctx));
  ctx.events.emit({ event_type: 'case.created', aggregate_type: 'case', aggregate_id: String(id), payload: { case_id: id, name, memo } });
  return requireCase(ctx, id);
}

/**
 * Deletes a case with its member sources, member ranges and attributes (the sources themselves and their
 * codings stay). Emits case.deleted {case_id, name, source_count, segment_count, attribute_count, memo, owner,
 * session_id, sources: [{source_id, owner, session_id}], segments: [{source_id, start, end, owner, session_id}],
 * attributes: [{name, type, value}]} (all after attribute_count: what re-creating the case needs, for undo in
 * src/domain/undoRedo.ts; positions in code points).
 * Errors: CASE_NOT_FOUND.
 */
export function deleteCase(ctx: Ctx, id: number): CaseWithCounts {
  const c = requireCase(ctx, id);
  const sources = ctx.repo.listCaseSources(id).map((l) => ({ source_id: l.source_id, owner: l.owner, session_id: l.session_id }));
  const segments = ctx.repo
    .listCaseSegments(id)
    .map((g) => ({ source_id: g.source_id, start: g.start_pos, end: g.end_pos, owner: g.owner, session_id: g.session_id }));
  const attributes = ctx.repo.listCaseAttributes(id).map((a) => ({ name: a.name, type: a.type, value: a.value }));
  ctx.repo.deleteCase(id);
  ctx.events.emit({
    event_type: 'case.deleted',
    aggregate_type: 'case',
    aggregate_id: String(id),
    payload: {
      case_id: id,
      name: c.name,
      source_count: c.source_count,
      segment_count: c.segment_count,
      attribute_count: c.attribute_count,
      memo: c.memo,
      owner: c.owner,
      session_id: c.session_id,
      sources,
      segments,
      attributes,
    },
  });
  return c;
}

/**
 * Links a whole source (of any type) to a case. Idempotent: linking it again writes nothing, emits nothing
 * and returns `added: false`. Emits case.member_added {case_id, source_id, segment_range: null}.
 * Errors: CASE_NOT_FOUND, SOURCE_NOT_FOUND.
 */
export function addSourceToCase(ctx: Ctx, caseId: number, sourceId: number): { case: CaseWithCounts; source: SourceWithCounts; added: boolean } {
  requireCase(ctx, caseId);
  const source = requireSource(ctx, sourceId);
  const added = ctx.repo.insertCaseSource(caseId, sourceId, stampOf(ctx));
  if (added) {
    ctx.repo.touchCase(caseId, ctx.now);
    ctx.events.emit({
      event_type: 'case.member_added',
      aggregate_type: 'case',
      aggregate_id: String(caseId),
      payload: { case_id: caseId, source_id: sourceId, source_name: source.name, segment_range: null },
    });
  }
  return { case: requireCase(ctx, caseId), source, added };
}

/**
 * Adds the range `[start_pos, end_pos)` (code points) of a text source to a case, storing the text it covers.
 * Adding exactly the same range again returns the existing range (`created: false`) and writes nothing.
 * Emits case.member_added {case_id, source_id, segment_range: {start, end}, case_segment_id, text}.
 *
 * Errors: CASE_NOT_FOUND, SOURCE_NOT_FOUND, INVALID_POSITION (negative, empty, past the end, or a source
 * without text).
 */
export function addSegmentToCase(
  ctx: Ctx,
  input: { case_id: number; source_id: number; start_pos: number; end_pos: number },
): { segment: CaseSegment; created: boolean } {
  requireCase(ctx, input.case_id);
  const source = requireSource(ctx, input.source_id);
  const text = ctx.repo.getSourceText(input.source_id);
  if (text === null) throw new ToolError('INVALID_POSITION', `The source "${source.name}" (${source.type}) has no text; link it whole with add_source_to_case`);
  const { start_pos: start, end_pos: end } = input;
  requireRangeInside(source, start, end);
  const existing = ctx.repo.findCaseSegment(input.case_id, input.source_id, start, end);
  if (existing) return { segment: existing, created: false };
  const segText = sliceCp(text, start, end);
  const id = ctx.repo.insertCaseSegment({ case_id: input.case_id, source_id: input.source_id, start_pos: start, end_pos: end, text: segText }, stampOf(ctx));
  ctx.repo.touchCase(input.case_id, ctx.now);
  ctx.events.emit({
    event_type: 'case.member_added',
    aggregate_type: 'case',
    aggregate_id: String(input.case_id),
    payload: { case_id: input.case_id, source_id: input.source_id, segment_range: { start, end }, case_segment_id: id, text: segText },
  });
  const segment = ctx.repo.getCaseSegment(id);
  if (!segment) throw new Error(`case segment ${id} vanished after insert`);
  return { segment, created: true };
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))?)?$/;

/**
 * True when `s` is an ISO 8601 calendar date `YYYY-MM-DD` or a datetime `YYYY-MM-DDTHH:MM[:SS[.fraction]][Z|±HH:MM]`
 * that exists (month 1-12, a day of that month with leap years, hour 0-23, minute and second 0-59).
 */
export function isIsoDate(s: string): boolean {
  const m = ISO_DATE.exec(s);
  if (!m) return false;
  const [, y, mo, d, h, mi, sec, oh, om] = m.map((x) => (x === undefined ? undefined : Number(x)));
  const year = y as number;
  const month = mo as number;
  const day = d as number;
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] as number;
  if (day > days) return false;
  if (h !== undefined && (h > 23 || (mi as number) > 59)) return false;
  if (sec !== undefined && sec > 59) return false;
  if (oh !== undefined && (oh > 23 || (om as number) > 59)) return false;
  return true;
}

/**
 * The type a value gets when none is given and the attribute is new: a JSON boolean is `boolean`, a
 * number `number`, a string that is an ISO 8601 date or datetime (see {@link isIsoDate}) `date`, any
 * other string `text` (so "42" stays text: pass type "number" to store it as a number).
 */
export function inferAttributeType(value: AttributeValue): AttributeType {
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return 'number';
  return isIsoDate(value.trim()) ? 'date' : 'text';
}

const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * `value` as a value of `type`, or INVALID_ARGUMENTS: text takes any value (numbers and booleans as their
 * JSON text); number takes a finite number or a decimal string; date takes an ISO 8601 date or datetime
 * string (trimmed); boolean takes true/false or the strings "true"/"false" (any case).
 */
export function coerceAttributeValue(value: AttributeValue, type: AttributeType, what = 'The value'): AttributeValue {
  const shown = JSON.stringify(value);
  switch (type) {
    case 'text':
      return typeof value === 'string' ? toWellFormed(value) : String(value);
    case 'number': {
      if (typeof value === 'number' && Number.isFinite(value)) return value;
      if (typeof value === 'string' && NUMERIC.test(value.trim())) {
        const n = Number(value.trim());
        if (Number.isFinite(n)) return n;
      }
      throw new ToolError('INVALID_ARGUMENTS', `${what} ${shown} is not a number`);
    }
    case 'date': {
      if (typeof value === 'string' && isIsoDate(value.trim())) return value.trim();
      throw new ToolError('INVALID_ARGUMENTS', `${what} ${shown} is not an ISO 8601 date (YYYY-MM-DD) or datetime (YYYY-MM-DDTHH:MM:SSZ)`);
    }
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
      throw new ToolError('INVALID_ARGUMENTS', `${what} ${shown} is not a boolean (true or false)`);
    }
  }
}

/** What {@link setCaseAttribute} did. `previous` is the attribute before, or null when it is new. */
export interface AttributeSet {
  attribute: CaseAttribute;
  previous: CaseAttribute | null;
  /** false: the attribute already had this type and value, and nothing was written */
  changed: boolean;
  /** true when the type was inferred from the value (new attribute, no type given) */
  inferred: boolean;
}

/**
 * Sets attribute `attribute_name` (1-100 code points, exact match) of a case to a typed value.
 * The type is, in order: `type` when given (changing an attribute's type is allowed this way); the
 * attribute's current type on this case (an attribute keeps its type); else inferred from the value
 * ({@link inferAttributeType}). The value is then converted to that type ({@link coerceAttributeValue}).
 * Setting the same type and value again writes nothing and emits nothing. Emits case.attribute_set
 * {case_id, name, type, value, old_type, old_value}.
 *
 * Errors: CASE_NOT_FOUND, INVALID_ARGUMENTS (bad name, or a value that is not of the type).
 */
export function setCaseAttribute(ctx: Ctx, input: { case_id: number; attribute_name: string; value: AttributeValue; type?: AttributeType }): AttributeSet {
  requireCase(ctx, input.case_id);
  const name = cleanName(input.attribute_name, MAX_ATTRIBUTE_NAME, 'attribute', 'INVALID_ARGUMENTS');
  const previous = ctx.repo.listCaseAttributes(input.case_id).find((a) => a.name === name) ?? null;
  const type = input.type ?? previous?.type ?? inferAttributeType(input.value);
  const what =
    input.type === undefined && previous
      ? `The attribute "${name}" of case ${input.case_id} is of type ${previous.type} (pass type to change it); the value`
      : 'The value';
  const value = coerceAttributeValue(input.value, type, what);
  const inferred = input.type === undefined && previous === null;
  if (previous && previous.type === type && previous.value === value) return { attribute: previous, previous, changed: false, inferred };
  ctx.repo.setCaseAttribute(input.case_id, name, type, value, ctx.now);
  ctx.repo.touchCase(input.case_id, ctx.now);
  ctx.events.emit({
    event_type: 'case.attribute_set',
    aggregate_type: 'case',
    aggregate_id: String(input.case_id),
    payload: { case_id: input.case_id, name, type, value, old_type: previous?.type ?? null, old_value: previous?.value ?? null },
  });
  return { attribute: { case_id: input.case_id, name, type, value, updated_at: ctx.now }, previous, changed: true, inferred };
}

/**
 * Sets several typed attributes of one case in one step, for imports that write many (an analytics export
 * gives each case a dozen): each attribute as {@link setCaseAttribute} would (name rules, type resolution,
 * coercion, no write when type and value are unchanged; a name given twice keeps its last value), but every
 * value is checked before anything is written, the case is looked up and touched once, and ONE event covers
 * them all: case.attributes_set {case_id, attributes: [{name, type, value, old_type, old_value}]} listing the
 * attributes that changed (none changed: nothing written, no event). One event per case instead of one per
 * value keeps a large import from flooding the event stream and its subscribers.
 *
 * Errors: CASE_NOT_FOUND, INVALID_ARGUMENTS (a bad name, or a value that is not of its type; nothing is written).
 */
export function setCaseAttributes(
  ctx: Ctx,
  caseId: number,
  attributes: readonly { attribute_name: string; value: AttributeValue; type?: AttributeType }[],
): { set: AttributeSet[]; changed: number } {
  requireCase(ctx, caseId);
  const current = new Map(ctx.repo.listCaseAttributes(caseId).map((a) => [a.name, a]));
  const original = new Map(current);
  const set: AttributeSet[] = [];
  for (const input of attributes) {
    const name = cleanName(input.attribute_name, MAX_ATTRIBUTE_NAME, 'attribute', 'INVALID_ARGUMENTS');
    const previous = current.get(name) ?? null;
    const type = input.type ?? previous?.type ?? inferAttributeType(input.value);
    const what =
      input.type === undefined && previous
        ? `The attribute "${name}" of case ${caseId} is of type ${previous.type} (pass type to change it); the value`
        : `The value of "${name}"`;
    const value = coerceAttributeValue(input.value, type, what);
    const inferred = input.type === undefined && previous === null;
    const changed = !(previous && previous.type === type && previous.value === value);
    const attribute: CaseAttribute = changed ? { case_id: caseId, name, type, value, updated_at: ctx.now } : (previous as CaseAttribute);
    current.set(name, attribute);
    set.push({ attribute, previous, changed, inferred });
  }
  // what differs from before the call (a name set twice counts once, with its last value)
  const written = [...current.values()].filter((a) => {
    const before = original.get(a.name);
    return !before || before.type !== a.type || before.value !== a.value;
  });
  if (written.length === 0) return { set, changed: 0 };
  for (const a of written) ctx.repo.setCaseAttribute(caseId, a.name, a.type, a.value, ctx.now);
  ctx.repo.touchCase(caseId, ctx.now);
  ctx.events.emit({
    event_type: 'case.attributes_set',
    aggregate_type: 'case',
    aggregate_id: String(caseId),
    payload: {
      case_id: caseId,
      attributes: written.map((a) => ({
        name: a.name,
        type: a.type,
        value: a.value,
        old_type: original.get(a.name)?.type ?? null,
        old_value: original.get(a.name)?.value ?? null,
      })),
    },
  });
  return { set, changed: written.length };
}

/** A case as {@link listCases} summarises it: counts and its attributes as `{name: value}`. */
export interface CaseSummary extends CaseWithCounts {
  attributes: Record<string, AttributeValue>;
}

/** Every case (by name, case-insensitive) with its counts and attribute values. */
export function listCases(ctx: Ctx): CaseSummary[] {
  const byCase = new Map<number, Record<string, AttributeValue>>();
  for (const a of ctx.repo.listCaseAttributes()) {
    let o = byCase.get(a.case_id);
    if (!o) byCase.set(a.case_id, (o = {}));
    o[a.name] = a.value;
  }
  return ctx.repo.listCases().map((c) => ({ ...c, attributes: byCase.get(c.case_id) ?? {} }));
}

/** A case in full: its typed attributes (by name), whole sources (by name) and ranges (by source, position). */
export interface CaseDetails {
  case: CaseWithCounts;
  attributes: CaseAttribute[];
  sources: CaseSourceLink[];
  segments: CaseSegment[];
}

/** The case with id `id` in full. Errors: CASE_NOT_FOUND. */
export function getCase(ctx: Ctx, id: number): CaseDetails {
  const c = requireCase(ctx, id);
  return { case: c, attributes: ctx.repo.listCaseAttributes(id), sources: ctx.repo.listCaseSources(id), segments: ctx.repo.listCaseSegments(id) };
}

// ---------------------------------------------------------------------------------------------------------
// managing cases from the researcher's workbench (issue 13 item 5): rename a case, take a source out of it,
// remove one attribute value, list and rename attribute definitions

/**
 * Renames a case. Names follow {@link createCase}'s rules (1-255 code points, unique case-insensitively;
 * a case may change the case of its own name). The same name again writes nothing and returns
 * `changed: false`. Emits case.renamed {case_id, old_name, new_name}.
 * Errors: CASE_NOT_FOUND, DUPLICATE_NAME, INVALID_ARGUMENTS (empty, too long, control characters).
 */
export function renameCase(ctx: Ctx, id: number, newName: string): { case: CaseWithCounts; old_name: string; changed: boolean } {
  const c = requireCase(ctx, id);
  const name = cleanName(newName, MAX_CASE_NAME, 'case', 'INVALID_ARGUMENTS');
  if (name === c.name) return { case: c, old_name: c.name, changed: false };
  const key = nameKey(name);
  const clash = ctx.repo.findCaseByKey(key);
  if (clash && clash.case_id !== id)
    throw new ToolError('DUPLICATE_NAME', `A case named "${clash.name}" already exists (case_id ${clash.case_id})`, { case_id: clash.case_id });
  ctx.repo.renameCase(id, name, key, ctx.now);
  ctx.events.emit({ event_type: 'case.renamed', aggregate_type: 'case', aggregate_id: String(id), payload: { case_id: id, old_name: c.name, new_name: name } });
  return { case: requireCase(ctx, id), old_name: c.name, changed: true };
}

/**
 * Takes a whole source out of a case (the source, its codings and any ranges of it the case holds stay).
 * Idempotent: a source that is not linked writes nothing and returns `removed: false`. Emits
 * case.member_removed {case_id, source_id, source_name, segment_range: null, owner, session_id} (who had
 * linked it, so that undo links it again in their name; the event src/domain/undoRedo.ts inverts).
 * Errors: CASE_NOT_FOUND, SOURCE_NOT_FOUND.
 */
export function removeSourceFromCase(ctx: Ctx, caseId: number, sourceId: number): { case: CaseWithCounts; source: SourceWithCounts; removed: boolean } {
  requireCase(ctx, caseId);
  const source = requireSource(ctx, sourceId);
  const link = ctx.repo.listCaseSources(caseId).find((l) => l.source_id === sourceId);
  if (!link) return { case: requireCase(ctx, caseId), source, removed: false };
  ctx.repo.deleteCaseSource(caseId, sourceId);
  ctx.repo.touchCase(caseId, ctx.now);
  ctx.events.emit({
    event_type: 'case.member_removed',
    aggregate_type: 'case',
    aggregate_id: String(caseId),
    payload: { case_id: caseId, source_id: sourceId, source_name: source.name, segment_range: null, owner: link.owner, session_id: link.session_id },
  });
  return { case: requireCase(ctx, caseId), source, removed: true };
}

/**
 * Removes attribute `attribute_name` (exact name) from one case. Idempotent: an attribute the case does not
 * have writes nothing and returns `removed: null`. Emits case.attribute_set {case_id, name, type: null,
 * value: null, old_type, old_value} (the shape undo already uses for a removal).
 * Errors: CASE_NOT_FOUND, INVALID_ARGUMENTS (a bad name).
 */
export function removeCaseAttribute(ctx: Ctx, caseId: number, attributeName: string): { name: string; removed: CaseAttribute | null } {
  requireCase(ctx, caseId);
  const name = cleanName(attributeName, MAX_ATTRIBUTE_NAME, 'attribute', 'INVALID_ARGUMENTS');
  const previous = ctx.repo.listCaseAttributes(caseId).find((a) => a.name === name) ?? null;
  if (!previous) return { name, removed: null };
  ctx.repo.deleteCaseAttribute(caseId, name);
  ctx.repo.touchCase(caseId, ctx.now);
  ctx.events.emit({
    event_type: 'case.attribute_set',
    aggregate_type: 'case',
    aggregate_id: String(caseId),
    payload: { case_id: caseId, name, type: null, value: null, old_type: previous.type, old_value: previous.value },
  });
  return { name, removed: previous };
}

/**
 * An attribute definition: an attribute name and how the cases use it. `type` is the type every case gives
 * it, or the most used one when cases disagree (ties in the order text, number, date, boolean);
 * `types` counts the cases per type; `case_count` is how many cases have a value.
 */
export interface CaseAttributeDefinition {
  name: string;
  type: AttributeType;
  types: Partial<Record<AttributeType, number>>;
  case_count: number;
}

/** Every attribute name any case has, by name (code unit order), with its type and case count. Writes nothing. */
export function listCaseAttributeDefinitions(ctx: Pick<Ctx, 'repo'>): CaseAttributeDefinition[] {
  const byName = new Map<string, Partial<Record<AttributeType, number>>>();
  for (const a of ctx.repo.listCaseAttributes()) {
    let t = byName.get(a.name);
    if (!t) byName.set(a.name, (t = {}));
    t[a.type] = (t[a.type] ?? 0) + 1;
  }
  return [...byName.keys()]
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((name) => {
      const types = byName.get(name) as Partial<Record<AttributeType, number>>;
      let type: AttributeType = 'text';
      let most = -1;
      for (const t of ATTRIBUTE_TYPES) {
        const n = types[t] ?? 0;
        if (n > most) [type, most] = [t, n];
      }
      return { name, type, types, case_count: Object.values(types).reduce((s, n) => s + (n ?? 0), 0) };
    });
}

/**
 * Renames attribute `attribute_name` (exact name) to `new_name` on every case that has it, keeping each
 * case's type and value. Renaming to the same name writes nothing (`case_ids` empty, `changed: false`);
 * a change of letter case only ("age" to "Age") is a rename. Emits case.attribute_renamed {old_name,
 * new_name, case_ids}.
 * Errors: INVALID_ARGUMENTS (a bad name), ATTRIBUTE_NOT_FOUND (no case has `attribute_name`), DUPLICATE_NAME (a case already
 * has an attribute named `new_name`: renaming would merge two attributes; nothing is written).
 */
export function renameCaseAttribute(
  ctx: Ctx,
  attributeName: string,
  newName: string,
): { old_name: string; new_name: string; case_ids: number[]; changed: boolean } {
  const oldName = cleanName(attributeName, MAX_ATTRIBUTE_NAME, 'attribute', 'INVALID_ARGUMENTS');
  const name = cleanName(newName, MAX_ATTRIBUTE_NAME, 'attribute', 'INVALID_ARGUMENTS');
  const all = ctx.repo.listCaseAttributes();
  const holders = all.filter((a) => a.name === oldName);
  if (holders.length === 0)
    throw new ToolError('ATTRIBUTE_NOT_FOUND', `No case has an attribute named "${oldName}" (names are exact)`, { attribute_name: oldName });
  if (name === oldName) return { old_name: oldName, new_name: name, case_ids: [], changed: false };
  const clash = all.filter((a) => a.name === name).map((a) => a.case_id);
  if (clash.length > 0) {
    throw new ToolError(
      'DUPLICATE_NAME',
      `The attribute "${name}" already exists on ${clash.length} case${clash.length === 1 ? '' : 's'}; rename it first or choose another name`,
      {
        attribute_name: name,
        case_ids: clash,
      },
    );
  }
  for (const a of holders) {
    ctx.repo.deleteCaseAttribute(a.case_id, oldName);
    ctx.repo.setCaseAttribute(a.case_id, name, a.type, a.value, ctx.now);
    ctx.repo.touchCase(a.case_id, ctx.now);
  }
  const caseIds = holders.map((a) => a.case_id);
  ctx.events.emit({
    event_type: 'case.attribute_renamed',
    aggregate_type: 'case',
    aggregate_id: String(caseIds[0]),
    payload: { old_name: oldName, new_name: name, case_ids: caseIds },
  });
  return { old_name: oldName, new_name: name, case_ids: caseIds, changed: true };
}
