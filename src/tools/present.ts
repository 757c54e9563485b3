import type { Category, Folder, Segment } from '../domain/model';
import type { CodeWithCounts, ProjectRepository, SourceWithCounts } from '../domain/ports';

/** A code as tools return it. */
export interface CodeOut {
  code_id: number;
  name: string;
  color: string;
  memo: string | null;
  category_id: number | null;
  category: { id: number; name: string } | null;
  segment_count: number;
  av_segment_count: number;
  owner: string;
  session_id: string | null;
  /** who made the code (issue 14, item 1): the owner's coder name and role; null when unknown (from before roles) */
  coder: string;
  coder_role: 'researcher' | 'agent' | null;
  created_at: string;
  updated_at: string;
  version: number;
}

/** Formats a code; `categories` maps ids to categories (looked up in `repo` when absent). */
export function codeOut(c: CodeWithCounts, repo: ProjectRepository, categories?: Map<number, Category>): CodeOut {
  const cat = c.category_id === null ? undefined : (categories?.get(c.category_id) ?? repo.getCategory(c.category_id));
  return {
    code_id: c.code_id,
    name: c.name,
    color: c.color,
    memo: c.memo,
    category_id: c.category_id,
    category: cat ? { id: cat.category_id, name: cat.name } : null,
    segment_count: c.segment_count,
    av_segment_count: c.av_segment_count,
    owner: c.owner,
    session_id: c.session_id,
    coder: c.owner,
    coder_role: c.coder_role ?? null,
    created_at: c.created_at,
    updated_at: c.updated_at,
    version: c.version,
  };
}

/** A source as tools return it (no text). `length` is in code points. */
export function sourceOut(s: SourceWithCounts) {
  return {
    source_id: s.source_id,
    id: s.source_id,
    name: s.name,
    type: s.type,
    memo: s.memo,
    origin: s.origin,
    file_path: s.file_path,
    mime: s.mime,
    size_bytes: s.size_bytes,
    length: s.length,
    folder_id: s.folder_id,
    segment_count: s.segment_count,
    av_segment_count: s.av_segment_count,
    coded: s.segment_count + s.av_segment_count > 0,
    owner: s.owner,
    created_at: s.created_at,
  };
}

/**
 * A memoised lookup of codes by id for presenting segments: reads only the codes a page of segments names
 * (one getCode each), never the whole codebook, so listing 20 segments costs the same with 50 or 50,000 codes.
 */
export function codeLookup(repo: {
  getCode(id: number): { name: string; color: string } | undefined;
}): (id: number) => { name: string; color: string } | undefined {
  const seen = new Map<number, { name: string; color: string } | undefined>();
  return (id) => {
    if (!seen.has(id)) seen.set(id, repo.getCode(id));
    return seen.get(id);
  };
}

/** The fields every coding (text or AV segment) has as tools return it: ids, its code's name and colour, its source. */
export function codingOut(s: { segment_id: number; code_id: number; source_id: number }, code?: { name: string; color: string }) {
  return {
    segment_id: s.segment_id,
    code_id: s.code_id,
    code_name: code?.name ?? null,
    color: code?.color ?? null,
    source_id: s.source_id,
  };
}

/**
 * A text segment as tools return it, with its code's name and colour, and who coded it (issue 14, item 1): `coder`
 * (the owner's coder name) and `coder_role` (`researcher` | `agent`; null for codings from before roles whose
 * session the migration could not place). `coder_role: "agent"` marks an AI coding.
 */
export function segmentOut(s: Segment, code?: { name: string; color: string }) {
  return {
    ...codingOut(s, code),
    start_pos: s.start_pos,
    end_pos: s.end_pos,
    text: s.text,
    memo: s.memo,
    importance: s.importance,
    owner: s.owner,
    session_id: s.session_id,
    coder: s.owner,
    coder_role: s.coder_role ?? null,
    created_at: s.created_at,
  };
}

/** A folder as tools return it. */
export function folderOut(f: Folder & { source_count?: number }) {
  return { folder_id: f.folder_id, name: f.name, parent_id: f.parent_id, source_count: f.source_count, owner: f.owner, created_at: f.created_at };
}
