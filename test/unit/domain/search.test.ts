/**
 * Search (src/domain/search.ts, src/tools/searchTools.ts, migration 5) through the one pipeline on real
 * project files: search_text (phrases, prefixes, boolean operators, exact code point positions in non-ASCII
 * and emoji text, paging, filters, query syntax errors), the FTS4 indexes staying in sync with sources,
 * segments and codes (also after a journal replay and when migration 5 runs on an existing project),
 * search_codes, and the similarity searches: search_semantic and find_similar_segments against a stand-in
 * embedding endpoint started here (a real embedding model cannot run in the test), and their lexical (BM25)
 * fallback.
 *
 * Expected positions come from an independent oracle: a regular expression over the original file text,
 * with UTF-16 indices converted to code points by spreading the string (`[...s].length`).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { Caller, ToolPipeline } from '../../../src/agent/pipeline';
import { createPipeline, embeddingsFromEnvironment, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import { stemForms } from '../../../src/domain/ranking/stemmer';
import { groupOffsets, snippetAround, utf8OffsetsToPositions } from '../../../src/domain/search';
import { parseSearchQuery } from '../../../src/domain/searchQuery';
import { journalPath } from '../../../src/store/projectStore';
import { MAX_EMBED_PER_CALL } from '../../../src/tools/searchTools';
import { requireCorpus, tmpDir } from '../../helpers/serverProcess';
import { ALICE, databaseBeforeMigration, FIXED_ISO, fixedClock, openFixture, type Fixture } from './projectFixture';

const COLOR = '#4E79A7';
const LOCAL_UI: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'alice' };

/** Code point index of UTF-16 index `u` in `s`, computed independently of src/core. */
const cpAt = (s: string, u: number) => [...s.slice(0, u)].length;

/** Every match of `re` (global, unicode) in `text` as a code point range. */
function oracle(text: string, re: RegExp): [number, number][] {
  return [...text.matchAll(re)].map((m) => [cpAt(text, m.index), cpAt(text, m.index + m[0].length)]);
}

/** A regular expression matching the words of a phrase as FTS4's unicode61 tokenizer sees them (any non-alphanumerics between). */
function phraseRe(words: string[], prefixLast = false): RegExp {
  const body = words.map((w, i) => (i === words.length - 1 && prefixLast ? `${w}[\\p{L}\\p{N}]*` : w)).join('[^\\p{L}\\p{N}]+');
  return new RegExp(`(?<![\\p{L}\\p{N}])${body}(?![\\p{L}\\p{N}])`, 'giu');
}

/** Runs FTS4's own consistency check of each index ('integrity-check' throws SQLITE_CORRUPT_VTAB when an index disagrees with its table). */
function ftsIntegrity(h: ProjectHandle): void {
  h.store.transaction(() => {
    for (const t of ['source_fts', 'segment_fts', 'code_fts']) h.store.run(`INSERT INTO ${t}(${t}) VALUES ('integrity-check')`);
  });
}

/** Every match of a search_text query (all pages of `limit`). */
async function allMatches(fx: Fixture, query: string, extra: Record<string, unknown> = {}, limit = 500): Promise<any[]> {
  const out: any[] = [];
  let offset = 0;
  for (;;) {
    const r = await fx.ok('search_text', { query, limit, offset, ...extra });
    out.push(...r.matches);
    if (!r.has_more) return out;
    offset = r.next_offset;
  }
}

const key = (m: { source_id: number; start_pos: number; end_pos: number }) => `${m.source_id}:${m.start_pos}:${m.end_pos}`;

describe('domain/search through the pipeline', () => {
  describe('search_text on the real transcripts', () => {
    let fx: Fixture;
    /** source_id -> the file's text */
    const texts = new Map<number, string>();
    const ids = new Map<string, number>();

    before(async function () {
      const dir = requireCorpus(this, 'transcripts');
      fx = await openFixture();
      for (const f of fs
        .readdirSync(dir)
        .filter((n) => n.endsWith('.txt'))
        .sort()) {
        const s = await fx.ok('import_file_source', { file_path: path.join(dir, f) });
        texts.set(s.source_id, fs.readFileSync(path.join(dir, f), 'utf8'));
        ids.set(f, s.source_id);
      }
      assert.equal(texts.size, 8);
    });
    after(async () => {
      await fx?.close();
    });

    /** The oracle's ranges in every source, as match keys. */
    function expected(re: RegExp): string[] {
      const out: string[] = [];
      for (const [id, text] of texts) for (const [s, e] of oracle(text, re)) out.push(`${id}:${s}:${e}`);
      return out.sort();
    }

    it('finds a phrase at exact code point positions that read back as the phrase (text with … “ ” ° before the matches)', async () => {
      for (const [query, words] of [
        ['"data collection"', ['data', 'collection']],
        ['"loud and clear"', ['loud', 'and', 'clear']],
      ] as const) {
        const matches = await allMatches(fx, query);
        const want = expected(phraseRe([...words]));
        assert.ok(want.length >= 3, `the corpus has ${query} (${want.length})`);
        assert.deepEqual(matches.map(key).sort(), want, query);
        for (const m of matches) {
          const page = await fx.ok('read_source_content', { source_id: m.source_id, start_pos: m.start_pos, end_pos: m.end_pos });
          assert.equal(page.content, m.text, 'text is exactly [start_pos, end_pos)');
          assert.deepEqual(m.text.toLowerCase().split(/[^\p{L}\p{N}]+/u), [...words], `${query} at ${key(m)}`);
          assert.ok(m.snippet.includes(`«${m.text.replace(/\s+/g, ' ')}»`), m.snippet);
        }
      }
      // sheffield_Ana has 144 "…" (3 UTF-8 bytes each) before its matches: byte offsets would be far off
      const ana = ids.get('sheffield_Ana.txt')!;
      const inAna = (await allMatches(fx, '"data collection"')).filter((m) => m.source_id === ana);
      assert.ok(inAna.length > 0);
      const anaText = texts.get(ana)!;
      assert.ok(
        Buffer.byteLength(anaText.slice(0, anaText.indexOf('data collection'))) > anaText.indexOf('data collection'),
        'multi-byte text precedes the match',
      );
    });

    it('finds a single word case-insensitively, and capitalised occurrences too', async () => {
      const matches = await allMatches(fx, 'capsule');
      const want = expected(phraseRe(['capsule']));
      assert.deepEqual(matches.map(key).sort(), want);
      assert.ok(matches.some((m) => m.text === 'Capsule') && matches.some((m) => m.text === 'capsule'));
    });

    it('prefix query: commun* finds every word starting with commun, in any case', async () => {
      const matches = await allMatches(fx, 'commun*');
      assert.deepEqual(matches.map(key).sort(), expected(phraseRe(['commun'], true)));
      assert.ok(new Set(matches.map((m) => m.text.toLowerCase())).size >= 3, 'several different words');
    });

    it('ignores accents: jose finds "José" in the CRLF transcript at its exact position', async () => {
      const mr4 = ids.get('spacelog_mr4_ATG.txt')!;
      const matches = await allMatches(fx, 'jose');
      assert.equal(matches.length, 1);
      const text = texts.get(mr4)!;
      assert.ok(text.includes('\r\n'), 'CRLF line ends are kept');
      const at = text.indexOf('José');
      assert.deepEqual([matches[0].source_id, matches[0].start_pos, matches[0].end_pos, matches[0].text], [mr4, cpAt(text, at), cpAt(text, at) + 4, 'José']);
    });

    it('boolean OR, AND, NOT and parentheses select the sources the oracle selects', async () => {
      const has = (id: number, w: string) => phraseRe(w.split(' ')).test(texts.get(id)!);
      const sourcesOf = (ms: any[]) => [...new Set(ms.map((m) => m.source_id as number))].sort((a, b) => a - b);
      const all = [...texts.keys()].sort((a, b) => a - b);

      const or = await allMatches(fx, 'capsule OR "data collection"');
      assert.deepEqual(or.map(key).sort(), [...expected(phraseRe(['capsule'])), ...expected(phraseRe(['data', 'collection']))].sort());

      const and = await allMatches(fx, 'capsule AND clear');
      assert.deepEqual(
        sourcesOf(and),
        all.filter((id) => has(id, 'capsule') && has(id, 'clear')),
      );
      const implicit = await allMatches(fx, 'capsule clear');
      assert.deepEqual(implicit.map(key), and.map(key), 'neighbouring words are ANDed');

      const not = await allMatches(fx, '"data collection" NOT workshops');
      assert.deepEqual(
        sourcesOf(not),
        all.filter((id) => has(id, 'data collection') && !has(id, 'workshops')),
      );
      assert.ok(
        not.every((m) => /data/i.test(m.text)),
        'words after NOT are never reported as matches',
      );

      const grouped = await allMatches(fx, '(capsule OR interviews) NOT clear');
      assert.deepEqual(
        sourcesOf(grouped),
        all.filter((id) => (has(id, 'capsule') || has(id, 'interviews')) && !has(id, 'clear')),
      );
    });

    it('a phrase after many OR terms is still reported as one range (term numbering follows the query)', async () => {
      const filler = Array.from({ length: 20 }, (_, i) => `zzqx${i}`).join(' OR ');
      const matches = await allMatches(fx, `${filler} OR "loud and clear"`);
      assert.deepEqual(matches.map(key).sort(), expected(phraseRe(['loud', 'and', 'clear'])));
    });

    it("places matches exactly where FTS4's own offsets() puts them (the regular-expression fast path agrees with SQLite)", async () => {
      const repo = fx.handle.repo;
      for (const query of ['"data collection"', 'capsule', 'commun*', 'jose', '"loud and clear" OR houston', 'the']) {
        const parsed = parseSearchQuery(query, (t) => repo.searchTokenize(t));
        const hits = repo.searchSourceHits(parsed.match, {});
        const fromFts: string[] = [];
        for (const row of repo.searchSourceOffsets(
          parsed.match,
          hits.map((h) => h.source_id),
        )) {
          const bytes = groupOffsets(row.offsets, parsed.phrases);
          const cps = utf8OffsetsToPositions(
            row.content,
            bytes.flatMap((b) => [b.start, b.end]),
          ).cp;
          bytes.forEach((_, i) => fromFts.push(`${row.source_id}:${cps[2 * i]}:${cps[2 * i + 1]}`));
        }
        assert.equal(
          fromFts.length,
          hits.reduce((n, h) => n + h.hits, 0),
          `${query}: offsets() and matchinfo agree`,
        );
        assert.deepEqual((await allMatches(fx, query)).map(key).sort(), fromFts.sort(), query);
      }
    });

    it('pages: total counts every occurrence; offset/limit pages concatenate to the full list', async () => {
      const full = await fx.ok('search_text', { query: 'the', limit: 500 });
      assert.ok(full.total > 500, `common word (${full.total})`);
      assert.equal(full.total, expected(phraseRe(['the'])).length);
      assert.equal(full.sources_matched, 8);
      assert.equal(full.has_more, true);
      assert.equal(full.next_offset, 500);
      const paged = await allMatches(fx, 'the', {}, 211);
      assert.equal(paged.length, full.total);
      assert.deepEqual(paged.slice(0, 500).map(key), full.matches.map(key));
      // ordered by source, then position
      for (let i = 1; i < paged.length; i++) {
        const [a, b] = [paged[i - 1], paged[i]];
        assert.ok(a.source_id < b.source_id || (a.source_id === b.source_id && a.start_pos < b.start_pos), `order at ${i}`);
      }
      const past = await fx.ok('search_text', { query: 'the', offset: full.total });
      assert.deepEqual([past.count, past.has_more, past.next_offset], [0, false, null]);
      assert.equal((await fx.ok('search_text', { query: 'capsule' })).limit, 50, 'default limit');
    });

    it('filters by sources, by type and by folder (with sub-folders)', async () => {
      const ma6 = ids.get('spacelog_ma6_TEC.txt')!;
      const mr4 = ids.get('spacelog_mr4_ATG.txt')!;
      const only = await allMatches(fx, 'capsule', { filters: { source_ids: [mr4] } });
      assert.deepEqual([...new Set(only.map((m) => m.source_id))], [mr4]);
      assert.equal(only.length, oracle(texts.get(mr4)!, phraseRe(['capsule'])).length);

      const top = await fx.ok('create_folder', { name: 'Spacelog' });
      const sub = await fx.ok('create_folder', { name: 'Mercury', parent_id: top.folder_id });
      await fx.ok('move_source_to_folder', { source_id: ma6, folder_id: top.folder_id });
      await fx.ok('move_source_to_folder', { source_id: mr4, folder_id: sub.folder_id });
      const inTop = await allMatches(fx, 'capsule', { filters: { folder_id: top.folder_id } });
      assert.deepEqual([...new Set(inTop.map((m) => m.source_id))].sort(), [ma6, mr4].sort());
      const inSub = await allMatches(fx, 'capsule', { filters: { folder_id: sub.folder_id } });
      assert.deepEqual([...new Set(inSub.map((m) => m.source_id))], [mr4]);
      assert.equal((await fx.ok('search_text', { query: 'capsule', filters: { source_type: 'audio' } })).total, 0);
      assert.equal((await fx.ok('search_text', { query: 'capsule', filters: { source_type: 'text' } })).total, expected(phraseRe(['capsule'])).length);

      await fx.fails('search_text', { query: 'capsule', filters: { source_ids: [9999] } }, 'SOURCE_NOT_FOUND');
      await fx.fails('search_text', { query: 'capsule', filters: { folder_id: 9999 } }, 'FOLDER_NOT_FOUND');
    });
  });

  describe('search_text positions in non-ASCII and emoji text', () => {
    let fx: Fixture;
    beforeEach(async () => {
      fx = await openFixture();
    });
    afterEach(async () => {
      await fx.close();
    });

    it('reports code points, not UTF-8 bytes or UTF-16 units, around emoji, astral letters and accents', async () => {
      const content = '🌱🌱 Café culture: the 👩‍👩‍👧 water rota 𝒲 and 𝒲ater Rota.\r\nNaïve résumé — über die Wasser-Rota, 水の当番 water rota ✅';
      const s = await fx.ok('add_text_source', { name: 'Emoji', content });
      const cases: [string, string[]][] = [
        ['"water rota"', ['water rota', 'water rota']],
        ['cafe', ['Café']],
        ['naive OR resume OR uber', ['Naïve', 'résumé', 'über']],
        ['"wasser rota"', ['Wasser-Rota']],
        ['rota', ['rota', 'Rota', 'Rota', 'rota']],
      ];
      for (const [query, texts] of cases) {
        const r = await fx.ok('search_text', { query });
        assert.deepEqual(
          r.matches.map((m: any) => m.text),
          texts,
          query,
        );
        for (const m of r.matches) {
          const page = await fx.ok('read_source_content', { source_id: s.source_id, start_pos: m.start_pos, end_pos: m.end_pos });
          assert.equal(page.content, m.text, `${query}: [${m.start_pos}, ${m.end_pos}) slices back`);
          const u = content.indexOf(m.text, 0);
          assert.ok(u >= 0);
        }
      }
      // independent check of one position: the second "water rota" follows CJK text
      const second = (await fx.ok('search_text', { query: '"water rota"' })).matches[1];
      const u = content.lastIndexOf('water rota');
      assert.deepEqual([second.start_pos, second.end_pos], [cpAt(content, u), cpAt(content, u) + 10]);
      assert.notEqual(second.start_pos, u, 'the UTF-16 index differs (astral characters before it)');
      assert.notEqual(second.start_pos, Buffer.byteLength(content.slice(0, u)), 'the byte offset differs');
      assert.match(second.snippet, /水の当番 «water rota» ✅$/);
      // emoji are not indexed: a query of only emoji says so
      const out = await fx.fails('search_text', { query: '🌱 ✅' }, 'INVALID_ARGUMENTS');
      assert.match(!out.envelope.success ? out.envelope.error : '', /no searchable word/);
    });

    it('overlapping phrase occurrences and NEAR queries (placed by FTS4 offsets()) have exact positions too', async () => {
      const content = '🌱 ha ha ha, said Sørensen. ha';
      const s = await fx.ok('add_text_source', { name: 'Laugh', content });
      const overlapping = await fx.ok('search_text', { query: '"ha ha"' });
      assert.equal(overlapping.total, 2);
      assert.deepEqual(
        overlapping.matches.map((m: any) => [m.start_pos, m.end_pos, m.text]),
        [
          [2, 7, 'ha ha'],
          [5, 10, 'ha ha'],
        ],
      );
      const near = await fx.ok('search_text', { query: 'ha NEAR/0 said' });
      assert.deepEqual(
        near.matches.map((m: any) => [m.start_pos, m.end_pos, m.text]),
        [
          [8, 10, 'ha'],
          [12, 16, 'said'],
        ],
      );
      for (const m of [...overlapping.matches, ...near.matches]) {
        assert.equal((await fx.ok('read_source_content', { source_id: s.source_id, start_pos: m.start_pos, end_pos: m.end_pos })).content, m.text);
      }
      // ø is no diacritic to the tokenizer: sorensen does not find Sørensen, sørensen does
      assert.equal((await fx.ok('search_text', { query: 'sorensen' })).total, 0);
      assert.deepEqual(
        (await fx.ok('search_text', { query: 'SØRENSEN' })).matches.map((m: any) => [m.start_pos, m.text]),
        [[17, 'Sørensen']],
      );
    });

    it('a source without text (media) is never matched; a source with an empty text neither', async () => {
      const audio = path.join(fx.dir, 'water.mp3');
      fs.writeFileSync(audio, Buffer.from('ID3 water water water'));
      const media = await fx.ok('import_file_source', { file_path: audio });
      assert.equal(media.type, 'audio');
      await fx.ok('add_text_source', { name: 'Empty', content: '' });
      const s = await fx.ok('add_text_source', { name: 'Full', content: 'water' });
      const r = await fx.ok('search_text', { query: 'water' });
      assert.deepEqual(
        r.matches.map((m: any) => [m.source_id, m.start_pos, m.end_pos]),
        [[s.source_id, 0, 5]],
      );
    });

    it('query syntax errors are INVALID_ARGUMENTS naming the problem (never TOOL_EXECUTION_ERROR)', async () => {
      await fx.ok('add_text_source', { name: 'S', content: 'water rota' });
      for (const [query, why] of [
        ['"water rota', /quotation mark is not closed/],
        ['(water', /parenthesis is not closed/],
        ['water)', /unexpected "\)"/],
        ['water AND', /AND needs a word/],
        ['water OR', /OR needs a word/],
        ['OR water', /expected a word or phrase but found OR/],
        ['NOT water', /NOT is binary/],
        ['water NOT', /NOT needs a word/],
        ['(water OR rota) NEAR trust', /NEAR joins words or quoted phrases only/],
        ['water NEAR', /NEAR needs a word/],
        ['()', /expected a word or phrase/],
        ['!!! ???', /no searchable word/],
        ['', /query must not be empty/],
      ] as const) {
        const out = await fx.fails('search_text', { query }, 'INVALID_ARGUMENTS');
        assert.match(!out.envelope.success ? out.envelope.error : '', why, query);
      }
      const many = Array.from({ length: 65 }, (_, i) => `w${i}`).join(' OR ');
      await fx.fails('search_text', { query: many }, 'INVALID_ARGUMENTS');
      // lower-case operators are words, not operators; punctuation inside words is a separator
      assert.equal((await fx.ok('search_text', { query: 'water or' })).total, 0);
      assert.equal((await fx.ok('search_text', { query: 'water-rota' })).total, 1, 'a hyphenated word is a phrase of its parts');
    });
  });

  describe('the indexes stay in sync with every change', () => {
    let fx: Fixture;
    beforeEach(async () => {
      fx = await openFixture();
    });
    afterEach(async () => {
      await fx.close();
    });

    it('after a source is added, edited in the editor, and deleted', async () => {
      const a = await fx.ok('add_text_source', { name: 'A', content: 'The allotment water rota.' });
      const b = await fx.ok('add_text_source', { name: 'B', content: 'Another water rota here.' });
      assert.equal((await fx.ok('search_text', { query: '"water rota"' })).total, 2);
      // an edit in VS Code (the editor's own tool) changes the stored text and the index with it
      await fx.ok('apply_source_edits', { source_id: a.source_id, edits: [{ start_pos: 14, end_pos: 19, text: 'compost' }] }, LOCAL_UI);
      assert.deepEqual(
        (await fx.ok('search_text', { query: '"water rota"' })).matches.map((m: any) => m.source_id),
        [b.source_id],
      );
      const compost = (await fx.ok('search_text', { query: 'compost' })).matches;
      assert.deepEqual(
        compost.map((m: any) => [m.source_id, m.start_pos, m.end_pos, m.text]),
        [[a.source_id, 14, 21, 'compost']],
      );
      // renaming or moving a source does not touch its index entries
      const f = await fx.ok('create_folder', { name: 'F' });
      await fx.ok('move_source_to_folder', { source_id: b.source_id, folder_id: f.folder_id });
      assert.equal((await fx.ok('search_text', { query: 'rota' })).total, 2);
      await fx.ok('remove_source', { source_id: b.source_id, confirm: true });
      assert.equal((await fx.ok('search_text', { query: '"water rota"' })).total, 0);
      assert.equal((await fx.ok('search_text', { query: 'another' })).total, 0);
      ftsIntegrity(fx.handle);
    });

    it('after segments are coded and deleted, and codes renamed, re-memoed, merged and deleted', async () => {
      const s = await fx.ok('add_text_source', { name: 'S', content: 'We share the watering rota. Compost heaps need turning weekly.' });
      const water = await fx.ok('create_code', { name: 'Water rota', color: COLOR, memo: 'who fetches water' });
      const soil = await fx.ok('create_code', { name: 'Soil care', color: COLOR });
      const applied = await fx.ok('batch_apply_codes', {
        operations: [
          { code_id: water.code_id, source_id: s.source_id, start_position: 0, end_position: 27 },
          { code_id: soil.code_id, source_id: s.source_id, start_position: 28, end_position: 62 },
        ],
      });
      const segIds = (await fx.ok('list_segments_for_source', { source_id: s.source_id })).segments.map((g: any) => g.segment_id);
      assert.equal(segIds.length, 2, JSON.stringify(applied));
      const compost = await fx.ok('search_semantic', { query: 'compost' });
      assert.equal(compost.method, 'lexical:bm25');
      assert.deepEqual(
        compost.matches.map((m: any) => m.codes.map((c: any) => c.code_name)),
        [['Soil care']],
      );
      await fx.ok('delete_segment', { segment_id: compost.matches[0].segment_id });
      assert.equal((await fx.ok('search_semantic', { query: 'compost' })).count, 0, 'a deleted segment is not found');

      assert.deepEqual(
        (await fx.ok('search_codes', { query: 'water' })).codes.map((c: any) => c.name),
        ['Water rota'],
      );
      await fx.ok('rename_code', { code_id: water.code_id, new_name: 'Irrigation duty' });
      assert.equal((await fx.ok('search_codes', { query: 'rota' })).count, 0, 'the old name is gone');
      assert.deepEqual(
        (await fx.ok('search_codes', { query: 'irrig' })).codes.map((c: any) => c.name),
        ['Irrigation duty'],
      );
      assert.deepEqual(
        (await fx.ok('search_codes', { query: 'fetches' })).codes.map((c: any) => [c.name, c.matched_in]),
        [['Irrigation duty', ['memo']]],
      );
      await fx.ok('update_code_memo', { code_id: water.code_id, memo: 'hoses and cans' });
      assert.equal((await fx.ok('search_codes', { query: 'fetches' })).count, 0);
      assert.equal((await fx.ok('search_codes', { query: 'hoses' })).count, 1);
      await fx.ok('merge_codes', { source_code_id: soil.code_id, target_code_id: water.code_id });
      assert.equal((await fx.ok('search_codes', { query: 'soil' })).count, 0, 'a merged code is gone');
      await fx.ok('delete_code', { code_id: water.code_id, delete_segments: true });
      assert.equal((await fx.ok('search_codes', { query: 'irrigation' })).count, 0);
      assert.equal((await fx.ok('search_semantic', { query: 'watering rota' })).count, 0, 'its segments are gone from the index');
      ftsIntegrity(fx.handle);
    });
  });

  describe('journal replay', () => {
    it('a project reopened from its journal (no checkpoint) answers every search exactly as before', async () => {
      const fx = await openFixture();
      let copy: ProjectHandle | undefined;
      try {
        const a = await fx.ok('add_text_source', { name: 'A', content: 'Naïve gardeners 🌱 share the water rota; the water rota changes weekly.' });
        const b = await fx.ok('add_text_source', { name: 'B', content: 'Trust between neighbours grows with the garden. Gardening together.' });
        const c = await fx.ok('add_text_source', { name: 'C', content: 'This source will be deleted: water rota.' });
        const code = await fx.ok('create_code', { name: 'Water rota', color: COLOR, memo: 'rotas and duties' });
        const trust = await fx.ok('create_code', { name: 'Trust', color: COLOR });
        await fx.ok('batch_apply_codes', {
          operations: [
            { code_id: code.code_id, source_id: a.source_id, start_position: 20, end_position: 45 },
            { code_id: trust.code_id, source_id: b.source_id, start_position: 0, end_position: 47 },
            { code_id: trust.code_id, source_id: b.source_id, start_position: 48, end_position: 67 },
          ],
        });
        await fx.ok('apply_source_edits', { source_id: a.source_id, edits: [{ start_pos: 0, end_pos: 5, text: 'Keen' }] }, LOCAL_UI);
        await fx.ok('remove_source', { source_id: c.source_id, confirm: true });
        await fx.ok('rename_code', { code_id: trust.code_id, new_name: 'Neighbourly trust' });
        const segs = (await fx.ok('list_segments_for_source', { source_id: b.source_id })).segments;
        await fx.ok('delete_segment', { segment_id: segs[1].segment_id });

        assert.ok(fs.statSync(journalPath(fx.handle.store.filePath)).size > 0, 'the changes are only in the journal');
        const dir = path.join(fx.dir, 'crash');
        fs.mkdirSync(dir);
        const file = path.join(dir, 'p.qda');
        fs.copyFileSync(fx.handle.store.filePath, file);
        fs.copyFileSync(journalPath(fx.handle.store.filePath), journalPath(file));
        copy = await openProjectHandle(file, { noLock: true, checkpointIdleMs: 0 });
        const replayed = createPipeline({ project: () => copy!, host: headlessHost, logger: silentLogger, clock: fixedClock, embeddings: null });
        const ask = async (p: ToolPipeline, tool: string, a: unknown) => {
          const out = await p.invoke(tool, a, ALICE);
          assert.ok(out.envelope.success, `${tool} ${JSON.stringify(a)}: ${JSON.stringify(out.envelope)}`);
          return out.envelope.data;
        };
        const calls: [string, unknown][] = [
          ['search_text', { query: '"water rota"' }],
          ['search_text', { query: 'garden* OR naive' }],
          ['search_text', { query: 'keen' }],
          ['search_text', { query: 'deleted' }],
          ['search_codes', { query: 'trust' }],
          ['search_codes', { query: 'rota' }],
          ['search_semantic', { query: 'neighbours trust garden' }],
          ['find_similar_segments', { segment_id: segs[0].segment_id }],
        ];
        let found = 0;
        for (const [tool, a] of calls) {
          const before = await ask(fx.pipeline, tool, a);
          const after = await ask(replayed, tool, a);
          assert.deepEqual(after, before, `${tool} ${JSON.stringify(a)}`);
          found += (before as any).count;
        }
        assert.ok(found >= 8, 'the searches found things');
        assert.equal(((await ask(replayed, 'search_text', { query: 'deleted' })) as any).total, 0);
        ftsIntegrity(copy);
      } finally {
        await copy?.close();
        await fx.close();
      }
    });
  });

  describe('migration 5 on a project written before it', () => {
    it('indexes the sources, segments and codes already in the project', async () => {
      const dir = tmpDir('marginalia-search-');
      const file = path.join(dir, 'old.qda');
      const db = await databaseBeforeMigration(5);
      db.run("INSERT INTO sources(id, name, type, content, content_length, owner, created_at, updated_at) VALUES (1, 'Old', 'text', ?, 33, 'bob', ?, ?)", [
        'Écoute: the old water rota 🌱 here',
        FIXED_ISO,
        FIXED_ISO,
      ]);
      db.run(
        "INSERT INTO codes(id, name, name_key, color, memo, owner, created_at, updated_at) VALUES (1, 'Rota', 'rota', '#000000', 'legacy memo', 'bob', ?, ?)",
        [FIXED_ISO, FIXED_ISO],
      );
      db.run(
        "INSERT INTO segments(code_id, source_id, start_pos, end_pos, text, owner, created_at, updated_at) VALUES (1, 1, 8, 26, 'the old water rota', 'bob', ?, ?)",
        [FIXED_ISO, FIXED_ISO],
      );
      fs.writeFileSync(file, db.export());
      db.close();
      const h = await openProjectHandle(file, { checkpointIdleMs: 0 });
      try {
        const p = createPipeline({ project: () => h, host: headlessHost, logger: silentLogger, embeddings: null });
        const text = (await p.invoke('search_text', { query: '"water rota" ecoute' }, ALICE)).envelope as any;
        assert.deepEqual(
          text.data.matches.map((m: any) => [m.start_pos, m.end_pos, m.text]),
          [
            [0, 6, 'Écoute'],
            [16, 26, 'water rota'],
          ],
        );
        const codes = (await p.invoke('search_codes', { query: 'legacy' }, ALICE)).envelope as any;
        assert.deepEqual(
          codes.data.codes.map((c: any) => c.name),
          ['Rota'],
        );
        const sem = (await p.invoke('search_semantic', { query: 'water' }, ALICE)).envelope as any;
        assert.deepEqual(
          sem.data.matches.map((m: any) => m.text),
          ['the old water rota'],
        );
        ftsIntegrity(h);
      } finally {
        await h.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('search_codes', () => {
    let fx: Fixture;
    beforeEach(async () => {
      fx = await openFixture();
    });
    afterEach(async () => {
      await fx.close();
    });

    it('matches word prefixes of names and memos, case- and accent-insensitively, names first, exact name first of all', async () => {
      await fx.ok('create_code', { name: 'Water conflicts', color: COLOR, memo: 'Disputes over the rota' });
      await fx.ok('create_code', { name: 'Rota', color: COLOR });
      await fx.ok('create_code', { name: 'Rotation of beds', color: COLOR });
      await fx.ok('create_code', { name: 'Café meetings', color: COLOR, memo: 'informal' });
      await fx.ok('create_code', { name: 'Trust', color: COLOR, memo: 'no match here' });
      const rota = await fx.ok('search_codes', { query: 'ROTA' });
      assert.deepEqual(
        rota.codes.map((c: any) => [c.name, c.matched_in]),
        [
          ['Rota', ['name']],
          ['Rotation of beds', ['name']],
          ['Water conflicts', ['memo']],
        ],
      );
      assert.ok(rota.codes[0].score > rota.codes[1].score && rota.codes[1].score > rota.codes[2].score);
      assert.equal(rota.total, 3);
      assert.deepEqual(
        (await fx.ok('search_codes', { query: 'cafe' })).codes.map((c: any) => c.name),
        ['Café meetings'],
      );
      assert.deepEqual(
        (await fx.ok('search_codes', { query: 'conflict wat' })).codes.map((c: any) => c.name),
        ['Water conflicts'],
      );
      // a code matching two query words outranks one matching one
      const two = await fx.ok('search_codes', { query: 'water rota' });
      assert.equal(two.codes[0].name, 'Water conflicts');
      assert.equal((await fx.ok('search_codes', { query: 'rot', limit: 1 })).count, 1);
      await fx.fails('search_codes', { query: '?!' }, 'INVALID_ARGUMENTS');
      // full code records
      const c = rota.codes[0];
      for (const k of ['code_id', 'color', 'memo', 'category', 'segment_count']) assert.ok(k in c, k);
    });
  });

  describe('search_semantic and find_similar_segments', () => {
    /**
     * A stand-in for an Ollama embedding endpoint (a real model cannot run here): a bag-of-words vector
     * (each lower-cased word adds 1 to dimension hash(word) mod 64), so texts sharing words are close.
     */
    function fakeEmbedding(text: string): number[] {
      const v = new Array<number>(64).fill(0);
      for (const w of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
        let h = 0;
        for (const ch of w) h = (h * 31 + ch.codePointAt(0)!) % 1_000_003;
        v[h % 64]! += 1;
      }
      return v;
    }
    const cos = (a: number[], b: number[]) => {
      const dot = a.reduce((s, x, i) => s + x * b[i]!, 0);
      const n = Math.sqrt(a.reduce((s, x) => s + x * x, 0) * b.reduce((s, x) => s + x * x, 0));
      return n === 0 ? 0 : dot / n;
    };

    let server: http.Server;
    let url: string;
    let requests: { url: string; body: any }[];
    let failing: boolean;
    before(async () => {
      server = http.createServer((req, res) => {
        let data = '';
        req.on('data', (c) => (data += c));
        req.on('end', () => {
          const body = JSON.parse(data);
          requests.push({ url: req.url ?? '', body });
          if (failing) {
            res.writeHead(500).end('model exploded');
            return;
          }
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ embedding: fakeEmbedding(String(body.prompt)) }));
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async () => {
      await new Promise((r) => server.close(r));
    });

    let fx: Fixture;
    let embedded: ToolPipeline;
    const SEGMENTS = [
      'We argue about the water rota every single week',
      'The water rota is posted on the shed door',
      'Compost heaps need turning and the compost bins fill up',
      'I trust my neighbours with the keys to the shed',
      'Trust grows slowly between neighbours',
    ];
    /** segment text -> the id of its first segment */
    let segOf: Map<string, number>;
    beforeEach(async () => {
      requests = [];
      failing = false;
      fx = await openFixture();
      const port = embeddingsFromEnvironment(silentLogger, { MARGINALIA_EMBEDDINGS_ENDPOINT: url, MARGINALIA_EMBEDDINGS_MODEL: 'fake-bow' });
      assert.ok(port);
      embedded = createPipeline({ project: () => fx.handle, host: headlessHost, logger: silentLogger, clock: fixedClock, embeddings: port });
      const content = SEGMENTS.join('. ') + '.';
      const s = await fx.ok('add_text_source', { name: 'Garden', content });
      const codes = [
        await fx.ok('create_code', { name: 'Rota', color: COLOR }),
        await fx.ok('create_code', { name: 'Soil', color: COLOR }),
        await fx.ok('create_code', { name: 'Trust', color: COLOR }),
      ];
      const ops = SEGMENTS.map((t, i) => {
        const start = [...content.slice(0, content.indexOf(t))].length;
        return { code_id: codes[i < 2 ? 0 : i === 2 ? 1 : 2]!.code_id, source_id: s.source_id, start_position: start, end_position: start + [...t].length };
      });
      // the first passage coded twice: one passage, two codings
      ops.push({ ...ops[0]!, code_id: codes[2]!.code_id });
      await fx.ok('batch_apply_codes', { operations: ops });
      segOf = new Map();
      for (const g of (await fx.ok('list_segments_for_source', { source_id: s.source_id })).segments) if (!segOf.has(g.text)) segOf.set(g.text, g.segment_id);
      assert.equal(segOf.size, SEGMENTS.length);
    });
    afterEach(async () => {
      await fx.close();
    });

    const semantic = async (args: unknown) => {
      const out = await embedded.invoke('search_semantic', args, ALICE);
      assert.ok(out.envelope.success, JSON.stringify(out.envelope));
      return out.envelope.data as any;
    };

    it("ranks by cosine similarity of the endpoint's embeddings and caches vectors per text", async () => {
      const query = 'who is on the water rota this week';
      const r = await semantic({ query, k: 3 });
      assert.equal(r.method, 'embeddings:fake-bow');
      const expectedOrder = SEGMENTS.map((t) => ({ t, s: cos(fakeEmbedding(query), fakeEmbedding(t)) }))
        .sort((a, b) => b.s - a.s)
        .slice(0, 3);
      assert.deepEqual(
        r.matches.map((m: any) => m.text),
        expectedOrder.map((e) => e.t),
      );
      for (const [i, m] of r.matches.entries()) assert.ok(Math.abs(m.score - expectedOrder[i]!.s) < 1e-3, `score ${m.score} vs ${expectedOrder[i]!.s}`);
      const first = r.matches.find((m: any) => m.text === SEGMENTS[0]);
      assert.deepEqual(first.codes.map((c: any) => c.code_name).sort(), ['Rota', 'Trust'], 'one passage coded twice is one match listing both codings');
      assert.deepEqual(r.index, { segments: 6, embedded: 6, not_embedded: 0 });
      // one request per distinct text (5 segment texts) plus the query, each {model, prompt} to /api/embeddings
      assert.equal(requests.length, 6);
      assert.ok(requests.every((q) => q.url === '/api/embeddings' && q.body.model === 'fake-bow' && typeof q.body.prompt === 'string'));
      assert.deepEqual(requests.map((q) => q.body.prompt).sort(), [query, ...SEGMENTS].sort());
      assert.equal(fx.handle.store.get<{ n: number }>("SELECT count(*) AS n FROM segment_embeddings WHERE model = 'fake-bow'")!.n, 5);
      // the second call embeds only the query
      requests = [];
      const again = await semantic({ query, k: 3 });
      assert.deepEqual(again.matches, r.matches);
      assert.deepEqual(
        requests.map((q) => q.body.prompt),
        [query],
      );
      // filters narrow the candidates
      const trustId = (await fx.ok('search_codes', { query: 'trust' })).codes[0].code_id;
      const trustOnly = await semantic({ query, filters: { code_ids: [trustId] } });
      assert.deepEqual(new Set(trustOnly.matches.map((m: any) => m.text)), new Set([SEGMENTS[0], SEGMENTS[3], SEGMENTS[4]]));
      assert.ok(trustOnly.matches.every((m: any) => m.codes.some((c: any) => c.code_name === 'Trust')));
      const bad = await embedded.invoke('search_semantic', { query, filters: { code_ids: [999] } }, ALICE);
      assert.equal(!bad.envelope.success && bad.envelope.error_code, 'CODE_NOT_FOUND');
    });

    it('find_similar_segments ranks other passages by embedding, leaving out the segment and passages overlapping it', async () => {
      const out = await embedded.invoke('find_similar_segments', { segment_id: segOf.get(SEGMENTS[1]!), k: 2 }, ALICE);
      assert.ok(out.envelope.success, JSON.stringify(out.envelope));
      const r = out.envelope.data as any;
      assert.equal(r.method, 'embeddings:fake-bow');
      assert.equal(r.segment.text, SEGMENTS[1]);
      const target = fakeEmbedding(SEGMENTS[1]!);
      const expectedOrder = SEGMENTS.filter((_, i) => i !== 1)
        .map((t) => ({ t, s: cos(target, fakeEmbedding(t)) }))
        .sort((a, b) => b.s - a.s);
      assert.deepEqual(
        r.segments.map((m: any) => m.text),
        expectedOrder.slice(0, 2).map((e) => e.t),
      );
      assert.ok(r.segments.every((m: any) => m.text !== SEGMENTS[1]));
      const missing = await embedded.invoke('find_similar_segments', { segment_id: 9999 }, ALICE);
      assert.equal(!missing.envelope.success && missing.envelope.error_code, 'SEGMENT_NOT_FOUND');
      assert.equal((await fx.call('find_similar_segments', { segment_id: 9999 })).envelope.success, false, 'lexically too');
    });

    it('falls back to BM25 over words, saying why, when the configured endpoint fails', async () => {
      failing = true;
      const r = await semantic({ query: 'compost bins' });
      assert.equal(r.method, 'lexical:bm25');
      assert.match(r.fallback_reason, /HTTP 500.*model exploded/);
      assert.equal(r.matches[0].text, SEGMENTS[2]);
      assert.equal(fx.handle.store.get<{ n: number }>('SELECT count(*) AS n FROM segment_embeddings')!.n, 0);
      await new Promise<void>((r2) => server.close(() => r2()));
      try {
        const down = await semantic({ query: 'compost bins' });
        assert.match(down.fallback_reason, /could not be reached/);
      } finally {
        await new Promise<void>((r2) => server.listen(Number(new URL(url).port), '127.0.0.1', r2));
      }
    });

    it('without an endpoint ranks lexically (BM25, stems of inflected words) and reports the method', async () => {
      const r = await fx.ok('search_semantic', { query: 'rotas, sheds' });
      assert.equal(r.method, 'lexical:bm25');
      assert.equal(r.fallback_reason, undefined);
      assert.equal(r.index, undefined);
      // both rota passages and the shed passage match; the ones with two query words rank first
      assert.deepEqual(
        new Set(r.matches.slice(0, 1).map((m: any) => m.text)),
        new Set([SEGMENTS[1]]),
        JSON.stringify(r.matches.map((m: any) => [m.text, m.score])),
      );
      assert.deepEqual(new Set(r.matches.map((m: any) => m.text)), new Set([SEGMENTS[0], SEGMENTS[1], SEGMENTS[3]]));
      for (let i = 1; i < r.matches.length; i++) assert.ok(r.matches[i - 1].score >= r.matches[i].score);
      assert.equal(requests.length, 0, 'no network without an endpoint');
      const similar = await fx.ok('find_similar_segments', { segment_id: segOf.get(SEGMENTS[4]!) });
      assert.equal(similar.method, 'lexical:bm25');
      assert.equal(similar.segments[0].text, SEGMENTS[3], 'the other passage about trusting neighbours');
      assert.ok(similar.segments.every((m: any) => m.text !== SEGMENTS[4]));
      assert.equal((await fx.ok('search_semantic', { query: '🌱' })).count, 0, 'no words: no matches');
    });

    it(`embeds at most ${MAX_EMBED_PER_CALL} new texts per call and reports the rest as not embedded`, async function () {
      this.timeout(60_000);
      const code = (await fx.ok('list_codes')).codes[0];
      const many = MAX_EMBED_PER_CALL + 20;
      const words = Array.from({ length: many }, (_, i) => `w${i.toString(36)}x`);
      const t = await fx.ok('add_text_source', { name: 'Many', content: words.join(' ') });
      const ops: any[] = [];
      let at = 0;
      for (const w of words) {
        ops.push({ code_id: code.code_id, source_id: t.source_id, start_position: at, end_position: at + w.length });
        at += w.length + 1;
      }
      await fx.ok('batch_apply_codes', { operations: ops });
      const first = await semantic({ query: 'water' });
      assert.equal(first.index.segments, 6 + many);
      // one batch of distinct texts; the passage coded twice shares its vector, so one more segment has one
      assert.equal(first.index.embedded, MAX_EMBED_PER_CALL + 1);
      assert.equal(first.index.not_embedded, 6 + many - MAX_EMBED_PER_CALL - 1);
      assert.equal(requests.length, MAX_EMBED_PER_CALL + 1, 'the batch plus the query');
      const second = await semantic({ query: 'water' });
      assert.equal(second.index.not_embedded, 0, 'the next call embeds the rest');
    });
  });

  describe('helpers', () => {
    it('utf8OffsetsToPositions agrees with Buffer.byteLength on mixed text', () => {
      const text = 'aé€𝒲🌱x\r\n水 ✅z';
      const chars = [...text];
      const bytes: number[] = [];
      let b = 0;
      for (const ch of chars) {
        bytes.push(b);
        b += Buffer.byteLength(ch);
      }
      bytes.push(b);
      const shuffled = [...bytes].reverse();
      const r = utf8OffsetsToPositions(text, shuffled);
      assert.deepEqual(
        r.cp,
        shuffled.map((x) => bytes.indexOf(x)),
      );
      assert.deepEqual(
        r.u16,
        shuffled.map((x) => chars.slice(0, bytes.indexOf(x)).join('').length),
      );
    });

    it('parseSearchQuery serializes a fully parenthesized FTS4 expression and numbers phrase terms as FTS4 does', () => {
      const tok = (t: string) => t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
      const p = parseSearchQuery('Water "rota of* duty" OR (e-mail NOT spam) garden* NEAR/3 shed', tok);
      assert.equal(p.match, '(("water" AND "rota of* duty") OR (("e mail" NOT "spam") AND ("garden*" NEAR/3 "shed")))');
      assert.deepEqual(
        p.phrases.map((x) => [x.text, x.firstTerm, x.tokens]),
        [
          ['"water"', 0, 1],
          ['"rota of* duty"', 1, 3],
          ['"e mail"', 4, 2],
          ['"garden*"', 6, 1],
          ['"shed"', 7, 1],
        ],
      );
      // a phrase's offsets() entries become one range; a stray term of another phrase stays separate
      const q = parseSearchQuery('"a b c" OR d', tok);
      assert.deepEqual(groupOffsets('0 0 10 1 0 1 12 1 0 2 14 1 0 3 20 2 0 0 30 1', q.phrases), [
        { start: 10, end: 15 },
        { start: 20, end: 22 },
        { start: 30, end: 31 },
      ]);
    });

    it('snippetAround marks the match and cuts long context at word boundaries', () => {
      const text = `${'lorem ipsum '.repeat(20)}THE MATCH${' dolor sit'.repeat(20)}`;
      const at = text.indexOf('THE MATCH');
      const s = snippetAround(text, at, at + 9);
      assert.match(s, /^…\S.* «THE MATCH» .*\S…$/);
      assert.ok([...s].length < 160);
      assert.equal(snippetAround('a\n\nb', 3, 4), 'a «b»');
    });

    it('stemForms looks for each word and its Porter stem (Porter 1980), once when they agree', () => {
      // the stems the lexical similarity search adds to a query: a plural finds its singular, "sharing" finds "share"
      assert.deepEqual(['gardens', 'gardening', 'communities', 'shared', 'sharing', 'rotas', 'rota', 'water', 'is', 'häuser'].map(stemForms), [
        ['gardens', 'garden'],
        ['gardening', 'garden'],
        ['communities', 'commun'],
        ['shared', 'share'],
        ['sharing', 'share'],
        ['rotas', 'rota'],
        ['rota'],
        ['water'],
        ['is'],
        ['häuser'],
      ]);
    });
  });
});
