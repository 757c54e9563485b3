/**
 * The case steps of the applier (../applyPlan.ts): cases with their sources, ranges and attributes; then the
 * GUIDs of the file's coders and variables, kept so a later export names them as the file did.
 */
import { addSegmentToCase, addSourceToCase, createCase, MAX_ATTRIBUTE_NAME, MAX_CASE_NAME, setCaseAttribute, setCaseAttributes } from '../../../domain/cases';
import { nameKey } from '../../../domain/rules';
import { fitName, type PlannedCase } from '../plan';
import { stamped, type Applying } from './state';

/**
 * Writes the plan's cases. A case is found by GUID, then by name (case-insensitive), else created; it gets the
 * planned whole sources and ranges (each range by the file's coder at the file's time) and attributes (same
 * name: overwritten, others kept), written under the `per_case` rule in one step (`setCaseAttributes`: one
 * case.attributes_set event per case), under `per_value` one case.attribute_set each. A reference to a source
 * the plan does not hold fails the import, or under `skip` is counted in `case_refs_to_unknown_sources`.
 */
export function applyCases(a: Applying): void {
  const { ctx, report } = a;
  const existingItems = { has: (id: number) => ctx.repo.getCase(id) !== undefined, ids: () => ctx.repo.listCases().map((c) => c.case_id) };
  for (const k of a.plan.cases) {
    a.at = () => `case "${k.name}"`;
    let caseId = a.guids.find('case', k.guid, existingItems);
    let name = k.name;
    if (caseId !== undefined) report.reused.cases++;
    else {
      name = fitName(k.name, MAX_CASE_NAME, 'Unnamed case');
      a.renamed('case', k.name, name, MAX_CASE_NAME);
      const existingId = ctx.repo.findCaseByKey(nameKey(name))?.case_id;
      caseId = a.existingOrNew('cases', 'case', k.guid, existingId, () => createCase(stamped(ctx, k.owner), { name, memo: k.memo }).case_id);
    }
    a.guids.keep('case', caseId, k.guid, false);
    addCaseMembers(a, caseId, name, k);
    addCaseAttributes(a, caseId, name, k);
    a.tick();
  }
  for (const v of a.plan.variables ?? []) a.guids.keep('variable', fitName(v.name, MAX_ATTRIBUTE_NAME, 'attribute'), v.guid, false);
}

/** Links the planned whole sources and adds the planned ranges to case `caseId` (named `name` in messages). */
function addCaseMembers(a: Applying, caseId: number, name: string, k: PlannedCase): void {
  const { ctx, report } = a;
  const unknown = (ref: string) =>
    a.unknownRef('case_refs_to_unknown_sources', () => `The case "${name}" refers to source ${ref}, which the file does not hold`);
  for (const ref of k.sources) {
    const sourceId = a.sourceIds.get(ref);
    if (sourceId === undefined) unknown(ref);
    else if (addSourceToCase(ctx, caseId, sourceId).added) report.case_sources_linked++;
  }
  for (const r of k.ranges) {
    const sourceId = a.sourceIds.get(r.source);
    if (sourceId === undefined) {
      unknown(r.source);
      continue;
    }
    const added = addSegmentToCase(stamped(ctx, r.owner, r.created_at), { case_id: caseId, source_id: sourceId, start_pos: r.start_pos, end_pos: r.end_pos });
    if (added.created) {
      report.case_ranges_added++;
      a.guids.keep('case_selection', added.segment.case_segment_id, r.selection_guid, true);
    }
  }
}

/** Writes the planned attributes of case `caseId` (named `name` in messages), by the plan's `case_attribute_events` rule. */
function addCaseAttributes(a: Applying, caseId: number, name: string, k: PlannedCase): void {
  if (k.attributes.length === 0) return;
  if (a.rules.case_attribute_events === 'per_case') {
    a.at = () => `the attributes of case "${name}"`;
    a.report.attributes_set += setCaseAttributes(a.ctx, caseId, a.attributeValues(k.attributes)).changed;
    return;
  }
  for (const attribute of k.attributes) {
    a.at = () => `attribute "${attribute.name}" of case "${k.name}"`;
    const [value] = a.attributeValues([attribute]);
    if (setCaseAttribute(a.ctx, { case_id: caseId, ...value! }).changed) a.report.attributes_set++;
  }
}
