import type { InvokeOutcome } from '../../agent/pipeline';

/** A stored event (the agent-context spec's envelope, section 6). */
type EventRecord = InvokeOutcome['events'][number];

/** What an event changes among the `qda://` resources. */
export interface ResourceChanges {
  /** URIs whose content changed (for `notifications/resources/updated`) */
  updated: Set<string>;
  /** true when resources were added or removed (for `notifications/resources/list_changed`) */
  listChanged: boolean;
}

function ids(payload: Record<string, unknown>, ...keys: string[]): number[] {
  const out: number[] = [];
  for (const k of keys) {
    const v = payload[k];
    if (typeof v === 'number' && Number.isInteger(v)) out.push(v);
    else if (typeof v === 'string' && /^[1-9][0-9]*$/.test(v)) out.push(Number(v));
  }
  return out;
}

/**
 * The `qda://` resources a batch of committed events touches. Every project event changes the state
 * summary, briefing and statistics; coding events change their codes, sources and segments; created or
 * deleted codes, categories, sources and cases change the resource list. Session events change nothing.
 * Ids come from the payload (`code_id`, `source_code_id`, `target_code_id`, `source_id`, `segment_id`,
 * `case_id`, `category_id`) and the aggregate.
 */
export function resourcesTouchedBy(events: readonly EventRecord[]): ResourceChanges {
  const updated = new Set<string>();
  let listChanged = false;
  for (const e of events) {
    if (e.event_type.startsWith('session.')) continue;
    updated.add('qda://project/state');
    updated.add('qda://project/briefing');
    updated.add('qda://project/statistics');
    const p = e.payload ?? {};
    const agg = /^[1-9][0-9]*$/.test(e.aggregate_id) ? Number(e.aggregate_id) : undefined;
    const codeIds = ids(p, 'code_id', 'source_code_id', 'target_code_id');
    const sourceIds = ids(p, 'source_id');
    const caseIds = ids(p, 'case_id');
    const categoryIds = ids(p, 'category_id', 'parent_id');
    if (agg !== undefined) {
      if (e.aggregate_type === 'code') codeIds.push(agg);
      if (e.aggregate_type === 'source') sourceIds.push(agg);
      if (e.aggregate_type === 'case') caseIds.push(agg);
      if (e.aggregate_type === 'category') categoryIds.push(agg);
    }
    const type = e.event_type;
    if (type.startsWith('coding.') || type === 'suggestion.approved') {
      updated.add('qda://codes');
      for (const id of codeIds) {
        updated.add(`qda://codes/${id}`);
        updated.add(`qda://codes/${id}/segments`);
        updated.add(`qda://segments?code_id=${id}`);
      }
      for (const id of sourceIds) {
        updated.add(`qda://sources/${id}`);
        updated.add(`qda://sources/${id}/segments`);
        updated.add(`qda://sources/${id}/annotations`);
        updated.add(`qda://segments?source_id=${id}`);
      }
      if (sourceIds.length > 0) updated.add('qda://sources');
      for (const id of ids(p, 'segment_id')) updated.add(`qda://segments/${id}`);
      if (/^coding\.(code_created|code_deleted|codes_merged|category_created|category_deleted)$/.test(type)) listChanged = true;
      if (
        type.startsWith('coding.category') ||
        type === 'coding.code_moved' ||
        type === 'coding.code_created' ||
        type === 'coding.code_deleted' ||
        type === 'coding.codes_merged'
      ) {
        updated.add('qda://categories');
        for (const id of categoryIds) updated.add(`qda://categories/${id}`);
      }
      // a coding may fall inside a case's sources or ranges
      if (type.includes('segment')) updated.add('qda://cases');
    } else if (type.startsWith('source.')) {
      updated.add('qda://sources');
      for (const id of sourceIds) {
        updated.add(`qda://sources/${id}`);
        if (/text_(edited|reconciled|extracted)$/.test(type)) {
          updated.add(`qda://sources/${id}/content`);
          updated.add(`qda://sources/${id}/segments`);
          updated.add(`qda://segments?source_id=${id}`);
        }
      }
      if (type === 'source.imported' || type === 'source.deleted') listChanged = true;
    } else if (type.startsWith('case.')) {
      updated.add('qda://cases');
      // an attribute renamed on several cases names them all (payload case_ids)
      if (type === 'case.attribute_renamed' && Array.isArray(p.case_ids))
        for (const id of p.case_ids) if (typeof id === 'number' && !caseIds.includes(id)) caseIds.push(id);
      for (const id of caseIds) {
        updated.add(`qda://cases/${id}`);
        if (type === 'case.member_added' || type === 'case.member_removed') {
          updated.add(`qda://cases/${id}/members`);
          updated.add(`qda://segments?case_id=${id}`);
        }
        if (type === 'case.attribute_set' || type === 'case.attributes_set' || type === 'case.attribute_renamed') updated.add(`qda://cases/${id}/attributes`);
      }
      if (type === 'case.created' || type === 'case.deleted' || type === 'case.renamed') listChanged = true;
    } else if (type.startsWith('analysis.')) {
      updated.add('qda://reports');
      for (const id of [...ids(p, 'report_id', 'job_id'), ...(e.aggregate_type === 'report' && agg !== undefined ? [agg] : [])]) {
        updated.add(`qda://reports/${id}`);
        updated.add(`qda://reports/${id}/data`);
      }
      listChanged = true;
    } else if (type === 'project.snapshot_restored') {
      // a restore may change anything
      for (const u of ['qda://codes', 'qda://categories', 'qda://sources', 'qda://cases']) updated.add(u);
      listChanged = true;
    }
  }
  return { updated, listChanged };
}
