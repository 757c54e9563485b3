/**
 * Agent Activity's words for a call's stored events (issue 13, item 8): the sentences undo's words give
 * (src/domain/undoWords.ts: codings, codes, categories, cases, sources) and, for the events those leave
 * out, this module's own: suggestions and their decisions, AV codings, text edits, bulk attributes,
 * snapshots, syncs, reports and the pipeline's bookkeeping. Names, never ids; an event type known to no one
 * is humanised ("suggestion.coding_suggested" -> "coding suggested"), never shown raw. Free of `vscode`.
 */
import { clock, MAX_EXCERPT, shorten } from '../../agent/describeRequest';
import { countOf } from '../../core/plural';
import { sliceCp } from '../../core/text';
import type { EventRecord, EventType } from '../../domain/events';
import type { ProjectRepository } from '../../domain/ports';
import { describeAction, describeEvent, listed, Names } from '../../domain/undoWords';

/**
 * Every event type's title, for a row rebuilt from events whose tool is not known (the title of the call
 * the event usually comes from). Typed by {@link EventType}: a new event type fails to compile until it has one.
 */
export const EVENT_TITLES: Readonly<Record<EventType, string>> = {
  'approval.requested': 'Approval Request',
  'approval.granted': 'Approve',
  'approval.denied': 'Reject',
  'approval.failed': 'Approval Failed',
  'session.connected': 'Connect',
  'session.disconnected': 'Disconnect',
  'coding.segment_coded': 'Apply Code',
  'coding.segment_uncoded': 'Remove Coding',
  'coding.segment_updated': 'Segment Memo',
  'coding.code_created': 'Create Code',
  'coding.code_renamed': 'Rename Code',
  'coding.code_updated': 'Update Code',
  'coding.code_deleted': 'Delete Code',
  'coding.code_moved': 'Move Code',
  'coding.codes_merged': 'Merge Codes',
  'coding.category_created': 'Create Category',
  'coding.category_renamed': 'Rename Category',
  'coding.category_updated': 'Update Category',
  'coding.category_deleted': 'Delete Category',
  'coding.av_segment_coded': 'Apply Code',
  'coding.av_segment_uncoded': 'Remove Coding',
  'source.imported': 'Import Source',
  'source.deleted': 'Remove Source',
  'source.renamed': 'Rename Source',
  'source.moved': 'Move Source',
  'source.text_extracted': 'Extract Text',
  'source.text_edited': 'Edit Source Text',
  'source.text_reconciled': 'Reconcile Source Text',
  'source.metadata_suggested': 'Suggest Source Metadata',
  'source.folder_created': 'Create Folder',
  'source.folder_renamed': 'Rename Folder',
  'source.folder_deleted': 'Delete Folder',
  'source.updated': 'Source Memo',
  'source.attribute_set': 'Set Document Attribute',
  'source.attributes_set': 'Set Document Attributes',
  'case.created': 'Create Case',
  'case.deleted': 'Delete Case',
  'case.member_added': 'Add to Case',
  'case.member_removed': 'Remove from Case',
  'case.attribute_set': 'Set Case Attribute',
  'case.updated': 'Case Memo',
  'case.attributes_set': 'Set Case Attributes',
  'case.renamed': 'Rename Case',
  'case.attribute_renamed': 'Rename Case Attribute',
  'suggestion.code_suggested': 'Suggest Code',
  'suggestion.coding_suggested': 'Suggest Coding',
  'suggestion.batch_created': 'Suggest Codings',
  'suggestion.merge_suggested': 'Suggest Merge',
  'suggestion.approved': 'Approve Suggestion',
  'suggestion.rejected': 'Reject Suggestion',
  'project.snapshot_restored': 'Restore Snapshot',
  'project.synced': 'Sync Project',
  'project.opened': 'Open Project',
  'project.closed': 'Close Project',
  'project.briefing_updated': 'Update Briefing',
  'agent.notified': 'Notify',
  'agents.paused': 'Pause Agents',
  'agents.resumed': 'Resume Agents',
  'analysis.report_started': 'Report',
  'analysis.report_completed': 'Report',
  'analysis.report_failed': 'Report',
};

/** An event type in words, for one no sentence knows: the part after the dot, underscores as spaces ("suggestion.coding_suggested" -> "coding suggested"). */
export function humanizeEventType(type: string): string {
  const words = type
    .slice(type.lastIndexOf('.') + 1)
    .replace(/[_\s]+/g, ' ')
    .trim();
  return words === '' ? 'made a change' : words;
}

/** The row title of an event type: {@link EVENT_TITLES}, else the humanised type in title case ("Coding Suggested"). */
export function eventTitle(type: string): string {
  return (EVENT_TITLES as Readonly<Record<string, string>>)[type] ?? humanizeEventType(type).replace(/\b[a-z]/g, (c) => c.toUpperCase());
}

/** Past tenses the rule in {@link pastTense} would get wrong. */
const IRREGULAR: Readonly<Record<string, string>> = {
  get: 'got',
  find: 'found',
  read: 'read',
  set: 'set',
  undo: 'undid',
  redo: 'redid',
  make: 'made',
  run: 'ran',
};

/**
 * A call's request words in the past tense, for a call that completed without events (a read: "List codes" ->
 * "Listed codes", "Get the source..." -> "Got the source..."): the first word, when it is one of `verbs`
 * (the first words of the tools' titles, in lower case, and "code"), put in the past tense (irregular verbs
 * by a table; else "-e" + "d", consonant + "y" -> "ied", otherwise + "ed"), its capital kept. Any other
 * sentence is returned as it is.
 */
export function pastTense(sentence: string, verbs: ReadonlySet<string>): string {
  const m = /^([A-Za-z-]+)(?=\s|$)/.exec(sentence);
  const word = m?.[1];
  if (!word || !verbs.has(word.toLowerCase())) return sentence;
  const w = word.toLowerCase();
  const past = IRREGULAR[w] ?? (w.endsWith('e') ? `${w}d` : /[^aeiou]y$/.test(w) ? `${w.slice(0, -1)}ied` : `${w}ed`);
  const cased = word[0] === word[0]!.toUpperCase() ? past.charAt(0).toUpperCase() + past.slice(1) : past;
  return cased + sentence.slice(word.length);
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);
/** {@link clock} of a payload's time in milliseconds (0 when it holds none). */
const clockOf = (ms: unknown): string => clock(Math.max(0, num(ms) ?? 0));

/** Names, suggestions and passages of one call's events, looked up in the project as it is now. */
class Words {
  constructor(
    readonly repo: ProjectRepository,
    readonly names: Names,
  ) {}

  code(id: unknown): string {
    return `'${this.names.code(num(id) ?? -1)}'`;
  }
  source(id: unknown): string {
    return this.names.source(num(id) ?? -1);
  }
  suggestion(id: unknown) {
    const n = num(id);
    return n === undefined ? undefined : this.repo.getSuggestion(n);
  }
  /** A merge suggestion's code, by the name the suggestion stored when the code is gone ("'Trust'"). */
  mergeCode(id: unknown, suggestionId: unknown, which: 'source_code_name' | 'target_code_name'): string {
    const n = num(id);
    if (n !== undefined && this.repo.getCode(n)) return this.code(n);
    try {
      const stored = JSON.parse(this.suggestion(suggestionId)?.details ?? '{}') as Record<string, unknown>;
      if (typeof stored[which] === 'string') return `'${stored[which]}'`;
    } catch {
      // details not JSON: the name the events know
    }
    return this.code(id);
  }
  /** "'And I save the seeds…'" for a suggested passage (the suggestion's stored text, else the source's), or ''. */
  passage(suggestionId: unknown, sourceId: unknown, start: unknown, end: unknown): string {
    let t = this.suggestion(suggestionId)?.text ?? null;
    const [s, e, src] = [num(start), num(end), num(sourceId)];
    if (t === null && s !== undefined && e !== undefined && src !== undefined) {
      const whole = this.repo.getSourceText(src);
      t = whole === null ? null : sliceCp(whole, s, e);
    }
    return t === null || t.trim() === '' ? '' : `'${shorten(t, MAX_EXCERPT)}'`;
  }
  /** What a suggestion proposed: "the suggested code 'X'", "a suggested coding of 'X' on a.txt", "the suggested merge of 'A' into 'B'". */
  proposal(suggestionId: unknown, kind: unknown): string {
    const s = this.suggestion(suggestionId);
    const k = s?.kind ?? kind;
    if (k === 'code') return s?.name ? `the suggested code '${s.name}'` : 'a suggested code';
    if (k === 'merge') {
      return s
        ? `the suggested merge of ${this.mergeCode(s.code_id, s.suggestion_id, 'source_code_name')} into ${this.mergeCode(s.target_code_id, s.suggestion_id, 'target_code_name')}`
        : 'a suggested merge';
    }
    return s && s.code_id !== null && s.source_id !== null
      ? `a suggested coding of ${this.code(s.code_id)} on ${this.source(s.source_id)}`
      : 'a suggested coding';
  }
}

type Sentence = (p: Record<string, unknown>, w: Words) => string;

/** One event in words (past tense) for the event types undo's words leave out. */
const SENTENCES: Readonly<Record<string, Sentence>> = {
  'suggestion.code_suggested': (p, w) => {
    const cat = num(p.category_id);
    return `suggested the code '${text(p.name) ?? ''}'${cat === undefined ? '' : ` in ${w.names.place(cat)}`}`;
  },
  'suggestion.coding_suggested': (p, w) => {
    const quote = w.passage(p.suggestion_id, p.source_id, p.start, p.end);
    return `suggested coding ${w.code(p.code_id)} on ${w.source(p.source_id)}${quote ? `: ${quote}` : ''}`;
  },
  'suggestion.batch_created': (p, w) => {
    const ids = Array.isArray(p.suggestion_ids) ? (p.suggestion_ids as unknown[]).slice(0, 200) : [];
    const items = ids.map((id) => w.suggestion(id)).filter((s) => s !== undefined);
    const codes = num(p.code_id) !== undefined ? w.code(p.code_id) : listed(items.map((s) => w.code(s.code_id)));
    const sources = num(p.source_id) !== undefined ? w.source(p.source_id) : listed(items.map((s) => w.source(s.source_id)));
    const n = num(p.count) ?? ids.length;
    if (n === 0) return `found no passages to suggest coding${codes ? ` with ${codes}` : ''}`;
    return `suggested coding ${countOf(n, 'passage')}${codes ? ` with ${codes}` : ''}${sources ? ` in ${sources}` : ''}`;
  },
  'suggestion.merge_suggested': (p, w) =>
    `suggested merging ${w.mergeCode(p.source_code_id, p.suggestion_id, 'source_code_name')} into ${w.mergeCode(p.target_code_id, p.suggestion_id, 'target_code_name')}`,
  'suggestion.approved': (p, w) =>
    `approved ${w.proposal(p.suggestion_id, p.kind)}${p.status === 'failed' ? ` (it could not be applied${text(p.error_code) ? `: ${String(p.error_code)}` : ''})` : ''}`,
  'suggestion.rejected': (p, w) => `rejected ${w.proposal(p.suggestion_id, p.kind)}${text(p.reason) ? `: ${String(p.reason)}` : ''}`,
  'coding.av_segment_coded': (p, w) => `coded ${w.code(p.code_id)} in ${w.source(p.source_id)} at ${clockOf(p.start_ms)}–${clockOf(p.end_ms)}`,
  'coding.av_segment_uncoded': (p, w) => `removed the coding ${w.code(p.code_id)} from ${w.source(p.source_id)} at ${clockOf(p.start_ms)}–${clockOf(p.end_ms)}`,
  'source.text_extracted': (p, w) => `extracted the text of ${w.source(p.source_id)}`,
  'source.text_edited': (p, w) => `edited the text of ${w.source(p.source_id)}`,
  'source.text_reconciled': (p, w) => `matched the codings of ${w.source(p.source_id)} to its changed text`,
  'source.metadata_suggested': (p, w) => `suggested a language and topics for ${w.source(p.source_id)}`,
  'source.attributes_set': (p, w) => `set ${countOf(Array.isArray(p.attributes) ? p.attributes.length : 0, 'document attribute')} of ${w.source(p.source_id)}`,
  'case.attributes_set': (p, w) =>
    `set ${countOf(Array.isArray(p.attributes) ? p.attributes.length : 0, 'attribute')} of the case '${w.names.caseName(num(p.case_id) ?? -1)}'`,
  'project.snapshot_restored': (p) =>
    `restored the snapshot${text(p.message) ? ` '${shorten(String(p.message), 60)}'` : ''}${text(p.short_ref) ? ` (${String(p.short_ref)})` : ''}`,
  'project.synced': (p) => `synced the project with ${text(p.remote) ?? 'its remote'}${p.outcome === 'merged' ? ' (merged)' : ''}`,
  'project.opened': (p) => `opened the project${text(p.project_name) ? ` '${String(p.project_name)}'` : ''}`,
  'project.closed': (p) => `closed the project${text(p.project_name) ? ` '${String(p.project_name)}'` : ''}`,
  'analysis.report_started': (p) => `started the report ${report(p)}`,
  'analysis.report_completed': (p) => `made the report ${report(p)}`,
  'analysis.report_failed': (p) => `could not make the report ${report(p)}${text(p.error_code) ? ` (${String(p.error_code)})` : ''}`,
  'approval.requested': () => 'asked for approval',
  'approval.granted': () => 'was approved',
  'approval.denied': () => 'was rejected',
  'approval.failed': () => 'failed after approval',
  'session.connected': (p) => `connected${text(p.client_name) ? ` as ${String(p.client_name)}` : ''}`,
  'session.disconnected': () => 'disconnected',
  'agent.notified': (p) => (text(p.summary) ? `told the researcher: ${shorten(String(p.summary), MAX_EXCERPT)}` : 'told the researcher what it did'),
  'agents.paused': () => 'paused every agent',
  'agents.resumed': () => 'resumed every agent',
};

/** "'coder agreement'" of a report event's report_type. */
function report(p: Record<string, unknown>): string {
  return `'${humanizeEventType(text(p.report_type) ?? 'report')}'`;
}

/** Several events of one type said in one sentence (many suggested codings, many rejections), or null. */
function summary(type: string, events: readonly EventRecord[], w: Words): string | null {
  if (events.length < 2) return null;
  const n = events.length;
  if (type === 'suggestion.coding_suggested') {
    const codes = listed(events.map((e) => w.code(e.payload.code_id)));
    const sources = listed(events.map((e) => w.source(e.payload.source_id)));
    return `suggested coding ${n} passages with ${codes} in ${sources}`;
  }
  if (type === 'suggestion.approved') return `approved ${n} suggestions`;
  if (type === 'suggestion.rejected') return `rejected ${n} suggestions`;
  if (type === 'suggestion.code_suggested') return `suggested ${n} codes: ${listed(events.map((e) => `'${text(e.payload.name) ?? ''}'`))}`;
  return null;
}

/** The sentences of events undo's words leave out, one per type (a summary when a type repeats), in order. */
function ownSentences(events: readonly EventRecord[], w: Words): string[] {
  const byType = new Map<string, EventRecord[]>();
  for (const e of events) {
    const list = byType.get(e.event_type);
    if (list) list.push(e);
    else byType.set(e.event_type, [e]);
  }
  // a report that ended says itself that it started
  if (byType.has('analysis.report_completed') || byType.has('analysis.report_failed')) byType.delete('analysis.report_started');
  const out: string[] = [];
  for (const [type, list] of byType) {
    const many = summary(type, list, w);
    if (many !== null) {
      out.push(many);
      continue;
    }
    const say = SENTENCES[type];
    for (const e of list) out.push(say ? say(e.payload, w) : humanizeEventType(type));
  }
  return out;
}

/**
 * The events of one call (in sequence order) in words, past tense, not capitalised: undo's sentences for
 * the events they know ("coded 2 passages with 'Trust' in interview-04"), this module's for the rest
 * ("suggested coding 'Food security' on interview-03-mei.txt: 'And I save the seeds…'", "suggested merging
 * 'A' into 'B'"). An approval of a suggestion that made changes reads as those changes "(as suggested)". At
 * most three sentences, then "and N more changes". Names as the project has them now, else as the events
 * carry them. Reads only; may throw on a malformed payload (describeDone catches).
 */
export function describeActivityEvents(repo: ProjectRepository, events: readonly EventRecord[]): string {
  const names = new Names(repo, events);
  const w = new Words(repo, names);
  // undo's words know an event type or fall back to the type itself, whatever the payload: asked once per type
  const undoKnows = new Map<string, boolean>();
  const known: EventRecord[] = [];
  const rest: EventRecord[] = [];
  for (const e of events) {
    let knows = undoKnows.get(e.event_type);
    if (knows === undefined) undoKnows.set(e.event_type, (knows = !(e.event_type in SENTENCES) && describeEvent(e, names) !== e.event_type));
    (knows ? known : rest).push(e);
  }
  const sentences: string[] = [];
  if (known.length > 0) {
    const asSuggested = rest.length > 0 && rest.every((e) => e.event_type === 'suggestion.approved');
    sentences.push(`${describeAction(known, names)}${asSuggested ? ' (as suggested)' : ''}`);
    if (asSuggested) return sentences[0]!;
  }
  sentences.push(...ownSentences(rest, w));
  const u = [...new Set(sentences)];
  return u.length > 3 ? `${u.slice(0, 3).join('; ')} and ${u.length - 3} more changes` : u.join('; ');
}
