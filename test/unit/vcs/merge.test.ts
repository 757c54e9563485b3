/**
 * The entity-level three-way merge (src/vcs/merge, issue 16 item 3): one scenario per rule. Two real sql.js
 * projects on disk start from the same base (the same calls under a fixed clock give the same rows and ids),
 * then diverge through the real tools (ours by alice, theirs by bob). Their canonical dumps are merged, the
 * merged dump is restored into ours' project (so the store's own constraints check it), and the result is read
 * back through the read tools. Coded text is checked by slicing the merged source text at each coding's
 * positions in the test, against words written here.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Caller } from '../../../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import { StoreDumpAccess } from '../../../src/store/dumpAccess';
import { canonicalDump, parseDump, planRestore, readProjectTables, type ParsedDump } from '../../../src/vcs/canonicalDump';
import { mergeDumps, type MergeConflict } from '../../../src/vcs/merge/mergeDumps';
import { mapRange, mergeText } from '../../../src/vcs/merge/textMerge';
import { parseForMerge, planMergeChanges } from '../../../src/vcs/syncMerge';
import { ALICE, fixedClock, openFixture, type Fixture } from '../domain/projectFixture';

const BOB: Caller = { session_id: 'sess-bob', client_type: 'REST_CLIENT', client_name: 'unit-test', user: 'bob' };
/** The editor's own caller (apply_source_edits is the editor's tool): alice's and bob's VS Code. */
const ALICE_EDITOR: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'alice' };
const BOB_EDITOR: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'bob' };

interface Seg {
  segment_id: number;
  code_id: number;
  start_pos: number;
  end_pos: number;
  owner?: string;
  coder?: string;
}

/** A second copy of `fx`'s project (its file copied, as a clone of the history gives), with its own pipeline. */
async function copyOf(fx: Fixture): Promise<Fixture> {
  fx.handle.store.checkpoint();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-merge-'));
  fs.copyFileSync(path.join(fx.dir, 'p.qda'), path.join(dir, 'p.qda'));
  const handle = await openProjectHandle(path.join(dir, 'p.qda'), { checkpointIdleMs: 0 });
  const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, clock: fixedClock });
  const call = (name: string, args: unknown = {}, caller: Caller = ALICE) => pipeline.invoke(name, args, caller);
  return {
    dir,
    handle,
    pipeline,
    call,
    async ok(name, args = {}, caller = ALICE) {
      const out = await call(name, args, caller);
      if (!out.envelope.success) assert.fail(`${name} failed: ${out.envelope.error_code}: ${out.envelope.error}`);
      return out.envelope.data as any;
    },
    fails: () => Promise.reject(new Error('not used')),
    async close() {
      await handle.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function dumpOf(fx: Fixture): ParsedDump {
  return parseDump(canonicalDump(readProjectTables(new StoreDumpAccess(fx.handle.store))));
}

/** Code point slice, written here independently of the code under test. */
function cut(text: string, start: number, end: number): string {
  return Array.from(text).slice(start, end).join('');
}

describe('vcs merge: entity-level three-way merge of two histories', function () {
  this.timeout(60_000);
  let ours: Fixture;
  let theirs: Fixture | undefined;
  beforeEach(async () => {
    ours = await openFixture();
    theirs = undefined;
  });
  afterEach(async () => {
    await ours.close();
    await theirs?.close();
  });

  /** Runs `fn` on ours before the copies diverge (the shared history). */
  async function both<T>(fn: (fx: Fixture) => Promise<T>): Promise<T> {
    return fn(ours);
  }
  const their = () => theirs!;

  /**
   * The merge as a sync makes it (src/vcs/remote.ts): the three dumps' files parsed without the rows identical in
   * all three (parseForMerge), merged with ours' sqlite_sequence as the id floor, the changes from ours applied
   * (planMergeChanges). The full parse gives the same project (checked here each time).
   */
  async function merge() {
    const files = (fx: Fixture) => canonicalDump(readProjectTables(new StoreDumpAccess(fx.handle.store)));
    const idFloor = Object.fromEntries(
      ours.handle.store.all<{ name: string; seq: number }>('SELECT name, seq FROM sqlite_sequence').map((r) => [r.name, r.seq]),
    );
    const opts = { now: '2026-02-01T00:00:00.000Z', idFloor };
    const input = parseForMerge(baseFiles, files(ours), files(their()));
    const result = mergeDumps(input.base, input.ours, input.theirs, opts);
    const full = mergeDumps(baseDump, dumpOf(ours), dumpOf(their()), opts);
    const access = new StoreDumpAccess(ours.handle.store);
    ours.handle.store.transaction(() => access.applyChanges(planMergeChanges(access.tables(), input.ours, result.merged)));
    assert.equal(ours.handle.store.get('PRAGMA foreign_key_check'), undefined, 'no dangling reference');
    assert.deepEqual(result.conflicts, full.conflicts);
    assert.deepEqual(planRestore(readProjectTables(access), full.merged), [], 'the same project as merging every row');
    return result;
  }
  let baseDump: ParsedDump;
  let baseFiles: Map<string, string>;
  /** The copies diverge here: theirs is a copy of ours, and both dumps are the base. */
  const base = async () => {
    baseDump = dumpOf(ours);
    baseFiles = canonicalDump(readProjectTables(new StoreDumpAccess(ours.handle.store)));
    theirs = await copyOf(ours);
    assert.deepEqual(
      canonicalDump(readProjectTables(new StoreDumpAccess(theirs.handle.store))),
      canonicalDump(readProjectTables(new StoreDumpAccess(ours.handle.store))),
    );
  };

  async function textAndSegments(sourceId: number): Promise<{ text: string; segs: (Seg & { words: string })[] }> {
    const text = (await ours.ok('read_source_content', { source_id: sourceId })).content as string;
    const segs = ((await ours.ok('list_segments_for_source', { source_id: sourceId })).segments as Seg[]).map((s) => ({
      ...s,
      words: cut(text, s.start_pos, s.end_pos),
    }));
    return { text, segs };
  }

  const only = (conflicts: MergeConflict[], kind: string) => conflicts.filter((c) => c.kind === kind);

  it('codings by different coders on the same text are all kept, theirs renumbered without collision', async () => {
    const content = 'I trust my neighbours but not the council.';
    const src = await both(async (fx) => (await fx.ok('add_text_source', { name: 'Interview', content })).source_id as number);
    const code = await both(async (fx) => (await fx.ok('create_code', { name: 'Trust', color: '#4E79A7' })).code_id as number);
    await base();
    const a = (await ours.ok('apply_code', { code_id: code, source_id: src, start_pos: 2, end_pos: 7 })).segment_id as number;
    const b1 = (await their().ok('apply_code', { code_id: code, source_id: src, start_pos: 2, end_pos: 2 + 'trust my neighbours'.length }, BOB))
      .segment_id as number;
    await their().ok(
      'apply_code',
      { code_id: code, source_id: src, start_pos: content.indexOf('the council'), end_pos: content.indexOf('the council') + 11 },
      BOB,
    );
    assert.equal(b1, a, 'both sides gave their new coding the same local id');
    const { conflicts, summary } = await merge();
    assert.deepEqual(conflicts, []);
    assert.equal(summary.renumbered, 2);
    const { segs } = await textAndSegments(src);
    assert.deepEqual(
      segs.map((s) => [s.words, s.code_id]).sort(),
      [
        ['the council', code],
        ['trust', code],
        ['trust my neighbours', code],
      ].sort(),
    );
    assert.equal(new Set(segs.map((s) => s.segment_id)).size, 3);
    // the segment ids given to theirs are above every id ours used: coding again gets a fresh id
    const next = (await ours.ok('apply_code', { code_id: code, source_id: src, start_pos: 0, end_pos: 1 })).segment_id as number;
    assert.ok(segs.every((s) => s.segment_id < next));
  });

  it('the same code created on both sides (same name, same category) becomes one code holding the codings of both', async () => {
    const src = await both(async (fx) => (await fx.ok('add_text_source', { name: 'Notes', content: 'Money was tight. Family helped.' })).source_id as number);
    const cat = await both(async (fx) => (await fx.ok('create_category', { name: 'Support' })).category_id as number);
    await base();
    const co = (await ours.ok('create_code', { name: 'Family', color: '#111111', category_id: cat })).code_id as number;
    await ours.ok('apply_code', { code_id: co, source_id: src, start_pos: 17, end_pos: 23 });
    const ct = (await their().ok('create_code', { name: 'family', color: '#222222', category_id: cat }, BOB)).code_id as number;
    await their().ok('create_code', { name: 'Money', color: '#333333' }, BOB);
    await their().ok('apply_code', { code_id: ct, source_id: src, start_pos: 17, end_pos: 30 }, BOB);
    const { conflicts, summary } = await merge();
    assert.deepEqual(conflicts, []);
    assert.equal(summary.unified, 1);
    const codes = (await ours.ok('list_codes')).codes as { code_id: number; name: string }[];
    assert.deepEqual(codes.map((c) => c.name).sort(), ['Family', 'Money']);
    const { segs } = await textAndSegments(src);
    assert.deepEqual(
      segs.map((s) => s.code_id),
      [co, co],
    );
    assert.deepEqual(segs.map((s) => s.words).sort(), ['Family', 'Family helped']);
  });

  it('a code renamed on both sides to different names is a conflict: ours kept, both names recorded; the conflict id is stable', async () => {
    const code = await both(async (fx) => (await fx.ok('create_code', { name: 'Worry', color: '#4E79A7' })).code_id as number);
    await base();
    await ours.ok('rename_code', { code_id: code, new_name: 'Anxiety' });
    await their().ok('rename_code', { code_id: code, new_name: 'Concern' }, BOB);
    const first = mergeDumps(baseDump, dumpOf(ours), dumpOf(their()));
    const { conflicts } = await merge();
    const c = only(conflicts, 'code_renamed_both');
    assert.equal(c.length, 1);
    assert.equal(c[0]!.entity.table, 'codes');
    assert.equal(c[0]!.entity.local_id, code);
    assert.equal(c[0]!.ours, 'Anxiety');
    assert.equal(c[0]!.theirs, 'Concern');
    assert.equal(c[0]!.base, 'Worry');
    assert.equal(first.conflicts[0]!.conflict_id, c[0]!.conflict_id);
    assert.deepEqual(
      ((await ours.ok('list_codes')).codes as { name: string }[]).map((x) => x.name),
      ['Anxiety'],
    );
  });

  it('a code deleted on one side and used on the other is kept, with a code_deleted_used conflict', async () => {
    const src = await both(async (fx) => (await fx.ok('add_text_source', { name: 'Diary', content: 'We moved house in spring.' })).source_id as number);
    const code = await both(async (fx) => (await fx.ok('create_code', { name: 'Moving', color: '#4E79A7' })).code_id as number);
    await base();
    await ours.ok('delete_code', { code_id: code });
    await their().ok('apply_code', { code_id: code, source_id: src, start_pos: 3, end_pos: 14 }, BOB);
    const { conflicts } = await merge();
    const c = only(conflicts, 'code_deleted_used');
    assert.equal(c.length, 1);
    assert.equal(c[0]!.ours, null, 'ours deleted it');
    assert.equal((c[0]!.theirs as { name: string }).name, 'Moving');
    const codes = (await ours.ok('list_codes')).codes as { code_id: number; name: string }[];
    assert.deepEqual(
      codes.map((x) => x.name),
      ['Moving'],
    );
    const { segs } = await textAndSegments(src);
    assert.deepEqual(
      segs.map((s) => [s.words, s.code_id]),
      [['moved house', codes[0]!.code_id]],
    );
  });

  it('a code moved to different categories on both sides is a conflict; ours placement kept', async () => {
    const code = await both(async (fx) => (await fx.ok('create_code', { name: 'Hope', color: '#4E79A7' })).code_id as number);
    const c1 = await both(async (fx) => (await fx.ok('create_category', { name: 'Feelings' })).category_id as number);
    const c2 = await both(async (fx) => (await fx.ok('create_category', { name: 'Futures' })).category_id as number);
    await base();
    await ours.ok('move_code', { code_id: code, category_id: c1 });
    await their().ok('move_code', { code_id: code, category_id: c2 }, BOB);
    const { conflicts } = await merge();
    const c = only(conflicts, 'code_moved_both');
    assert.equal(c.length, 1);
    assert.equal(c[0]!.ours, c1);
    assert.equal(c[0]!.theirs, c2);
    assert.equal(c[0]!.base, null);
    const codes = (await ours.ok('list_codes')).codes as { category_id: number | null }[];
    assert.equal(codes[0]!.category_id, c1);
  });

  it('a memo edited on both sides is a conflict; one side only merges silently', async () => {
    const code = await both(async (fx) => (await fx.ok('create_code', { name: 'Care', color: '#4E79A7', memo: 'looking after' })).code_id as number);
    const other = await both(async (fx) => (await fx.ok('create_code', { name: 'Work', color: '#59A14F' })).code_id as number);
    await base();
    await ours.ok('update_code_memo', { code_id: code, memo: 'looking after others' });
    await their().ok('update_code_memo', { code_id: code, memo: 'unpaid care work' }, BOB);
    await their().ok('update_code_memo', { code_id: other, memo: 'paid work only' }, BOB);
    const { conflicts } = await merge();
    const c = only(conflicts, 'memo_edited_both');
    assert.equal(c.length, 1);
    assert.deepEqual([c[0]!.ours, c[0]!.theirs, c[0]!.base], ['looking after others', 'unpaid care work', 'looking after']);
    const codes = (await ours.ok('list_codes')).codes as { name: string; memo: string | null }[];
    assert.deepEqual(
      codes.map((x) => [x.name, x.memo]),
      [
        ['Care', 'looking after others'],
        ['Work', 'paid work only'],
      ],
    );
  });

  it('a transcript edited on both sides is merged three-way; codings made on both sides land on the right words', async () => {
    const content =
      'Interviewer: How was school?\nAnna: Honestly it was hard. The teachers were kind though.\nInterviewer: And now?\nAnna: Now I work at the bakery.';
    const src = await both(async (fx) => (await fx.ok('add_text_source', { name: 'Anna', content })).source_id as number);
    const code = await both(async (fx) => (await fx.ok('create_code', { name: 'School', color: '#4E79A7' })).code_id as number);
    const work = await both(async (fx) => (await fx.ok('create_code', { name: 'Work', color: '#59A14F' })).code_id as number);
    const pos = (s: string) => Array.from(content).join('').indexOf(s); // ASCII text: code units = code points
    // a coding from before the split, on "teachers were kind"
    await both(
      async (fx) =>
        (await fx.ok('apply_code', { code_id: code, source_id: src, start_pos: pos('teachers were kind'), end_pos: pos('teachers were kind') + 18 }))
          .segment_id as number,
    );
    await base();
    // ours fixes a word early in the text, then codes "it was hard"
    await ours.ok(
      'apply_source_edits',
      { source_id: src, edits: [{ start_pos: pos('Honestly'), end_pos: pos('Honestly') + 8, text: 'To be honest,' }] },
      ALICE_EDITOR,
    );
    const oursText = (await ours.ok('read_source_content', { source_id: src })).content as string;
    await ours.ok('apply_code', { code_id: code, source_id: src, start_pos: oursText.indexOf('it was hard'), end_pos: oursText.indexOf('it was hard') + 11 });
    // theirs rewrites the last line and codes "the village bakery"
    await their().ok(
      'apply_source_edits',
      { source_id: src, edits: [{ start_pos: pos('the bakery'), end_pos: pos('the bakery') + 10, text: 'the village bakery, mornings' }] },
      BOB_EDITOR,
    );
    const theirsText = (await their().ok('read_source_content', { source_id: src })).content as string;
    await their().ok(
      'apply_code',
      { code_id: work, source_id: src, start_pos: theirsText.indexOf('the village bakery'), end_pos: theirsText.indexOf('the village bakery') + 18 },
      BOB,
    );
    const { conflicts, summary } = await merge();
    assert.deepEqual(conflicts, []);
    assert.equal(summary.texts_merged, 1);
    const { text, segs } = await textAndSegments(src);
    assert.equal(
      text,
      'Interviewer: How was school?\nAnna: To be honest, it was hard. The teachers were kind though.\nInterviewer: And now?\nAnna: Now I work at the village bakery, mornings.',
    );
    assert.deepEqual(
      segs.map((s) => [s.words, s.code_id]),
      [
        ['it was hard', code],
        ['teachers were kind', code],
        ['the village bakery', work],
      ],
    );
    // the stored quote of each coding agrees with its words
    const listed = (await ours.ok('list_segments_for_source', { source_id: src })).segments as { text: string }[];
    assert.deepEqual(
      listed.map((s) => s.text),
      ['it was hard', 'teachers were kind', 'the village bakery'],
    );
  });

  it('overlapping edits of the same passage are a source_text_overlap conflict: ours in the text, theirs in the conflict; the rest merges', async () => {
    const content = 'We lived near the river. The flood came in May. Nobody helped us.';
    const src = await both(async (fx) => (await fx.ok('add_text_source', { name: 'Flood', content })).source_id as number);
    const code = await both(async (fx) => (await fx.ok('create_code', { name: 'Disaster', color: '#4E79A7' })).code_id as number);
    await base();
    await ours.ok(
      'apply_source_edits',
      { source_id: src, edits: [{ start_pos: content.indexOf('in May'), end_pos: content.indexOf('in May') + 6, text: 'in early May' }] },
      ALICE_EDITOR,
    );
    await their().ok(
      'apply_source_edits',
      { source_id: src, edits: [{ start_pos: content.indexOf('in May'), end_pos: content.indexOf('in May') + 6, text: 'in June' }] },
      BOB_EDITOR,
    );
    await their().ok('apply_source_edits', { source_id: src, edits: [{ start_pos: 0, end_pos: 2, text: 'They' }] }, BOB_EDITOR);
    const tText = (await their().ok('read_source_content', { source_id: src })).content as string;
    await their().ok(
      'apply_code',
      { code_id: code, source_id: src, start_pos: tText.indexOf('Nobody helped'), end_pos: tText.indexOf('Nobody helped') + 13 },
      BOB,
    );
    const { conflicts } = await merge();
    const c = only(conflicts, 'source_text_overlap');
    assert.equal(c.length, 1);
    assert.equal(c[0]!.entity.local_id, src);
    assert.equal((c[0]!.ours as { text: string }).text, 'early May');
    assert.equal((c[0]!.theirs as { text: string }).text, 'June');
    assert.equal((c[0]!.base as { text: string }).text, 'May');
    const { text, segs } = await textAndSegments(src);
    assert.equal(text, 'They lived near the river. The flood came in early May. Nobody helped us.');
    const o = c[0]!.ours as { start_pos: number; end_pos: number };
    assert.equal(cut(text, o.start_pos, o.end_pos), 'early May');
    assert.deepEqual(
      segs.map((s) => s.words),
      ['Nobody helped'],
    );
  });

  it("one coder's identical coding made on both copies is one coding; another coder's coding of the same words stays its own", async () => {
    const content = 'The market closed early. Prices went up.';
    const src = await both(async (fx) => (await fx.ok('add_text_source', { name: 'Market', content })).source_id as number);
    const code = await both(async (fx) => (await fx.ok('create_code', { name: 'Prices', color: '#4E79A7' })).code_id as number);
    await base();
    const at = { code_id: code, source_id: src, start_pos: content.indexOf('Prices'), end_pos: content.length };
    // alice codes the sentence here and, on her other device (theirs), again; bob codes it there too
    await ours.ok('apply_code', at);
    await their().ok('apply_code', at);
    await their().ok('apply_code', at, BOB);
    const { conflicts, summary } = await merge();
    assert.deepEqual(conflicts, []);
    assert.equal(summary.unified, 1);
    const { segs } = await textAndSegments(src);
    assert.deepEqual(segs.map((s) => `${s.owner ?? s.coder}: ${s.words}`).sort(), ['alice: Prices went up.', 'bob: Prices went up.']);
  });

  it('codings spanning a passage both sides edited differently keep covering it: the whole passage, in the version the text keeps', async () => {
    const content = 'We lived near the river. The flood came in May. Nobody helped us.';
    const src = await both(async (fx) => (await fx.ok('add_text_source', { name: 'Flood', content })).source_id as number);
    const code = await both(async (fx) => (await fx.ok('create_code', { name: 'Disaster', color: '#4E79A7' })).code_id as number);
    await base();
    const edit = (text: string) => ({ source_id: src, edits: [{ start_pos: content.indexOf('May'), end_pos: content.indexOf('May') + 3, text }] });
    await ours.ok('apply_source_edits', edit('early May'), ALICE_EDITOR);
    await their().ok('apply_source_edits', edit('the first days of June'), BOB_EDITOR);
    const oText = (await ours.ok('read_source_content', { source_id: src })).content as string;
    const tText = (await their().ok('read_source_content', { source_id: src })).content as string;
    const codeWords = async (fx: Fixture, text: string, words: string, caller = ALICE) => {
      const at = text.indexOf(words);
      assert.ok(at >= 0, words);
      await fx.ok('apply_code', { code_id: code, source_id: src, start_pos: at, end_pos: at + words.length }, caller);
    };
    await codeWords(ours, oText, 'flood came in early May. Nobody');
    // bob: a sentence spanning his version of the passage, one starting in it, one ending in it, and the passage alone
    await codeWords(their(), tText, 'The flood came in the first days of June.', BOB);
    await codeWords(their(), tText, 'first days of June. Nobody helped', BOB);
    await codeWords(their(), tText, 'came in the first days', BOB);
    await codeWords(their(), tText, 'the first days of June', BOB);
    const { conflicts } = await merge();
    assert.equal(only(conflicts, 'source_text_overlap').length, 1);
    const { text, segs } = await textAndSegments(src);
    assert.equal(text, 'We lived near the river. The flood came in early May. Nobody helped us.');
    assert.deepEqual(segs.map((s) => s.words).sort(), [
      'The flood came in early May.',
      'came in early May',
      'early May',
      'early May. Nobody helped',
      'flood came in early May. Nobody',
    ]);
  });

  it('two different entities given one name (a rename on one side, a new code on the other) are kept apart: name_clash', async () => {
    const code = await both(async (fx) => (await fx.ok('create_code', { name: 'Fear', color: '#4E79A7' })).code_id as number);
    await base();
    await ours.ok('rename_code', { code_id: code, new_name: 'Dread' });
    await their().ok('create_code', { name: 'Dread', color: '#59A14F' }, BOB);
    const { conflicts } = await merge();
    assert.equal(only(conflicts, 'name_clash').length, 1);
    assert.deepEqual(((await ours.ok('list_codes')).codes as { name: string }[]).map((x) => x.name).sort(), ['Dread', 'Dread (2)']);
  });

  it('resolve_merge_conflict "both" on a text conflict keeps ours\' passage with its coding and adds theirs\' right after it', async () => {
    const content = 'We lived near the river. The flood came in May. Nobody helped us.';
    const src = await both(async (fx) => (await fx.ok('add_text_source', { name: 'Flood', content })).source_id as number);
    const code = await both(async (fx) => (await fx.ok('create_code', { name: 'Disaster', color: '#4E79A7' })).code_id as number);
    await base();
    await ours.ok(
      'apply_source_edits',
      { source_id: src, edits: [{ start_pos: content.indexOf('in May'), end_pos: content.indexOf('in May') + 6, text: 'in early May' }] },
      ALICE_EDITOR,
    );
    const oText = (await ours.ok('read_source_content', { source_id: src })).content as string;
    await ours.ok('apply_code', { code_id: code, source_id: src, start_pos: oText.indexOf('early May'), end_pos: oText.indexOf('early May') + 9 });
    await their().ok(
      'apply_source_edits',
      { source_id: src, edits: [{ start_pos: content.indexOf('in May'), end_pos: content.indexOf('in May') + 6, text: 'in June' }] },
      BOB_EDITOR,
    );
    const { conflicts } = await merge();
    ours.handle.store.transaction(() => ours.handle.repo.saveMergeConflicts(conflicts, 'test', '2026-02-01T00:00:00.000Z'));
    const c = only(conflicts, 'source_text_overlap')[0]!;
    const out = await ours.ok('resolve_merge_conflict', { conflict_id: c.conflict_id, choice: 'both' });
    assert.equal(out.conflict.status, 'resolved');
    const { text, segs } = await textAndSegments(src);
    assert.equal(text, 'We lived near the river. The flood came in early May June. Nobody helped us.');
    assert.deepEqual(
      segs.map((s) => s.words),
      ['early May'],
    );
    // resolved already
    await ours.fails('resolve_merge_conflict', { conflict_id: c.conflict_id, choice: 'ours' }, 'MERGE_CONFLICT_NOT_FOUND');
  });

  it('resolve_merge_conflict "ours" on delete versus use, when ours deleted the code, deletes it with the codings theirs made', async () => {
    const src = await both(async (fx) => (await fx.ok('add_text_source', { name: 'Diary', content: 'We moved house in spring.' })).source_id as number);
    const code = await both(async (fx) => (await fx.ok('create_code', { name: 'Moving', color: '#4E79A7' })).code_id as number);
    await base();
    await ours.ok('delete_code', { code_id: code });
    await their().ok('apply_code', { code_id: code, source_id: src, start_pos: 3, end_pos: 14 }, BOB);
    const { conflicts } = await merge();
    ours.handle.store.transaction(() => ours.handle.repo.saveMergeConflicts(conflicts, null, '2026-02-01T00:00:00.000Z'));
    const c = only(conflicts, 'code_deleted_used')[0]!;
    await ours.fails('resolve_merge_conflict', { conflict_id: c.conflict_id, choice: 'both' }, 'INVALID_ARGUMENTS');
    const out = await ours.ok('resolve_merge_conflict', { conflict_id: c.conflict_id, choice: 'ours' });
    assert.equal(out.applied, 'deleted it');
    assert.deepEqual((await ours.ok('list_codes')).codes, []);
    assert.deepEqual((await textAndSegments(src)).segs, []);
    assert.deepEqual(ours.handle.repo.listMergeConflicts('open'), []);
  });

  it('an entity deleted on one side and edited on the other keeps ours (deleted_edited); a memo of a deleted code counts as an edit', async () => {
    const code = await both(async (fx) => (await fx.ok('create_code', { name: 'Grief', color: '#4E79A7' })).code_id as number);
    await base();
    await ours.ok('delete_code', { code_id: code });
    await their().ok('update_code_memo', { code_id: code, memo: 'loss of a person' }, BOB);
    const { conflicts } = await merge();
    const c = only(conflicts, 'deleted_edited');
    assert.equal(c.length, 1);
    assert.equal(c[0]!.ours, null);
    assert.equal((c[0]!.theirs as { memo: string }).memo, 'loss of a person');
    assert.equal(c[0]!.entity.local_id, null);
    assert.deepEqual((await ours.ok('list_codes')).codes, []);
  });

  it('mergeText: non-overlapping edits both apply; equal edits apply once; touching at a point is no conflict', () => {
    assert.deepEqual(mergeText('a b c d', 'A b c d', 'a b c D').text, 'A b c D');
    const same = mergeText('one two three', 'one 2 three', 'one 2 three');
    assert.deepEqual([same.text, same.overlaps.length], ['one 2 three', 0]);
    const r = mergeText('alpha beta', 'alpha gamma beta', 'alpha beta delta');
    assert.deepEqual([r.text, r.overlaps.length], ['alpha gamma beta delta', 0]);
    // positions are code points: an emoji before the edits counts as one
    const e = mergeText('😀 one two three', '😀 1 two three', '😀 one two 3');
    assert.equal(e.text, '😀 1 two 3');
    const two = mapRange(e.theirsEdits, 6, 9); // "two" in theirs' text (code points)
    assert.equal(Array.from(e.text).slice(two!.start_pos, two!.end_pos).join(''), 'two');
  });
});
