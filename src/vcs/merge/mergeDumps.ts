/**
 * Entity-level three-way merge of two histories of one project (issue 16, item 3; docs/architecture.md,
 * "Merging two histories"). Input: three parsed canonical dumps (src/vcs/canonicalDump.ts `parseDump`): the
 * common ancestor (`base`), our side and their side. Output: the merged dump (to restore into the project), the
 * conflicts, counts. Pure: no I/O, no clock (the time stamped on orphaned codings comes from `opts.now`).
 *
 * Identity: an entity is matched across the three dumps by {@link entityGuid}:
 * 1. its `guid` column (migration 17, src/vcs/identity.ts: codes, categories, sources, folders, segments,
 *    AV segments, cases, case ranges; random for new rows, so two copies never share one by chance), else
 * 2. (dumps written before migration 17) the GUID `exchange_guids` (migration 8) stores for it (an item
 *    imported from a REFI-QDA file), when no other item of the dump shares it, else
 * 3. its integer id, when the base holds a row with that id: both sides descend from the base and ids are never
 *    reused (AUTOINCREMENT), so that row is the same entity. This is what a GUID derived from the project GUID
 *    and the id (src/domain/exchangeIds.ts `deriveGuid`) would give; derived GUIDs themselves are not used,
 *    because the dump leaves the project GUID out and because two copies give their *new* rows the same ids,
 *    hence the same derived GUIDs. Given `opts.projectGuid`, conflicts name such an entity by its derived GUID.
 * 4. A row new on one side without a GUID is that side's own entity.
 * Entities new on both sides are then matched by name: categories (same name, same parent), codes (same name;
 * different categories are a `code_moved_both` conflict, since a code name is unique in a project), folders
 * (same name and parent), cases (same name), sources (same name and same text); and codings: one coder's identical
 * coding (same code, source, range and text) made on both sides is one coding, while different coders' codings of
 * the same words stay apart (AV codings likewise; case ranges by case, source and range, whoever marked them).
 *
 * Rules, per entity (references between tables compared by identity, not by local id):
 * - changed on one side only → that side's version; equal changes → once; a field changed on both sides
 *   differently → ours, and a conflict (renamed, moved, memo edited, recoded, other field), except bookkeeping
 *   fields (timestamps, version counters, session, derived lengths and quotes), which take ours silently;
 * - added on either side → kept (codings by different coders on the same text all land, one coder's identical
 *   coding once); theirs' new rows get
 *   new local ids above every id of the three dumps (and `opts.idFloor`), references rewritten;
 * - deleted on one side and unchanged on the other → deleted; deleted on one side and edited on the other →
 *   ours, and a `deleted_edited` conflict; deleted on one side and used on the other (a code with new codings,
 *   a source with new codings, a category with codes...) → kept, and a `<kind>_deleted_used` conflict; rows
 *   belonging to a deleted case or source (memberships, attributes) go with it;
 * - a source's text edited on both sides → merged three-way (src/vcs/merge/textMerge.ts), every coding and case
 *   range carried onto the merged text through the editor's edit tracking; overlapping edits → ours' passage and
 *   a `source_text_overlap` conflict holding theirs'; a coding whose text the merge deleted goes to
 *   `orphan_segments`, as in the editor;
 * - two different entities ending up with one name that must be unique → the non-ours one is renamed
 *   ("name (2)"), and a `name_clash` conflict.
 * Tables this module does not know (later migrations) are merged row by row by primary key.
 */
import type { ParsedDump } from '../canonicalDump';
import type { Row, RowValue } from '../../domain/versionControl';
import { deriveGuid } from '../../domain/exchangeIds';
import { nameKey } from '../../domain/rules';
import { hasAstral } from '../../core/text';
import { editsBetween, mapRange, mergeText, type MergeEdit } from './textMerge';
import { conflictId, keysOf, REF, toKeyed, unifyNew, type KeyedTables, type KeyMap } from './keys';
import {
  ANCHORED,
  BOOKKEEPING,
  GUID_KIND,
  isEntityTable,
  KIND,
  LOCAL_TABLES,
  POLY,
  REFS,
  rowEq,
  sameIgnoring,
  SHARED_SEQUENCE,
  UNIQUE,
  valueEq,
  type Ref,
  type Side,
} from './schema';
import type { MergeConflict, MergeConflictKind, MergeSummary } from './types';
import { bump, DELETED_USED, fieldConflictKind, PerTable, summarizeRow, unrefDeep } from './mergeParts';

export type { MergeConflict, MergeConflictKind, MergeSummary } from './types';
export { entityGuid } from './keys';

/** Options of {@link mergeDumps}. */
export interface MergeOptions {
  /** ISO 8601 time stamped on codings the merge orphans (`orphan_segments.orphaned_at`); default the epoch */
  now?: string;
  /** the project's GUID (meta `project_guid`): conflicts then name base entities without a GUID of their own by their derived GUID */
  projectGuid?: string;
  /** per table, the highest id ever given out locally (sqlite_sequence): theirs' new rows get ids above it */
  idFloor?: Readonly<Record<string, number>>;
}

/** The result of {@link mergeDumps}. */
export interface MergeResult {
  merged: ParsedDump;
  conflicts: MergeConflict[];
  summary: MergeSummary;
}

/**
 * Merges `ours` and `theirs`, both descended from `base` (three parsed canonical dumps), by the rules of the
 * module comment. The result keeps ours' local ids; theirs' new rows get fresh ids and every reference to them
 * is rewritten. Throws only on malformed dumps (a programming error).
 */
export function mergeDumps(base: ParsedDump, ours: ParsedDump, theirs: ParsedDump, opts: MergeOptions = {}): MergeResult {
  return new Merger(base, ours, theirs, opts).run();
}

/** One merge, step by step (the numbered steps of {@link Merger.run}). */
class Merger {
  private readonly now: string;
  private readonly conflicts: MergeConflict[] = [];
  private readonly conflictIds = new Set<string>();
  /** the entity's merge key of each conflict, until local ids are known */
  private readonly conflictKey = new Map<MergeConflict, string>();
  private readonly summary: MergeSummary = {
    from_theirs: {},
    deleted: {},
    unified: 0,
    texts_merged: 0,
    segments_reanchored: 0,
    segments_orphaned: 0,
    renumbered: 0,
    conflicts: 0,
  };
  private kBase!: KeyMap;
  private kOurs!: KeyMap;
  private kTheirs!: KeyMap;
  private B!: KeyedTables;
  private O!: KeyedTables;
  private T!: KeyedTables;
  private readonly merged: KeyedTables = new Map();
  /** the side whose positions a row carries */
  private readonly origin = new PerTable<Side>();
  /** source key -> the edits that turn each side's text into the merged one */
  private readonly textEdits = new Map<string, { ours: MergeEdit[]; theirs: MergeEdit[] }>();
  private readonly orphans: { segment: string; row: Row }[] = [];
  private readonly tableNames: string[];
  private readonly primaryKeys = new Map<string, string[]>();
  private readonly idOf = new PerTable<number>();
  private readonly origIds = new Map<string, Map<string, RowValue>>();
  private readonly counters = new Map<string, number>();

  constructor(
    private readonly base: ParsedDump,
    private readonly ours: ParsedDump,
    private readonly theirs: ParsedDump,
    private readonly opts: MergeOptions,
  ) {
    this.now = opts.now ?? new Date(0).toISOString();
    this.tableNames = [...new Set([...ours.keys(), ...theirs.keys()])];
    for (const name of this.tableNames) this.primaryKeys.set(name, ours.get(name)?.primaryKey ?? theirs.get(name)?.primaryKey ?? []);
  }

  run(): MergeResult {
    this.identify(); // 1. identities, entities created on both sides matched
    this.B = toKeyed(this.base, this.kBase); // 2. key space
    this.O = toKeyed(this.ours, this.kOurs);
    this.T = toKeyed(this.theirs, this.kTheirs);
    for (const table of this.tableNames) this.mergeTable(table); // 3. row by row
    this.oneSidedTextEdits();
    this.reanchor(); // 4. codings onto the merged texts
    this.keepUsed(); // 5. delete versus use, cascades
    this.uniqueNames(); // 6. names that must stay unique
    this.assignIds(); // 7. local ids
    this.addOrphans();
    const merged = this.toLocal(); // 8. back to local ids
    this.conflicts.sort((x, y) => (x.conflict_id < y.conflict_id ? -1 : x.conflict_id > y.conflict_id ? 1 : 0));
    this.summary.conflicts = this.conflicts.length;
    return { merged, conflicts: this.conflicts, summary: this.summary };
  }

  private identify(): void {
    this.kBase = keysOf('base', this.base, null);
    this.kOurs = keysOf('ours', this.ours, this.kBase);
    this.kTheirs = keysOf('theirs', this.theirs, this.kBase);
    const kBase = this.kBase;
    this.summary.unified = unifyNew(this.base, this.ours, this.theirs, kBase, this.kOurs, this.kTheirs, (table) => new Set(kBase.get(table)?.values() ?? []));
  }

  private entityName(row: Row | undefined): string {
    if (!row) return '';
    if (typeof row.name === 'string') return row.name;
    if (typeof row.text === 'string') return row.text.length > 80 ? `${row.text.slice(0, 79)}…` : row.text;
    return String(row.id ?? '');
  }

  private guidOf(table: string, key: string): string {
    if (key.startsWith('g:')) return key.slice(2);
    const m = /^base\/([^/]+)\/(.+)$/.exec(key);
    if (m && this.opts.projectGuid && GUID_KIND[table]) return deriveGuid(this.opts.projectGuid, GUID_KIND[table]!, m[2]!);
    return key;
  }

  private addConflict(kind: MergeConflictKind, table: string, key: string, row: Row | undefined, field: string, o: unknown, t: unknown, b: unknown): void {
    const guid = this.guidOf(table, key);
    const conflict_id = conflictId(kind, table, guid, field);
    if (this.conflictIds.has(conflict_id)) return;
    this.conflictIds.add(conflict_id);
    const c: MergeConflict = {
      conflict_id,
      kind,
      entity: { table, guid, name: this.entityName(row), local_id: null, ...(field ? { field } : {}) },
      ours: o,
      theirs: t,
      base: b,
    };
    this.conflicts.push(c);
    this.conflictKey.set(c, key);
  }

  /** Step 3 for one table. */
  private mergeTable(table: string): void {
    const b = this.B.get(table) ?? new Map<string, Row>();
    const o = this.O.get(table) ?? new Map<string, Row>();
    const t = this.T.get(table) ?? new Map<string, Row>();
    const out = new Map<string, Row>();
    this.merged.set(table, out);
    if (LOCAL_TABLES.has(table)) {
      for (const [key, row] of o) out.set(key, row);
      return;
    }
    const kind = KIND[table];
    const visit = (key: string) => {
      const rb = b.get(key);
      const ro = o.get(key);
      const rt = t.get(key);
      if (!ro && !rt) return;
      if (!ro || !rt) {
        const present = (ro ?? rt)!;
        if (!rb) {
          out.set(key, present);
          if (rt) bump(this.summary.from_theirs, table);
          this.origin.set(table, key, ro ? 'ours' : 'theirs');
          return;
        }
        if (rowEq(present, rb) || sameIgnoring(table, present, rb)) {
          bump(this.summary.deleted, table); // deleted on one side, unchanged on the other
          return;
        }
        // deleted on one side, edited on the other: ours wins (the used case is revisited in keepUsed)
        if (kind !== undefined) this.addConflict('deleted_edited', table, key, present, '', ro ?? null, rt ?? null, rb);
        if (ro) {
          out.set(key, ro);
          this.origin.set(table, key, 'ours');
        } else bump(this.summary.deleted, table);
        return;
      }
      if (rowEq(ro, rt)) {
        out.set(key, ro);
        this.origin.set(table, key, 'ours');
        return;
      }
      out.set(key, this.mergeRow(table, key, rb, ro, rt));
    };
    for (const key of o.keys()) visit(key);
    for (const key of t.keys()) if (!o.has(key)) visit(key);
    for (const key of b.keys()) if (!o.has(key) && !t.has(key)) visit(key);
  }

  /** Step 3 for a row both sides hold, differently: column by column. */
  private mergeRow(table: string, key: string, rb: Row | undefined, ro: Row, rt: Row): Row {
    const row: Row = {};
    let tookTheirs = false;
    for (const col of new Set([...Object.keys(ro), ...Object.keys(rt)])) {
      const vb = rb?.[col];
      const vo = ro[col];
      const vt = rt[col];
      if (valueEq(vo, vt) || (rb && valueEq(vt, vb)) || vt === undefined) row[col] = vo ?? null;
      else if ((rb && valueEq(vo, vb)) || vo === undefined) {
        row[col] = vt;
        tookTheirs = true;
      } else if (table === 'sources' && col === 'content') {
        const m = mergeText(typeof vb === 'string' ? vb : '', String(vo ?? ''), String(vt ?? ''));
        row[col] = m.text;
        this.textEdits.set(key, { ours: m.oursEdits, theirs: m.theirsEdits });
        this.summary.texts_merged++;
        for (const ov of m.overlaps) {
          this.addConflict(
            'source_text_overlap',
            table,
            key,
            ro,
            `content@${ov.start_pos}`,
            { text: ov.ours, start_pos: ov.start_pos, end_pos: ov.end_pos },
            { text: ov.theirs, start_pos: ov.theirs_start_pos, end_pos: ov.theirs_end_pos },
            { text: ov.base },
          );
        }
      } else if (col === 'updated_at') row[col] = String(vo) > String(vt) ? vo! : vt;
      else {
        row[col] = vo;
        if (BOOKKEEPING.has(col) || (ANCHORED.has(table) && (col === 'start_pos' || col === 'end_pos' || col === 'text'))) continue;
        if (!rb && !(col === 'category_id' || col === 'parent_id' || col === 'folder_id' || col === 'memo')) continue; // created on both sides: only placement and memo matter
        this.addConflict(fieldConflictKind(table, col), table, key, ro, col, vo ?? null, vt ?? null, rb ? (vb ?? null) : null);
      }
    }
    if (tookTheirs) bump(this.summary.from_theirs, table);
    // whose positions: ours unless only theirs moved the range
    const moved = (r: Row | undefined) => rb !== undefined && r !== undefined && !(valueEq(r.start_pos, rb.start_pos) && valueEq(r.end_pos, rb.end_pos));
    const side: Side = ANCHORED.has(table) && !moved(ro) && moved(rt) ? 'theirs' : 'ours';
    if (side === 'theirs') {
      row.start_pos = rt.start_pos ?? null;
      row.end_pos = rt.end_pos ?? null;
    }
    this.origin.set(table, key, side);
    return row;
  }

  /** A text edited on one side only: the other side's codings move with that side's edits. */
  private oneSidedTextEdits(): void {
    for (const [key, row] of this.merged.get('sources') ?? []) {
      const cm = row.content;
      if (this.textEdits.has(key) || typeof cm !== 'string') continue;
      const co = this.O.get('sources')?.get(key)?.content;
      const ct = this.T.get('sources')?.get(key)?.content;
      const oursEdits = typeof co === 'string' && co !== cm ? editsBetween(co, cm) : [];
      const theirsEdits = typeof ct === 'string' && ct !== cm ? editsBetween(ct, cm) : [];
      if (oursEdits.length + theirsEdits.length > 0) this.textEdits.set(key, { ours: oursEdits, theirs: theirsEdits });
    }
  }

  /** Step 4: codings and case ranges carried onto the merged texts through the editor's edit tracking. */
  private reanchor(): void {
    // code point slicing of merged texts, one index per source (a text without astral characters slices directly)
    const slicers = new Map<string, (a: number, b: number) => string>();
    const slicer = (key: string, content: string) => {
      let f = slicers.get(key);
      if (!f) {
        const cps = hasAstral(content) ? Array.from(content) : null;
        f = cps ? (a, b) => cps.slice(a, b).join('') : (a, b) => content.slice(a, b);
        slicers.set(key, f);
      }
      return f;
    };
    const sources = this.merged.get('sources');
    for (const table of ANCHORED) {
      const rows = this.merged.get(table);
      if (!rows || this.textEdits.size === 0) continue;
      for (const [key, row] of rows) {
        const src = typeof row.source_id === 'string' && row.source_id.startsWith(REF) ? row.source_id.slice(REF.length) : null;
        const edits = src !== null ? this.textEdits.get(src) : undefined;
        if (!edits) continue;
        const content = sources?.get(src!)?.content;
        if (typeof content !== 'string') continue;
        const list = (this.origin.get(table, key) ?? 'ours') === 'theirs' ? edits.theirs : edits.ours;
        if (list.length === 0) continue;
        const s = Number(row.start_pos);
        const e = Number(row.end_pos);
        const to = mapRange(list, s, e);
        if (to === null) {
          rows.delete(key);
          if (table === 'segments') {
            this.summary.segments_orphaned++;
            this.orphans.push({ segment: REF + key, row });
          } else bump(this.summary.deleted, table);
          continue;
        }
        if (to.start_pos !== s || to.end_pos !== e) {
          row.start_pos = to.start_pos;
          row.end_pos = to.end_pos;
          if (table === 'segments') this.summary.segments_reanchored++;
        }
        if ('text' in row) row.text = slicer(src!, content)(to.start_pos, to.end_pos);
      }
    }
    for (const [key, row] of sources ?? []) {
      if (typeof row.content === 'string' && this.textEdits.has(key)) row.content_length = [...row.content].length;
    }
  }

  /** Step 5: a kept reference to a gone entity brings it back (delete versus use); a cascading one drops its row. */
  private keepUsed(): void {
    const { O, T, B, merged } = this;
    const findRow = (table: string, key: string): { row: Row; side: Side } | null => {
      const ro = O.get(table)?.get(key);
      if (ro) return { row: ro, side: 'ours' };
      const rt = T.get(table)?.get(key);
      if (rt) return { row: rt, side: 'theirs' };
      const rb = B.get(table)?.get(key);
      return rb ? { row: rb, side: 'base' } : null;
    };
    const summarized = (sideTables: KeyedTables, table: string, key: string) => {
      const r = sideTables.get(table)?.get(key);
      return r ? summarizeRow(r) : null;
    };
    for (let changed = true; changed;) {
      changed = false;
      for (const table of this.tableNames) {
        const rows = merged.get(table)!;
        const refs = Object.entries(REFS[table] ?? {});
        const poly = POLY[table];
        if (refs.length === 0 && !poly) continue;
        // deleting the visited entry while iterating a Map is safe; rows brought back are visited too
        for (const [key, row] of rows) {
          const targets: [Ref, string][] = [];
          for (const [col, ref] of refs) {
            const v = row[col];
            if (typeof v === 'string' && v.startsWith(REF)) targets.push([ref, v.slice(REF.length)]);
          }
          if (poly) {
            const v = row[poly.idColumn];
            const target = poly.tables[String(row[poly.kindColumn])];
            if (target !== undefined && typeof v === 'string' && v.startsWith(REF)) targets.push([{ table: target, mode: poly.mode }, v.slice(REF.length)]);
          }
          for (const [ref, tk] of targets) {
            if (merged.get(ref.table)?.has(tk)) continue;
            if (ref.mode === 'cascade') {
              rows.delete(key);
              bump(this.summary.deleted, table);
              break;
            }
            if (ref.mode !== 'keep') continue;
            const found = findRow(ref.table, tk);
            if (!found) continue;
            merged.get(ref.table)?.set(tk, found.row);
            this.origin.set(ref.table, tk, found.side === 'theirs' ? 'theirs' : 'ours');
            const deletedKind = `${KIND[ref.table] ?? ''}_deleted_used`;
            const kind = (DELETED_USED.has(deletedKind) ? deletedKind : 'deleted_edited') as MergeConflictKind;
            // a deleted_edited conflict of the same entity is now this one
            const dup = this.conflicts.findIndex((c) => c.kind === 'deleted_edited' && c.entity.table === ref.table && this.conflictKey.get(c) === tk);
            if (dup >= 0) {
              this.conflictIds.delete(this.conflicts[dup]!.conflict_id);
              this.conflicts.splice(dup, 1);
            }
            this.addConflict(kind, ref.table, tk, found.row, '', summarized(O, ref.table, tk), summarized(T, ref.table, tk), summarized(B, ref.table, tk));
            changed = true;
          }
        }
      }
    }
  }

  /** Step 6: two entities with one name that must be unique: the non-ours one becomes "name (2)". */
  private uniqueNames(): void {
    for (const [table, u] of Object.entries(UNIQUE)) {
      const rows = this.merged.get(table);
      if (!rows) continue;
      const inOurs = this.O.get(table);
      const seen = new Map<string, string>();
      const oursFirst = [...rows.keys()].sort((x, y) => Number(!inOurs?.has(x)) - Number(!inOurs?.has(y)));
      for (const key of oursFirst) {
        const row = rows.get(key)!;
        if (!seen.has(u.key(row))) {
          seen.set(u.key(row), key);
          continue;
        }
        const original = String(row[u.name] ?? '');
        let n = 2;
        let renamed: Row;
        do {
          const name = `${original} (${n++})`;
          renamed = { ...row, [u.name]: name, ...('name_key' in row ? { name_key: nameKey(name) } : {}) };
        } while (seen.has(u.key(renamed)));
        rows.set(key, renamed);
        seen.set(u.key(renamed), key);
        this.addConflict('name_clash', table, key, renamed, 'name', original, String(renamed[u.name]), null);
      }
    }
  }

  /** Step 7: ours' (and the base's) ids kept; theirs' new rows numbered above every id in sight, in theirs' order. */
  private assignIds(): void {
    const counterOf = (table: string) => SHARED_SEQUENCE[table] ?? table;
    for (const table of this.merged.keys()) {
      if (!isEntityTable(this.primaryKeys.get(table) ?? [])) continue;
      const c = counterOf(table);
      let top = Math.max(this.counters.get(c) ?? 0, this.opts.idFloor?.[table] ?? 0);
      for (const d of [this.base, this.ours, this.theirs]) for (const r of d.get(table)?.rows ?? []) if (typeof r.id === 'number' && r.id > top) top = r.id;
      this.counters.set(c, top);
    }
    const inverse = (km: KeyMap, table: string) => {
      const m = new Map<string, string>();
      for (const [id, key] of km.get(table) ?? []) m.set(key, id);
      return m;
    };
    for (const [table, rows] of this.merged) {
      if (!isEntityTable(this.primaryKeys.get(table) ?? [])) continue;
      const oursId = inverse(this.kOurs, table);
      const baseId = inverse(this.kBase, table);
      const theirsId = inverse(this.kTheirs, table);
      const fresh: string[] = [];
      for (const key of rows.keys()) {
        const id = oursId.get(key) ?? baseId.get(key);
        if (id !== undefined) this.idOf.set(table, key, Number(id));
        else fresh.push(key);
      }
      fresh.sort((x, y) => Number(theirsId.get(x) ?? 0) - Number(theirsId.get(y) ?? 0));
      const c = counterOf(table);
      for (const key of fresh) {
        const next = (this.counters.get(c) ?? 0) + 1;
        this.counters.set(c, next);
        this.idOf.set(table, key, next);
        if (theirsId.get(key) !== String(next)) this.summary.renumbered++;
      }
    }
  }

  /** Codings whose text the merge deleted, as the editor leaves them (orphan_segments). */
  private addOrphans(): void {
    const rows = this.merged.get('orphan_segments');
    if (this.orphans.length === 0 || !rows) return;
    let next = this.counters.get('orphan_segments') ?? 0;
    for (const o of this.orphans) {
      const r = o.row;
      next++;
      const k = `o${next}`;
      rows.set(k, {
        id: next,
        segment_id: o.segment,
        code_id: r.code_id ?? null,
        source_id: r.source_id ?? null,
        start_pos: r.start_pos ?? 0,
        end_pos: r.end_pos ?? 0,
        text: r.text ?? '',
        memo: r.memo ?? null,
        importance: r.importance ?? 0,
        owner: r.owner ?? '',
        session_id: r.session_id ?? null,
        created_at: r.created_at ?? this.now,
        orphaned_at: this.now,
        reason: 'its text was deleted in a merge',
      });
      this.idOf.set('orphan_segments', k, next);
    }
    this.counters.set('orphan_segments', next);
  }

  private resolve(table: string, v: RowValue): RowValue {
    if (typeof v !== 'string' || !v.startsWith(REF)) return v;
    const key = v.slice(REF.length);
    return this.idOf.get(table, key) ?? this.originalId(table, key) ?? null;
  }

  /** The id a key had in its dump (ours' over theirs', theirs' over the base's), for soft references whose target is gone; built per table on first use. */
  private originalId(table: string, key: string): RowValue | undefined {
    let m = this.origIds.get(table);
    if (!m) {
      m = new Map();
      for (const km of [this.kBase, this.kTheirs, this.kOurs]) for (const [id, k] of km.get(table) ?? []) m.set(k, Number.isNaN(Number(id)) ? id : Number(id));
      this.origIds.set(table, m);
    }
    return m.get(key);
  }

  /** Step 8: the merged rows with local ids, and the conflicts' values likewise. */
  private toLocal(): ParsedDump {
    const resolve = (table: string, v: RowValue) => this.resolve(table, v);
    const out: ParsedDump = new Map();
    for (const table of this.tableNames) {
      const refs = Object.entries(REFS[table] ?? {});
      const poly = POLY[table];
      const rows: Row[] = [];
      for (const row of this.merged.get(table)!.values()) {
        const r: Row = { ...row };
        if (typeof r.id === 'string' && r.id.startsWith(REF)) r.id = resolve(table, r.id);
        for (const [col, ref] of refs) if (col in r) r[col] = resolve(ref.table, r[col]!);
        if (poly) {
          const target = poly.tables[String(r[poly.kindColumn])];
          if (target !== undefined) {
            const v = resolve(target, r[poly.idColumn]!);
            r[poly.idColumn] = poly.text && typeof v === 'number' ? String(v) : v;
          }
        }
        rows.push(r);
      }
      out.set(table, { primaryKey: this.primaryKeys.get(table)!, rows });
    }
    for (const c of this.conflicts) {
      const id = this.idOf.get(c.entity.table, this.conflictKey.get(c) ?? '');
      c.entity.local_id = typeof id === 'number' ? id : null;
      c.ours = unrefDeep(c.ours, resolve);
      c.theirs = unrefDeep(c.theirs, resolve);
      c.base = unrefDeep(c.base, resolve);
    }
    return out;
  }
}
