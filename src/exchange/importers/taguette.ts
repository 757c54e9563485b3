import * as path from 'node:path';
import { parse, type DefaultTreeAdapterMap } from 'parse5';
import { codePointLength } from '../../core/text';
import { MAX_CODE_NAME, MAX_SOURCE_NAME } from '../../domain/rules';
import { requireSchema, type ForeignDb } from '../sqlite';
import { databaseImporter } from './database';
import { emptyPlan, fitName, memoOf, skip, warn, type ImportPlan } from './plan';

/**
 * Taguette project import: a Taguette database (`.sqlite3`; alembic revision 09c662cd9483 in the corpus,
 * tables as summarised in shared/notes/corpus.md).
 *
 * - Each project becomes a folder; its `documents` become text sources in it. Taguette stores documents as
 *   HTML: the text is the document's text nodes, in order, exactly (entities decoded), with a line break
 *   added where a block element (p, h1-h6, li, div, br, ...) would otherwise run into the next text.
 * - `tags` become codes named by their full `path` (unique, as in Taguette's own REFI-QDA codebook export),
 *   with the description as memo. Taguette filters highlights by path prefix; Marginalia turns the prefixes
 *   users write into categories: a path split at `:` (as in `deductive: autonomy`) or at a `.` between two
 *   non-blank characters (as in `interesting.quote`) goes into the category of its prefix (`deductive`;
 *   deeper prefixes nest). A newer schema's `parent_id` column, when present, is used instead.
 * - `highlights` x `highlight_tags` become segments. Taguette's offsets count UTF-8 bytes of the document's
 *   text nodes, HTML tags not counted (remram44/taguette `taguette/extract.py`: "Locations are computed over
 *   UTF-8 bytes, and doesn't count HTML tags"; the browser side, `describePos` in `taguette.js`, counts the
 *   same); they are converted to code points of the plain text. The coder is the user whose command
 *   (`commands`, type `highlight_add`) last wrote the highlight.
 * - A highlight without tags is counted as skipped (Marginalia has no untagged codings).
 */
export const taguetteImporter = databaseImporter(
  {
    format: 'taguette',
    what: 'a Taguette database',
    extensions: ['.sqlite3', '.sqlite', '.db'],
    description: 'Taguette project database (.sqlite3): documents (HTML converted to text), tags (path prefixes as categories) and highlights',
  },
  planTaguette,
);

type Node = DefaultTreeAdapterMap['node'];

/** Elements that end a line of text (a break is added before the next text when none is there). */
const BLOCKS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'br',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'ul',
]);
/** Elements whose text Taguette counts but a reader never sees. */
const HIDDEN = new Set(['head', 'script', 'style', 'template', 'title', 'noscript']);

/** One text node of the HTML: where it starts in Taguette's byte count and in the plain text. */
interface TextRun {
  byteStart: number;
  byteEnd: number;
  /** code point offset of the run in the plain text, or of the place where hidden text was left out */
  cpStart: number;
  /** the node's text when it was written to the plain text; null when hidden (comments, scripts, head) */
  value: string | null;
}

/** A Taguette document as plain text, with Taguette's offsets mapped to code points of that text. */
export interface TaguetteText {
  text: string;
  /**
   * The code point offset in `text` of Taguette offset `byteOffset` (UTF-8 bytes of text nodes). `side`
   * decides at the boundary of two text nodes: a start belongs to the node after it, an end to the node
   * before (as Taguette's `find_pos` does), so inserted line breaks stay outside highlights.
   */
  toCodePoint(byteOffset: number, side: 'start' | 'end'): number;
}

/**
 * Converts a Taguette document's HTML `contents` to plain text and an offset map. The HTML is parsed with
 * parse5, which implements the same WHATWG parsing algorithm as html5lib (what Taguette parses with), so the
 * text nodes, and therefore the byte offsets, are the ones Taguette counted. Comments and hidden elements
 * count in the offsets (bs4 treats them as strings) but are not written.
 */
export function taguetteHtmlToText(html: string): TaguetteText {
  const runs: TextRun[] = [];
  let out = '';
  let outCp = 0;
  let bytes = 0;
  let pendingBreak = false;
  const write = (s: string) => {
    out += s;
    outCp += codePointLength(s);
  };
  const visit = (node: Node, hidden: boolean) => {
    if (node.nodeName === '#text' || node.nodeName === '#comment') {
      const value = node.nodeName === '#text' ? (node as DefaultTreeAdapterMap['textNode']).value : (node as DefaultTreeAdapterMap['commentNode']).data;
      const n = Buffer.byteLength(value, 'utf8');
      const shown = node.nodeName === '#text' && !hidden;
      if (shown && value !== '' && pendingBreak) {
        if (out !== '' && !out.endsWith('\n') && !value.startsWith('\n')) write('\n');
        pendingBreak = false;
      }
      runs.push({ byteStart: bytes, byteEnd: bytes + n, cpStart: outCp, value: shown ? value : null });
      if (shown) write(value);
      bytes += n;
      return;
    }
    const el = node as DefaultTreeAdapterMap['element'];
    const tag = typeof el.tagName === 'string' ? el.tagName : '';
    const block = BLOCKS.has(tag);
    if (block) pendingBreak = true;
    const children: Node[] =
      tag === 'template' ? ((el as DefaultTreeAdapterMap['template']).content?.childNodes ?? []) : ((el as { childNodes?: Node[] }).childNodes ?? []);
    for (const ch of children) visit(ch, hidden || HIDDEN.has(tag));
    if (block) pendingBreak = true;
  };
  visit(parse(html) as unknown as Node, false);

  const toCodePoint = (offset: number, side: 'start' | 'end'): number => {
    // the run holding the offset: start -> byteStart <= offset < byteEnd; end -> byteStart < offset <= byteEnd
    let lo = 0;
    let hi = runs.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const r = runs[mid] as TextRun;
      const before = side === 'start' ? offset < r.byteStart : offset <= r.byteStart;
      const after = side === 'start' ? offset >= r.byteEnd : offset > r.byteEnd;
      if (before) hi = mid - 1;
      else if (after) lo = mid + 1;
      else {
        found = mid;
        break;
      }
    }
    if (found < 0) return offset <= 0 ? 0 : outCp;
    const r = runs[found] as TextRun;
    if (r.value === null) return r.cpStart;
    return r.cpStart + byteToCodePoint(r.value, offset - r.byteStart);
  };
  return { text: out, toCodePoint };
}

/** The code point index of UTF-8 byte offset `b` in `s` (an offset inside a character moves past it, as Taguette's `split_utf8`). */
function byteToCodePoint(s: string, b: number): number {
  let bytes = 0;
  let cp = 0;
  for (const ch of s) {
    if (bytes >= b) break;
    const c = ch.codePointAt(0) as number;
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    cp++;
  }
  return cp;
}

/** The category path of a tag path: its prefixes split at `:` or at a `.` between non-blank characters (empty: none). */
export function taguetteTagPrefixes(tagPath: string): string[] {
  const parts: string[] = [];
  const re = /:|(?<=\S)\.(?=\S)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(tagPath)) !== null) {
    const prefix = tagPath.slice(0, m.index).trim();
    if (prefix === '' || tagPath.slice(m.index + 1).trim() === '') return [];
    parts.push(prefix);
  }
  return parts;
}

function planTaguette(db: ForeignDb, filePath: string): ImportPlan {
  requireSchema(db, filePath, 'a Taguette database', {
    projects: ['id', 'name'],
    documents: ['id', 'name', 'project_id', 'contents'],
    tags: ['id', 'project_id', 'path'],
    highlights: ['id', 'document_id', 'start_offset', 'end_offset'],
    highlight_tags: ['highlight_id', 'tag_id'],
  });
  const plan = emptyPlan('taguette', filePath);
  const origin = `Taguette: ${path.basename(filePath)}`;
  const tables = db.tables();

  // -- projects -> folders
  const projects = db.all<{ id: number; name: string }>('SELECT id, name FROM projects ORDER BY id');
  const folderNames = new Set<string>();
  for (const p of projects) {
    let name = fitName(p.name, 255, `Taguette project ${p.id}`).replace(/\//g, '-');
    if (folderNames.has(name)) name = `${name} (${p.id})`;
    folderNames.add(name);
    plan.folders.push({ ref: `project:${p.id}`, name, parent: null });
  }

  // -- documents
  const docs = new Map<number, TaguetteText>();
  const names = new Set<string>();
  const projectIds = new Set(projects.map((p) => p.id));
  const docCols = db.columns('documents');
  for (const d of db.all<{ id: number; name: string; description: string | null; filename: string | null; project_id: number; contents: string }>(
    `SELECT id, name, ${docCols.includes('description') ? 'description' : 'NULL AS description'}, ${docCols.includes('filename') ? 'filename' : 'NULL AS filename'}, project_id, contents FROM documents ORDER BY id`,
  )) {
    if (!projectIds.has(d.project_id)) {
      skip(plan, 'documents_of_missing_projects');
      continue;
    }
    const converted = taguetteHtmlToText(d.contents ?? '');
    docs.set(d.id, converted);
    let name = fitName(d.name, MAX_SOURCE_NAME, `Document ${d.id}`);
    if (names.has(name)) name = fitName(`${name} (${d.id})`, MAX_SOURCE_NAME, `Document ${d.id}`);
    names.add(name);
    plan.sources.push({
      ref: `doc:${d.id}`,
      name,
      text: converted.text,
      memo: memoOf(d.description),
      origin: d.filename ? `${origin} (${d.filename})` : origin,
      folder: `project:${d.project_id}`,
    });
  }

  // -- tags -> codes (and categories from their paths)
  const tagIds = planTags(db, plan);

  // -- who wrote each highlight (the last highlight_add command naming it)
  const ownerOf = new Map<number, string>();
  if (tables.has('commands')) {
    for (const c of db.all<{ user_login: string; payload: string }>(
      "SELECT user_login, payload FROM commands WHERE payload LIKE '%highlight_add%' ORDER BY id",
    )) {
      try {
        const p = JSON.parse(c.payload) as { type?: string; highlight_id?: number; id?: number };
        const id = p.highlight_id ?? p.id;
        if (p.type === 'highlight_add' && typeof id === 'number') ownerOf.set(id, c.user_login);
      } catch {
        // a command that is not JSON says nothing about owners
      }
    }
  }

  // -- highlights x tags -> segments
  const tagsOf = new Map<number, number[]>();
  for (const ht of db.all<{ highlight_id: number; tag_id: number }>('SELECT highlight_id, tag_id FROM highlight_tags ORDER BY highlight_id, tag_id')) {
    if (!tagIds.has(ht.tag_id)) {
      skip(plan, 'highlight_tags_of_missing_tags');
      continue;
    }
    let list = tagsOf.get(ht.highlight_id);
    if (!list) tagsOf.set(ht.highlight_id, (list = []));
    list.push(ht.tag_id);
  }
  for (const h of db.all<{ id: number; document_id: number; start_offset: number; end_offset: number }>(
    'SELECT id, document_id, start_offset, end_offset FROM highlights ORDER BY document_id, start_offset, id',
  )) {
    const doc = docs.get(h.document_id);
    const hlTags = tagsOf.get(h.id) ?? [];
    if (!doc) {
      skip(plan, 'highlights_of_missing_documents');
      continue;
    }
    if (hlTags.length === 0) {
      skip(plan, 'highlights_without_tags');
      continue;
    }
    const start = doc.toCodePoint(Number(h.start_offset), 'start');
    const end = doc.toCodePoint(Number(h.end_offset), 'end');
    if (!(end > start)) {
      skip(plan, 'empty_highlights', hlTags.length);
      continue;
    }
    for (const tagId of hlTags) {
      plan.segments.push({
        code: `tag:${tagId}`,
        source: `doc:${h.document_id}`,
        start_pos: start,
        end_pos: end,
        memo: null,
        importance: 0,
        owner: ownerOf.get(h.id) ?? null,
      });
    }
  }
  return plan;
}

/**
 * Plans Taguette's tags as codes, with categories from their parents (newer schema: a parent tag is also a
 * category named by its path) or their path prefixes (`a.b` is in category `a`); returns the tags' ids.
 */
function planTags(db: ForeignDb, plan: ImportPlan): Set<number> {
  const tagCols = db.columns('tags');
  const parentCol = tagCols.includes('parent_id') ? 'parent_id' : tagCols.includes('parent') ? 'parent' : null;
  const tags = db.all<{ id: number; project_id: number; path: string; description: string | null; parent: number | null }>(
    `SELECT id, project_id, path, ${tagCols.includes('description') ? 'description' : 'NULL AS description'}, ${parentCol ? `${parentCol} AS parent` : 'NULL AS parent'} FROM tags ORDER BY id`,
  );
  const tagIds = new Set(tags.map((t) => t.id));
  const categoryRefs = new Set<string>();
  const addCategory = (name: string, parent: string | null): string => {
    const ref = `category:${name.toLowerCase()}`;
    if (!categoryRefs.has(ref)) {
      categoryRefs.add(ref);
      plan.categories.push({ ref, name: fitName(name, MAX_CODE_NAME, 'Taguette tags'), parent, memo: null });
    }
    return ref;
  };
  const parentTags = new Set(tags.filter((t) => t.parent !== null && tagIds.has(t.parent)).map((t) => t.parent as number));
  const byTagId = new Map(tags.map((t) => [t.id, t]));
  for (const t of tags) {
    let category: string | null = null;
    if (parentCol) {
      // newer schema: the parent tag is a category named by its path (its own highlights stay on its code)
      const chain: string[] = [];
      const seen = new Set<number>([t.id]);
      for (let p = t.parent; p !== null && byTagId.has(p) && !seen.has(p); p = byTagId.get(p)?.parent ?? null) {
        seen.add(p);
        chain.unshift(byTagId.get(p)?.path ?? String(p));
      }
      for (const name of chain) category = addCategory(name, category);
    } else {
      for (const prefix of taguetteTagPrefixes(t.path)) category = addCategory(prefix, category);
    }
    plan.codes.push({ ref: `tag:${t.id}`, name: fitName(t.path, MAX_CODE_NAME, `Tag ${t.id}`), color: null, memo: memoOf(t.description), category });
  }
  if (parentTags.size > 0) warn(plan, `${parentTags.size} parent tag(s) became categories as well as codes`);
  return tagIds;
}
