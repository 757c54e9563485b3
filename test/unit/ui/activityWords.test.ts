/**
 * Agent Activity's words for suggestion calls and every other event type (src/ui/activity/activityWords.ts),
 * on a real project file with the real agent layer and HTTP server in-process: an agent ("Claude") suggests a
 * coding, a new code, a merge and a batch of codings; the researcher approves and rejects some. Each row of
 * the rebuilt Agent Activity reads as a sentence with names (never "Suggestion.coding_suggested"); the
 * researcher's decisions read as what they did "(as suggested)". Expected strings are written by hand.
 */
import assert from 'node:assert/strict';
import type { Caller } from '../../../src/agent/pipeline';
import type { ProjectHandle } from '../../../src/cli/compose';
import type { EventRecord, EventType } from '../../../src/domain/events';
import { describeDone, describeRead, rebuildActivity } from '../../../src/ui/activity/activityHistory';
import { eventTitle, humanizeEventType, pastTense } from '../../../src/ui/activity/activityWords';
import { startInProcessStack, type InProcessStack } from '../../helpers/inProcessStack';
import { AS_AGENT, callTool } from '../../helpers/serverProcess';

// the first passage is 104 code points: its excerpt is its first 79 ("…never know "), the space trimmed, and "…"
const SEEDS = 'And I save the seeds from the best plants every autumn, because you never know when the rains will fail.';
const WATER = 'The water went to the big farms first.';
const TEXT = `${SEEDS} ${WATER} We shared what was left.`;
const LOCAL: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'Ana', researcher: true };
const CLAUDE = { ...AS_AGENT, 'x-marginalia-client': 'Claude' };

/** Every event type of src/domain/events.ts EventType, listed by hand (the check below refuses to compile when one is missing). */
const ALL_TYPES = [
  'approval.requested',
  'approval.granted',
  'approval.denied',
  'approval.failed',
  'session.connected',
  'session.disconnected',
  'coding.code_created',
  'coding.code_renamed',
  'coding.code_updated',
  'coding.code_deleted',
  'coding.codes_merged',
  'coding.segment_coded',
  'coding.segment_uncoded',
  'coding.segment_updated',
  'coding.category_created',
  'coding.category_deleted',
  'coding.category_renamed',
  'coding.category_updated',
  'coding.code_moved',
  'coding.av_segment_coded',
  'coding.av_segment_uncoded',
  'source.imported',
  'source.deleted',
  'source.renamed',
  'source.moved',
  'source.text_extracted',
  'source.text_edited',
  'source.text_reconciled',
  'source.metadata_suggested',
  'source.folder_created',
  'source.folder_renamed',
  'source.folder_deleted',
  'source.updated',
  'source.attribute_set',
  'source.attributes_set',
  'case.created',
  'case.deleted',
  'case.member_added',
  'case.member_removed',
  'case.attribute_set',
  'case.updated',
  'case.attributes_set',
  'case.renamed',
  'case.attribute_renamed',
  'suggestion.code_suggested',
  'suggestion.coding_suggested',
  'suggestion.batch_created',
  'suggestion.merge_suggested',
  'suggestion.approved',
  'suggestion.rejected',
  'project.snapshot_restored',
  'project.synced',
  'project.opened',
  'project.closed',
  'project.briefing_updated',
  'agent.notified',
  'agents.paused',
  'agents.resumed',
  'analysis.report_started',
  'analysis.report_completed',
  'analysis.report_failed',
] as const satisfies readonly EventType[];
/** true only while ALL_TYPES names every EventType: a new event type makes this file fail to typecheck until listed */
const _LISTS_EVERY_TYPE: [Exclude<EventType, (typeof ALL_TYPES)[number]>] extends [never] ? true : never = true;

describe('ui/activity: suggestion calls and every event type in words', function () {
  this.timeout(60_000);
  let stack: InProcessStack | undefined;
  let handle: ProjectHandle | undefined;
  let agent: InProcessStack['agent'] | undefined;
  let pipeline: InProcessStack['pipeline'];
  let base = '';
  const ids: Record<string, number> = {};

  /** Runs a tool as the researcher (the UI's session) and returns its data and the events it stored. */
  const local = async (tool: string, args: unknown) => {
    const before = handle!.repo.lastEventSeq();
    const out = await pipeline.invoke(tool, args, LOCAL);
    assert.ok(out.envelope.success, JSON.stringify(out.envelope));
    return { data: out.envelope.data as Record<string, number>, events: handle!.repo.listEventsSince(before, 500) };
  };
  /** Runs a tool as the agent; a call held for approval is approved by the researcher. */
  const asAgent = async (tool: string, args: Record<string, unknown>) => {
    const r = await callTool(base, tool, args, CLAUDE);
    assert.ok(r.body.success, JSON.stringify(r.body));
    if (r.body.data.request_id && r.body.data.status === 'pending_approval' && !r.body.data.suggestion_id && !r.body.data.batch_id) {
      const ok = await agent!.approve(LOCAL, r.body.data.request_id);
      assert.ok(ok.envelope.success, JSON.stringify(ok.envelope));
      return (ok.envelope as { data: { result: Record<string, number> } }).data.result;
    }
    return r.body.data as Record<string, number>;
  };
  const row = (pattern: RegExp) => {
    const items = rebuildActivity(handle!.repo);
    const found = items.find((i) => pattern.test(i.description));
    assert.ok(found, items.map((i) => `${i.status} ${i.title} | ${i.description}`).join('\n'));
    return found;
  };

  before(async () => {
    stack = await startInProcessStack('marginalia-activity-words-');
    ({ handle, agent, pipeline, base } = stack);
    ids.source = (await local('add_text_source', { name: 'interview-03-mei.txt', content: TEXT })).data.source_id!;
    ids.food = (await local('create_code', { name: 'Food security', color: '#4E79A7' })).data.code_id!;
    ids.seeds = (await local('create_code', { name: 'Seeds', color: '#59A14F' })).data.code_id!;
    ids.saving = (await local('create_code', { name: 'Seed saving', color: '#E15759' })).data.code_id!;
    ids.category = (await local('create_category', { name: 'Livelihoods' })).data.category_id!;
  });

  after(async () => {
    await stack?.close();
  });

  it('a suggested coding names its code and source and quotes the passage', async () => {
    const s = await asAgent('suggest_code_application', {
      source_id: ids.source,
      code_id: ids.food,
      start_pos: 0,
      end_pos: SEEDS.length,
      rationale: 'seed saving',
    });
    ids.codingSuggestion = s.suggestion_id!;
    const item = row(/^Suggested coding 'Food/);
    assert.equal(
      item.description,
      "Suggested coding 'Food security' on interview-03-mei.txt: 'And I save the seeds from the best plants every autumn, because you never know…'",
    );
    assert.equal(item.title, 'Suggest Coding');
    assert.equal(item.client_name, 'Claude');
  });

  it('a suggested new code, a suggested merge and a batch of suggested codings', async () => {
    ids.codeSuggestion = (await asAgent('suggest_new_code', { name: 'Water conflict', rationale: 'farms take the water first' })).suggestion_id!;
    assert.equal(row(/Water conflict/).description, "Suggested the code 'Water conflict'");

    const m = await asAgent('suggest_merge_codes', { source_code_id: ids.seeds, target_code_id: ids.saving, rationale: 'the same idea' });
    ids.mergeSuggestion = m.merge_suggestion_id!;
    assert.equal(row(/^Suggested merging/).description, "Suggested merging 'Seeds' into 'Seed saving'");

    const w = TEXT.indexOf(WATER);
    await asAgent('suggest_batch_coding', {
      code_id: ids.food,
      segments: [
        { source_id: ids.source, start_pos: w, end_pos: w + WATER.length },
        { source_id: ids.source, start_pos: TEXT.indexOf('We shared'), end_pos: TEXT.length },
      ],
      rationale: 'who gets food and water',
    });
    assert.equal(row(/^Suggested coding 2/).description, "Suggested coding 2 passages with 'Food security' in interview-03-mei.txt");

    for (const i of rebuildActivity(handle!.repo)) {
      assert.doesNotMatch(i.description, /[a-z]+\.[a-z]+_[a-z]/, `no raw event type: ${i.description}`);
      assert.doesNotMatch(i.description, /_id\b|\bcode \d+\b/, `no ids: ${i.description}`);
    }
  });

  it("the researcher's decisions read as what they did, as suggested, or as the rejection with its reason", async () => {
    const approved = await local('approve_coding_suggestion', { suggestion_id: ids.codingSuggestion });
    assert.equal(describeDone(handle!.repo, approved.events).words, "Coded 'Food security' in interview-03-mei.txt (as suggested)");

    const created = await local('approve_suggestion', { suggestion_id: ids.codeSuggestion });
    assert.equal(describeDone(handle!.repo, created.events).words, "Created the code 'Water conflict' (as suggested)");

    const merged = await local('approve_merge', { merge_suggestion_id: ids.mergeSuggestion });
    assert.equal(describeDone(handle!.repo, merged.events).words, "Merged the code 'Seeds' into 'Seed saving' (as suggested)");
    // the merged code is gone: the suggestion's event is still said with its name
    assert.equal(row(/^Suggested merging/).description, "Suggested merging 'Seeds' into 'Seed saving'");

    const pending = handle!.repo.listSuggestions({ kind: 'coding', status: 'pending' });
    const first = pending[0]!;
    const rejected = await local('reject_coding_suggestion', { suggestion_id: first.suggestion_id, reason: 'not about food' });
    assert.equal(describeDone(handle!.repo, rejected.events).words, "Rejected a suggested coding of 'Food security' on interview-03-mei.txt: not about food");
  });

  it('a completed read says what it did in the past tense', () => {
    const repo = handle!.repo;
    assert.equal(describeRead(repo, 'list_codes', {}), 'Listed codes');
    assert.equal(
      describeRead(repo, 'apply_code', { code_id: ids.food, source_id: ids.source, start_pos: 0, end_pos: 5 }),
      "Coded interview-03-mei.txt with 'Food security': 'And I'",
    );
    const verbs = new Set(['get', 'apply', 'merge', 'read', 'search', 'find', 'undo']);
    assert.equal(pastTense('Get the source', verbs), 'Got the source');
    assert.equal(pastTense('apply a code', verbs), 'applied a code');
    assert.equal(pastTense("Merge 'A' into 'B'", verbs), "Merged 'A' into 'B'");
    assert.equal(pastTense('Read source content', verbs), 'Read source content');
    assert.equal(pastTense('Search passages', verbs), 'Searched passages');
    assert.equal(pastTense('Find similar content', verbs), 'Found similar content');
    assert.equal(pastTense('Undo its own last action', verbs), 'Undid its own last action');
    assert.equal(pastTense('Frobnicate things', verbs), 'Frobnicate things', 'not a known verb: as it is');
    assert.equal(pastTense('Getaway', verbs), 'Getaway');
  });

  it('an unknown event type is humanised, never shown raw', () => {
    assert.equal(humanizeEventType('suggestion.coding_suggested'), 'coding suggested');
    assert.equal(humanizeEventType('suggestion.coding_withdrawn'), 'coding withdrawn');
    assert.equal(humanizeEventType('weird'), 'weird');
    assert.equal(humanizeEventType('x.'), 'made a change');
    assert.equal(eventTitle('suggestion.coding_withdrawn'), 'Coding Withdrawn');
    assert.equal(eventTitle('suggestion.coding_suggested'), 'Suggest Coding');
    const e = { ...fakeEvent('suggestion.coding_withdrawn', {}) } as unknown as EventRecord;
    assert.equal(describeDone(handle!.repo, [e]).words, 'Coding withdrawn');
  });

  it('every event type gives a sentence in words', () => {
    const payload = {
      code_id: ids.food,
      source_id: ids.source,
      source_code_id: ids.seeds,
      source_code_name: 'Seeds',
      target_code_id: ids.saving,
      case_id: 1,
      segment_id: 999_999,
      suggestion_id: ids.mergeSuggestion,
      category_id: ids.category,
      name: 'Harvest',
      old_name: 'Old',
      new_name: 'New',
      field: 'memo',
      changed: ['description'],
      segment_range: null,
      type: 'text',
      value: 'v',
      attribute_name: 'region',
      attributes: [{ name: 'a' }],
      start_ms: 61_000,
      end_ms: 75_000,
      report_type: 'coder_agreement',
      remote: 'origin',
      message: 'before coding',
      short_ref: 'abc1234',
      project_name: 'community-gardens',
      kind: 'coding',
      count: 0,
    };
    const expected: Record<string, string> = {
      'coding.av_segment_coded': "Coded 'Food security' in interview-03-mei.txt at 1:01–1:15",
      'suggestion.merge_suggested': "Suggested merging 'Seeds' into 'Seed saving'",
      'suggestion.approved': "Approved the suggested merge of 'Seeds' into 'Seed saving'",
      'suggestion.batch_created': "Found no passages to suggest coding with 'Food security'",
      'project.snapshot_restored': "Restored the snapshot 'before coding' (abc1234)",
      'analysis.report_completed': "Made the report 'coder agreement'",
      'agents.paused': 'Paused every agent',
    };
    for (const [type, words] of Object.entries(expected)) assert.equal(describeDone(handle!.repo, [fakeEvent(type, payload)]).words, words, type);
    for (const type of ALL_TYPES) {
      const words = describeDone(handle!.repo, [fakeEvent(type, payload)]).words;
      if (type.startsWith('approval.') || type.startsWith('session.')) {
        assert.equal(words, null, `${type}: bookkeeping of the call, not what it did`);
        continue;
      }
      assert.ok(words, type);
      assert.doesNotMatch(
        words,
        /_|\bundefined\b|\bnull\b|\bcode \d|\b(approval|session|coding|source|case|suggestion|project|agents?|analysis)\.[a-z]/,
        `${type}: ${words}`,
      );
      assert.match(words, /^[A-Z][a-z]/, `${type}: ${words}`);
      assert.doesNotMatch(eventTitle(type), /[._]/, type);
    }
  });
});

/** A stored event of `type` with `payload`, as the event log gives it. */
function fakeEvent(type: string, payload: Record<string, unknown>): EventRecord {
  return {
    event_id: `e-${type}`,
    event_type: type as EventRecord['event_type'],
    timestamp: '2026-01-01T00:00:00.000Z',
    aggregate_type: 'x',
    aggregate_id: '1',
    caused_by: { session_id: 's', client_type: 'HTTP', user: 'Claude', role: 'agent' },
    payload,
    metadata: { correlation_id: 'c', sequence_number: 1 },
  };
}
