/**
 * Analysis across cases (agent-context spec, section 4): groups of cases that share an attribute value
 * ({@link suggestCaseGroupings}) and a comparison of cases by the codes of their material ({@link compareCases}).
 * Read only. Cases themselves (creating, members, attributes) are in cases.ts.
 */
import { ToolError } from '../core/errors';
import { requireCase } from './cases';
import { requireCode } from './codebook';
import type { DomainContext } from './events';
import type { AttributeType, AttributeValue, ProjectRepository } from './ports';

type Ctx = DomainContext<ProjectRepository>;

/** The default smallest group {@link suggestCaseGroupings} reports (HTTP spec, section 8). */
export const DEFAULT_MIN_GROUP_SIZE = 2;

/** One suggested group: the cases whose attribute has this value. */
export interface CaseGroup {
  /** `name = value`, for display */
  label: string;
  type: AttributeType;
  value: AttributeValue;
  size: number;
  case_ids: number[];
  cases: { case_id: number; name: string }[];
}

/** The groups of one attribute. */
export interface AttributeGrouping {
  attribute_name: string;
  /** how many cases have the attribute */
  case_count: number;
  /** largest first, then by value */
  groups: CaseGroup[];
  /** cases that have the attribute but fall in a group smaller than min_group_size */
  ungrouped_case_ids: number[];
}

/** Orders values: numbers numerically, booleans false first, strings by code unit; mixed types by type name. */
export function compareAttributeValues(a: { type: AttributeType; value: AttributeValue }, b: { type: AttributeType; value: AttributeValue }): number {
  if (a.type !== b.type) return a.type < b.type ? -1 : 1;
  if (typeof a.value === 'number' && typeof b.value === 'number') return a.value - b.value;
  const x = String(a.value);
  const y = String(b.value);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Suggests groups of cases that share an attribute value, per attribute (by name): cases are grouped by
 * the exact typed value (numbers by exact numeric value, text and dates by exact string, a number 30 and a
 * text "30" apart); groups smaller than `min_group_size` (default 2) are dropped. `attribute_names` (exact
 * names) narrows the analysis; an empty list means all attributes; names no case has are returned in
 * `unknown_attributes`. Writes nothing. Errors: INVALID_ARGUMENTS (min_group_size not an integer >= 1).
 */
export function suggestCaseGroupings(
  ctx: Ctx,
  input: { attribute_names?: string[]; min_group_size?: number } = {},
): { min_group_size: number; case_count: number; groupings: AttributeGrouping[]; group_count: number; unknown_attributes: string[] } {
  const min = input.min_group_size ?? DEFAULT_MIN_GROUP_SIZE;
  if (!Number.isInteger(min) || min < 1) throw new ToolError('INVALID_ARGUMENTS', `min_group_size must be an integer of at least 1 (got ${min})`);
  const wanted = input.attribute_names && input.attribute_names.length > 0 ? new Set(input.attribute_names.map((n) => n.normalize('NFC').trim())) : null;
  const cases = ctx.repo.listCases();
  const names = new Map(cases.map((c) => [c.case_id, c.name]));
  const byAttribute = new Map<string, Map<string, { type: AttributeType; value: AttributeValue; case_ids: number[] }>>();
  for (const a of ctx.repo.listCaseAttributes()) {
    if (wanted && !wanted.has(a.name)) continue;
    let groups = byAttribute.get(a.name);
    if (!groups) byAttribute.set(a.name, (groups = new Map()));
    const key = `${a.type}:${JSON.stringify(a.value)}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { type: a.type, value: a.value, case_ids: [] }));
    g.case_ids.push(a.case_id);
  }
  const groupings: AttributeGrouping[] = [];
  for (const name of [...byAttribute.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const all = [...(byAttribute.get(name) as Map<string, { type: AttributeType; value: AttributeValue; case_ids: number[] }>).values()];
    for (const g of all) g.case_ids.sort((a, b) => a - b);
    const kept = all.filter((g) => g.case_ids.length >= min).sort((a, b) => b.case_ids.length - a.case_ids.length || compareAttributeValues(a, b));
    groupings.push({
      attribute_name: name,
      case_count: all.reduce((n, g) => n + g.case_ids.length, 0),
      groups: kept.map((g) => ({
        label: `${name} = ${String(g.value)}`,
        type: g.type,
        value: g.value,
        size: g.case_ids.length,
        case_ids: g.case_ids,
        cases: g.case_ids.map((id) => ({ case_id: id, name: names.get(id) ?? '' })),
      })),
      ungrouped_case_ids: all
        .filter((g) => g.case_ids.length < min)
        .flatMap((g) => g.case_ids)
        .sort((a, b) => a - b),
    });
  }
  const unknown = wanted ? [...wanted].filter((n) => !byAttribute.has(n)) : [];
  return {
    min_group_size: min,
    case_count: cases.length,
    groupings,
    group_count: groupings.reduce((n, g) => n + g.groups.length, 0),
    unknown_attributes: unknown,
  };
}

/** A theme (a code) as it occurs in one case: `segment_count` counts the case's codings with it. */
export interface CaseTheme {
  code_id: number;
  name: string;
  color: string;
  segment_count: number;
}

/** The comparison of cases that {@link compareCases} returns. Themes are in codebook order (by name). */
export interface CaseComparison {
  case_ids: number[];
  /** the codes the comparison was narrowed to, or null for all */
  code_ids: number[] | null;
  cases: { case_id: number; name: string; coding_count: number; theme_count: number; themes: CaseTheme[]; unique_themes: CaseTheme[] }[];
  /** themes every compared case has, with each case's count and the total */
  common_themes: { code_id: number; name: string; color: string; total_segment_count: number; counts: { case_id: number; segment_count: number }[] }[];
  common_theme_count: number;
  /** the number of unique themes over all cases */
  unique_theme_count: number;
}

/**
 * Compares cases by their themes. A case's themes are the codes of its codings: the text and AV segments
 * of its whole sources, and the text segments that overlap one of its ranges (each segment counted once).
 * A theme is unique to a case when no other compared case has it, and common when every compared case
 * has it. `code_ids` narrows the themes to those codes. Repeated ids count once. Writes nothing.
 *
 * Errors: INVALID_ARGUMENTS (fewer than 2 distinct cases), CASE_NOT_FOUND, CODE_NOT_FOUND (in code_ids).
 */
export function compareCases(ctx: Ctx, input: { case_ids: number[]; code_ids?: number[] }): CaseComparison {
  const caseIds = [...new Set(input.case_ids)];
  if (caseIds.length < 2) throw new ToolError('INVALID_ARGUMENTS', `compare_cases needs at least 2 distinct case_ids (got ${caseIds.length})`);
  const cases = caseIds.map((id) => requireCase(ctx, id));
  const codeFilter = input.code_ids && input.code_ids.length > 0 ? [...new Set(input.code_ids)] : null;
  for (const id of codeFilter ?? []) requireCode(ctx, id);
  const allowed = codeFilter ? new Set(codeFilter) : null;
  const codes = ctx.repo.listCodes();
  const counts = cases.map((c) => {
    const m = new Map<number, number>();
    for (const k of ctx.repo.listCaseCodings(c.case_id)) if (!allowed || allowed.has(k.code_id)) m.set(k.code_id, (m.get(k.code_id) ?? 0) + 1);
    return m;
  });
  const themeOf = (code: (typeof codes)[number], n: number): CaseTheme => ({ code_id: code.code_id, name: code.name, color: code.color, segment_count: n });
  const out: CaseComparison['cases'] = cases.map((c, i) => {
    const mine = counts[i] as Map<number, number>;
    const themes: CaseTheme[] = [];
    const unique: CaseTheme[] = [];
    for (const code of codes) {
      const n = mine.get(code.code_id);
      if (n === undefined) continue;
      themes.push(themeOf(code, n));
      if (counts.every((other, j) => j === i || !other.has(code.code_id))) unique.push(themeOf(code, n));
    }
    return {
      case_id: c.case_id,
      name: c.name,
      coding_count: [...mine.values()].reduce((a, b) => a + b, 0),
      theme_count: themes.length,
      themes,
      unique_themes: unique,
    };
  });
  const common: CaseComparison['common_themes'] = [];
  for (const code of codes) {
    if (!counts.every((m) => m.has(code.code_id))) continue;
    const per = cases.map((c, i) => ({ case_id: c.case_id, segment_count: (counts[i] as Map<number, number>).get(code.code_id) as number }));
    common.push({ code_id: code.code_id, name: code.name, color: code.color, total_segment_count: per.reduce((a, p) => a + p.segment_count, 0), counts: per });
  }
  return {
    case_ids: caseIds,
    code_ids: codeFilter,
    cases: out,
    common_themes: common,
    common_theme_count: common.length,
    unique_theme_count: out.reduce((n, c) => n + c.unique_themes.length, 0),
  };
}
