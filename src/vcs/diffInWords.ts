/**
 * What changed between two snapshots, in words for the researcher (issue 13, item 9: "a History view whose
 * diff is in words: codes added/renamed/removed, passages coded/uncoded with their text"). Computed from
 * the two canonical dumps (src/vcs/canonicalDump.ts: `tables/<table>.jsonl`, one JSON row per line), so it
 * holds for any two snapshots, restores and erasures included, without the project's event log. Reads the
 * tables codes, categories, sources, folders, cases and segments; every other table that differs is counted
 * by name ("3 changes to case attributes").
 */
import { countOf } from '../core/plural';
import { oneLineExcerpt } from '../core/text';

type Row = Record<string, unknown>;

/** One part of the changes: a heading ("Codes") and its lines ("Added 'Trust'"). */
export interface WordsSection {
  heading: string;
  lines: string[];
}

/** Longest passage excerpt shown, in code points (the ellipsis included). */
export const DIFF_EXCERPT = 120;
/** Most passage lines listed per kind (coded, uncoded, re-coded); the rest are counted. */
export const MAX_PASSAGE_LINES = 50;

/** Tables described row by row (the others are counted). */
const DESCRIBED = new Set(['codes', 'categories', 'sources', 'folders', 'cases', 'segments']);

/** The rows of `tables/<name>.jsonl` in a dump, by their `id` (empty when the table is absent). */
function rowsOf(dump: ReadonlyMap<string, string>, name: string): Map<unknown, Row> {
  const text = dump.get(`tables/${name}.jsonl`) ?? '';
  const out = new Map<unknown, Row>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as Row;
    out.set(row.id, row);
  }
  return out;
}

/** `text` on one line, at most `max` code points, with "…" when cut. */
function excerpt(text: unknown, max = DIFF_EXCERPT): string {
  return oneLineExcerpt(String(text ?? ''), max);
}

const q = (name: unknown): string => `'${String(name ?? '')}'`;

/**
 * Sentences for a table of named things: added, renamed, moved, memo changed, recoloured, removed. `place`
 * names where a row sits ("the category 'Themes'"; '' for the top level), on the side it is read from.
 */
function namedSection(
  heading: string,
  kind: string,
  before: Map<unknown, Row>,
  after: Map<unknown, Row>,
  place?: (r: Row, side: 'before' | 'after') => string,
): WordsSection {
  const lines: string[] = [];
  for (const [id, r] of after) {
    const old = before.get(id);
    if (!old) {
      const where = place ? place(r, 'after') : '';
      lines.push(`Added the ${kind} ${q(r.name)}${where ? ` in ${where}` : ''}`);
      continue;
    }
    if (old.name !== r.name) lines.push(`Renamed the ${kind} ${q(old.name)} to ${q(r.name)}`);
    if (place && place(old, 'before') !== place(r, 'after')) lines.push(`Moved the ${kind} ${q(r.name)} to ${place(r, 'after') || 'the top level'}`);
    if ((old.memo ?? null) !== (r.memo ?? null))
      lines.push(r.memo ? `Changed the memo of the ${kind} ${q(r.name)}: "${excerpt(r.memo, 80)}"` : `Cleared the memo of the ${kind} ${q(r.name)}`);
    if (old.color !== undefined && old.color !== r.color) lines.push(`Recoloured the ${kind} ${q(r.name)} from ${String(old.color)} to ${String(r.color)}`);
  }
  for (const [id, r] of before) if (!after.has(id)) lines.push(`Removed the ${kind} ${q(r.name)}`);
  return { heading, lines };
}

/**
 * The changes from dump `from` to dump `to` (path -> content, as the history stores them; source texts may
 * be any fingerprint, such as git's blob id), in sections with sentences: codes, categories, sources and
 * folders, cases (added, renamed, moved, memos, colours, removed), passages coded, uncoded and moved to
 * another code (merges) with their code, source and text (at most {@link MAX_PASSAGE_LINES} each, the rest
 * counted), source texts edited, and other tables by count. Empty sections are left out; no change at all
 * gives no sections. Throws a SyntaxError on an unreadable table line.
 */
export function describeDumpDiff(from: ReadonlyMap<string, string>, to: ReadonlyMap<string, string>): WordsSection[] {
  const tables = (name: string) => [rowsOf(from, name), rowsOf(to, name)] as const;
  const [codesA, codesB] = tables('codes');
  const [catsA, catsB] = tables('categories');
  const [srcA, srcB] = tables('sources');
  const [foldersA, foldersB] = tables('folders');
  const [casesA, casesB] = tables('cases');
  const [segA, segB] = tables('segments');

  const nameIn = (rows: Map<unknown, Row>, other: Map<unknown, Row>, id: unknown, kind: string) =>
    String((rows.get(id) ?? other.get(id))?.name ?? `${kind} ${String(id)}`);
  const categoryPlace = (cats: Map<unknown, Row>, other: Map<unknown, Row>) => (r: Row) =>
    r.category_id == null ? '' : `the category ${q(nameIn(cats, other, r.category_id, 'category'))}`;
  const codePlaceA = categoryPlace(catsA, catsB);
  const codePlaceB = categoryPlace(catsB, catsA);
  const sections: WordsSection[] = [
    namedSection('Codes', 'code', codesA, codesB, (r, side) => (side === 'before' ? codePlaceA(r) : codePlaceB(r))),
    namedSection('Categories', 'category', catsA, catsB, (r, side) =>
      r.parent_id == null
        ? ''
        : `the category ${q(side === 'before' ? nameIn(catsA, catsB, r.parent_id, 'category') : nameIn(catsB, catsA, r.parent_id, 'category'))}`,
    ),
  ];

  // sources: named changes, and edited texts (the dump keeps each text in sources/<id>.txt)
  const sources = namedSection('Sources', 'source', srcA, srcB, (r, side) =>
    r.folder_id == null
      ? ''
      : `the folder ${q(side === 'before' ? nameIn(foldersA, foldersB, r.folder_id, 'folder') : nameIn(foldersB, foldersA, r.folder_id, 'folder'))}`,
  );
  for (const [id, r] of srcB) {
    if (!srcA.has(id)) continue;
    const [ta, tb] = [from.get(`sources/${String(id)}.txt`), to.get(`sources/${String(id)}.txt`)];
    if (ta !== undefined && tb !== undefined && ta !== tb) sources.lines.push(`Edited the text of ${q(r.name)}`);
  }
  sections.push(sources, namedSection('Folders', 'folder', foldersA, foldersB), namedSection('Cases', 'case', casesA, casesB));

  // passages: by code and source names of the side they exist on, with their text
  const codeName = (id: unknown) => nameIn(codesB, codesA, id, 'code');
  const codeNameBefore = (id: unknown) => nameIn(codesA, codesB, id, 'code');
  const srcName = (id: unknown) => nameIn(srcB, srcA, id, 'source');
  const passage = (s: Row, code: string) => `${q(code)} in ${srcName(s.source_id)}: "${excerpt(s.text)}"`;
  const coded: string[] = [];
  const uncoded: string[] = [];
  const recoded: string[] = [];
  const changed: string[] = [];
  for (const [id, s] of segB) {
    const old = segA.get(id);
    if (!old) coded.push(passage(s, codeName(s.code_id)));
    else if (old.code_id !== s.code_id) recoded.push(`${passage(s, codeName(s.code_id))} (was ${q(codeNameBefore(old.code_id))})`);
    else if (old.start_pos !== s.start_pos || old.end_pos !== s.end_pos || old.text !== s.text)
      changed.push(`${passage(s, codeName(s.code_id))} (its bounds moved)`);
    else if ((old.memo ?? null) !== (s.memo ?? null)) changed.push(`${passage(s, codeName(s.code_id))} (memo ${s.memo ? 'changed' : 'cleared'})`);
  }
  for (const [id, s] of segA) if (!segB.has(id)) uncoded.push(passage(s, codeNameBefore(s.code_id)));
  const capped = (heading: string, lines: string[]): WordsSection => ({
    heading: `${heading} (${lines.length})`,
    lines:
      lines.length > MAX_PASSAGE_LINES ? [...lines.slice(0, MAX_PASSAGE_LINES), `… and ${countOf(lines.length - MAX_PASSAGE_LINES, 'more passage')}`] : lines,
  });
  sections.push(
    capped('Passages coded', coded),
    capped('Passages uncoded', uncoded),
    capped('Passages moved to another code', recoded),
    capped('Passages changed', changed),
  );

  // every other table, by count of rows added, removed and changed
  const others: string[] = [];
  const names = new Set([...from.keys(), ...to.keys()].filter((p) => p.startsWith('tables/')).map((p) => p.slice('tables/'.length).replace(/\.jsonl$/, '')));
  for (const name of [...names].sort()) {
    if (DESCRIBED.has(name) || name === 'meta') continue;
    if ((from.get(`tables/${name}.jsonl`) ?? '') === (to.get(`tables/${name}.jsonl`) ?? '')) continue;
    const [a, b] = [
      new Set((from.get(`tables/${name}.jsonl`) ?? '').split('\n').filter(Boolean)),
      new Set((to.get(`tables/${name}.jsonl`) ?? '').split('\n').filter(Boolean)),
    ];
    const added = [...b].filter((l) => !a.has(l)).length;
    const removed = [...a].filter((l) => !b.has(l)).length;
    others.push(
      `${name.replace(/_/g, ' ')}: ${[added ? `${countOf(added, 'row')} added or changed` : '', removed ? `${countOf(removed, 'row')} removed or changed` : ''].filter(Boolean).join(', ')}`,
    );
  }
  sections.push({ heading: 'Other changes', lines: others });
  return sections.filter((s) => s.lines.length > 0);
}

/** The sections as Markdown: a "## heading" per section and a bullet per line ("No changes." when none). */
export function wordsToMarkdown(sections: readonly WordsSection[]): string {
  if (sections.length === 0) return 'No changes.\n';
  return sections.map((s) => `## ${s.heading}\n\n${s.lines.map((l) => `- ${l}`).join('\n')}\n`).join('\n');
}
