import type { Actor, CoderRole } from './model';

/**
 * Dotted event types. The first fifteen are the agent-context spec's (section 6); the rest are the
 * spec's further names with the dotted types Marginalia gives them.
 */
export type EventType =
  | 'approval.requested'
  | 'approval.granted'
  | 'approval.denied'
  | 'approval.failed'
  | 'session.connected'
  | 'session.disconnected'
  | 'coding.code_created'
  | 'coding.code_renamed'
  | 'coding.code_updated'
  | 'coding.code_deleted'
  | 'coding.codes_merged'
  | 'coding.segment_coded'
  | 'coding.segment_uncoded'
  | 'coding.segment_updated'
  | 'coding.category_created'
  | 'coding.category_deleted'
  // category rename and memo (src/domain/categories.ts; Marginalia's names): {category_id, old_name, new_name} and
  // {category_id, field: 'memo', old_value, new_value}, like coding.code_renamed and coding.code_updated
  | 'coding.category_renamed'
  | 'coding.category_updated'
  | 'coding.code_moved'
  // AV coding (Marginalia's names; payloads: segment_id, code_id, source_id, start_ms, end_ms, and transcript when coded)
  | 'coding.av_segment_coded'
  | 'coding.av_segment_uncoded'
  | 'source.imported'
  | 'source.deleted'
  | 'source.renamed'
  | 'source.moved'
  | 'source.text_extracted'
  | 'source.text_edited'
  | 'source.text_reconciled'
  | 'source.metadata_suggested'
  | 'source.folder_created'
  | 'source.folder_renamed'
  | 'source.folder_deleted'
  // a source's memo (update_memo; payload: source_id, field 'memo', old_value, new_value, like coding.code_updated)
  | 'source.updated'
  // document attributes (src/domain/sourceAttributes.ts): one set or deleted (type and value null)
  // {source_id, source_name, attribute_name, type, value, old_type, old_value}; several of one source in one step
  // (imports) {source_id, source_name, attributes: [{attribute_name, type, value, old_type, old_value}]}
  | 'source.attribute_set'
  | 'source.attributes_set'
  // cases (case.created and case.member_added are the spec's; case.deleted is its CaseDeleted, case.attribute_set its AttributeSet)
  | 'case.created'
  | 'case.deleted'
  | 'case.member_added'
  // a member source or range taken out of a case (undo of case.member_added, src/domain/undoRedo.ts): the payload of the
  // case.member_added it reverses, and who had linked it {case_id, source_id, segment_range, case_segment_id?, text?, owner, session_id}
  | 'case.member_removed'
  | 'case.attribute_set'
  // a case's memo (update_case_memo; src/domain/memos.ts): {case_id, name, field: 'memo', old_value, new_value}, like source.updated
  | 'case.updated'
  // several attributes of one case set in one step (imports; src/domain/cases.ts setCaseAttributes): {case_id, attributes: [{name, type, value, old_type, old_value}]}
  | 'case.attributes_set'
  // a case renamed (rename_case, src/domain/cases.ts): {case_id, old_name, new_name}
  | 'case.renamed'
  // an attribute renamed on every case that has it (rename_case_attribute): {old_name, new_name, case_ids}
  | 'case.attribute_renamed'
  // suggestions (src/domain/suggestions.ts): recorded proposals and their decisions; approvals also raise the coding.* events of what they apply
  | 'suggestion.code_suggested'
  | 'suggestion.coding_suggested'
  | 'suggestion.batch_created'
  | 'suggestion.merge_suggested'
  | 'suggestion.approved'
  | 'suggestion.rejected'
  // version control (QualCoder-v2's projects.snapshot_restored; payload: ref, short_ref, message, before_ref, before_short_ref)
  | 'project.snapshot_restored'
  // a sync with the history's remote changed the project (sync_project, src/tools/remoteTools.ts; issue 16): {outcome:
  // fast_forward | merged, ref, short_ref, remote, received, sent, changes: {table: {inserted, updated, deleted}}, conflicts (count)}
  | 'project.synced'
  // the project opened or about to close (the spec's ProjectOpened / ProjectClosed; src/cli/compose.ts announceProject):
  // {project_name, host: "vscode" | "serve"}
  | 'project.opened'
  | 'project.closed'
  // the research frame of the briefing saved (update_project_briefing; src/domain/memos.ts): {changed: [field names],
  // old: {field: value}, new: {field: value}} for the fields given (description, research_questions, methodology)
  | 'project.briefing_updated'
  // hybrid mode (issue 14 item 9; src/agent/pipeline.ts): a call an agent made at trust level notify ran, so the researcher
  // is told {tool, title, agent, coder, session_id, arguments (a summary), summary (in words), outcome, correlation_id, source_id};
  // the researcher paused or resumed every agent {paused, by, held?, ran?, failed?, still_pending?} (bookkeeping, never undone)
  | 'agent.notified'
  | 'agents.paused'
  | 'agents.resumed'
  // report jobs (src/domain/reports.ts): the spec's two, and its ReportFailed (payload: job_id, report_type, error_code, error)
  | 'analysis.report_started'
  | 'analysis.report_completed'
  | 'analysis.report_failed';

/**
 * Whether an event of `eventType` may have replaced any part of the project at once (a snapshot restored, a sync
 * with a remote that changed rows: neither raises per-entity events), so a view or a cache must re-read everything.
 */
export function replacesProjectState(eventType: string): boolean {
  return eventType === 'project.snapshot_restored' || eventType === 'project.synced';
}

/** A domain event as a service raises it; the pipeline adds the envelope (id, sequence, correlation). */
export interface DomainEvent {
  event_type: EventType;
  /** `code`, `category`, `segment`, `source`, `folder`, ... */
  aggregate_type: string;
  aggregate_id: string;
  payload: Record<string, unknown>;
}

/** Collects the events of one transaction. */
export interface EventSink {
  emit(event: DomainEvent): void;
}

/** The context every domain service call runs in. */
export interface DomainContext<R> {
  repo: R;
  events: EventSink;
  actor: Actor;
  /** ISO 8601 time of this change */
  now: string;
}

/** An event as stored in the project (the agent-context spec's envelope, section 6). */
export interface EventRecord {
  event_id: string;
  event_type: EventType;
  /** ISO 8601 UTC with milliseconds */
  timestamp: string;
  aggregate_type: string;
  aggregate_id: string;
  caused_by: CausedBy;
  payload: Record<string, unknown>;
  metadata: { correlation_id: string; sequence_number: number };
}

/**
 * Who caused an event (the spec's `caused_by`, issue 14 item 1): the session, its client type and the coder
 * recorded as owner (`user`), plus the coder's `role` and name (`coder`: the researcher's coder name, or the
 * agent's credential name, else its client name); for an agent also its `client` name and the `model` when the
 * client stated it (MCP clientInfo, `model` on /session/create, `X-Marginalia-Model`). `role` is absent only on
 * events stored before roles were recorded whose session the migration could not place.
 */
export interface CausedBy {
  session_id: string;
  client_type: string;
  user: string;
  role?: CoderRole;
  coder?: string;
  client?: string;
  model?: string;
}
