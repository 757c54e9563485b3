/**
 * Erasing a source from the project's version history (issue 15, item 9; erase_source).
 *
 * Every snapshot is rewritten without the source: its text file (`sources/<id>.txt`) is left out, the rows
 * keyed by it (`"source_id": <id>` in any table, its own row of `tables/sources.jsonl`, the provenance of its
 * segments) are dropped, and its text is redacted wherever else a table holds it (a code suggestion's sample
 * contexts, a report's result). Commit messages, authors and dates are kept; commits before the source
 * existed keep their ids (same tree, same parents). Then the reflogs are expired and every object that is no
 * longer reachable is dropped ({@link pruneHistory}), so no git object holds the text.
 *
 * The rewrite streams git's own export format: `git fast-export --no-data` (commits with their file changes,
 * blobs by id) is edited line by line, the dump files that change are read with one `git cat-file --batch`
 * and written as new blobs, and `git fast-import --force` writes the new commits and moves the branch (see
 * git-fast-export(1), git-fast-import(1); the approach of git-filter-repo, without its Python dependency).
 * Only the blobs of changed table files are read and written, each once, whatever the number of snapshots.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ToolError } from '../core/errors';
import type { HistoryErasureRequest, HistoryErasureResult } from '../domain/erasure';
import { gitDirOf, gitEnvironment } from './historyRepo';

/**
 * Tables whose rows hold other sources' texts (or no text): their rows of the erased source are dropped and
 * the rest is left exactly as it is, never searched for the text (another participant's identical words
 * stay theirs).
 */
const KEYED_TABLES: ReadonlySet<string> = new Set([
  'sources',
  'segments',
  'av_segments',
  'orphan_segments',
  'case_segments',
  'case_sources',
  'source_attributes',
  'source_metadata_hints',
  'segment_provenance',
  'exchange_guids',
  'meta',
]);

/** The erased source as the dump transform needs it. */
export interface DumpErasure extends HistoryErasureRequest {
  /** ids of the text and AV segments, for segment_provenance */
  segmentIdSet?: ReadonlySet<number>;
}

/** The table a dump path holds (`tables/<name>.jsonl`), or null. */
export function tableOfPath(p: string): string | null {
  const m = /^tables\/([^/]+)\.jsonl$/.exec(p);
  return m ? (m[1] as string) : null;
}

/** True when `p` is the erased source's text file in the dump. */
export function isErasedTextPath(p: string, sourceId: number): boolean {
  return p === `sources/${sourceId}.txt`;
}

/**
 * One table file of the dump (canonical JSONL, src/vcs/canonicalDump.ts) without the erased source: its rows
 * dropped (by `"source_id":<id>`, by `"id":<id>` in `sources`, by `"segment_id"` in `segment_provenance`), and in
 * tables not in KEYED_TABLES every row whose values hold its text redacted. Returns the new content, or null
 * when nothing changes. Unchanged lines keep their bytes.
 */
export function eraseFromTableFile(table: string, content: string, e: DumpErasure): string | null {
  if (content.length === 0) return null;
  const id = e.source_id;
  const segIds = e.segmentIdSet ?? new Set(e.segment_ids);
  const keyed = `"source_id":${id}`;
  const own = `{"id":${id}`;
  const provenance = /^\{"segment_id":(\d+)[,}]/;
  const scan = !KEYED_TABLES.has(table);
  // fast path: a keyed table without the erased source's key is unchanged
  if (!scan && table !== 'sources' && table !== 'segment_provenance' && !content.includes(keyed)) return null;
  if (table === 'sources' && !content.includes(own)) return null;
  const lines = content.split('\n');
  let changed = false;
  const out: string[] = [];
  for (const line of lines) {
    if (line.length === 0) {
      out.push(line);
      continue;
    }
    if (table === 'sources' ? line.startsWith(`${own},`) || line.startsWith(`${own}}`) : hasKey(line, keyed)) {
      changed = true;
      continue;
    }
    if (table === 'segment_provenance') {
      const m = provenance.exec(line);
      if (m && segIds.has(Number(m[1]))) {
        changed = true;
        continue;
      }
    }
    if (scan) {
      let row: unknown;
      try {
        row = JSON.parse(line);
      } catch {
        out.push(line);
        continue;
      }
      const r = e.redactor.redactValue(row);
      if (r.changed) {
        changed = true;
        out.push(JSON.stringify(r.value));
        continue;
      }
    }
    out.push(line);
  }
  return changed ? out.join('\n') : null;
}

/**
 * The fast path of {@link eraseFromTableFile} for a table whose rows are keyed by source (KEYED_TABLES, not
 * `segment_provenance`), on the file's bytes: the lines holding `"source_id":<id>,` or `"source_id":<id>}` (for
 * `sources`: starting with `{"id":<id>,` or `{"id":<id>}`) cut out with `Buffer#indexOf`, nothing decoded.
 * Returns null when no line matches. Same result as the string path, byte for byte.
 */
export function dropKeyedRows(table: string, content: Buffer, sourceId: number): Buffer | null {
  const patterns = table === 'sources' ? [`\n{"id":${sourceId},`, `\n{"id":${sourceId}}`] : [`"source_id":${sourceId},`, `"source_id":${sourceId}}`];
  const ranges: [number, number][] = [];
  for (const p of patterns) {
    const needle = Buffer.from(p, 'utf8');
    // the first line has no newline before it: match it as if it had one
    if (table === 'sources' && content.subarray(0, needle.length - 1).equals(needle.subarray(1))) ranges.push(lineAround(content, 0));
    for (let at = content.indexOf(needle); at >= 0; at = content.indexOf(needle, at + 1)) ranges.push(lineAround(content, table === 'sources' ? at + 1 : at));
  }
  if (ranges.length === 0) return null;
  ranges.sort((a, b) => a[0] - b[0]);
  const parts: Buffer[] = [];
  let from = 0;
  for (const [start, end] of ranges) {
    if (start < from) continue; // the same line matched twice
    parts.push(content.subarray(from, start));
    from = end;
  }
  parts.push(content.subarray(from));
  return Buffer.concat(parts);
}

/** The line of `content` holding byte `at`: [its start, the byte after its newline). */
function lineAround(content: Buffer, at: number): [number, number] {
  // (lastIndexOf with a negative offset would count from the end)
  const start = at === 0 ? 0 : content.lastIndexOf(0x0a, at - 1) + 1;
  const nl = content.indexOf(0x0a, at);
  return [start, nl < 0 ? content.length : nl + 1];
}

/** The new bytes of table file `content` without the erased source, or null when unchanged (see {@link eraseFromTableFile}). */
export function eraseFromTableBytes(table: string, content: Buffer, e: DumpErasure): Buffer | null {
  if (KEYED_TABLES.has(table) && table !== 'segment_provenance' && table !== 'meta' && table !== 'exchange_guids')
    return dropKeyedRows(table, content, e.source_id);
  const next = eraseFromTableFile(table, content.toString('utf8'), e);
  return next === null ? null : Buffer.from(next, 'utf8');
}

/** True when `line` has the column `"source_id":<id>` (followed by `,` or `}`; a string value never holds an unescaped quote). */
function hasKey(line: string, keyed: string): boolean {
  let at = line.indexOf(keyed);
  while (at >= 0) {
    const next = line.charCodeAt(at + keyed.length);
    if (next === 0x2c /* , */ || next === 0x7d /* } */) return true;
    at = line.indexOf(keyed, at + 1);
  }
  return false;
}

/**
 * A whole dump (path -> content, as canonicalDump gives it) without the erased source: used for the snapshots
 * taken while an erasure is under way, so none of them brings the text back.
 */
export function eraseFromDump(files: ReadonlyMap<string, string>, e: DumpErasure): Map<string, string> {
  const out = new Map<string, string>();
  for (const [p, content] of files) {
    if (isErasedTextPath(p, e.source_id)) continue;
    const table = tableOfPath(p);
    out.set(p, table ? (eraseFromTableFile(table, content, e) ?? content) : content);
  }
  return out;
}

/** A git child process of the history at `dir`; resolves with its stdout when it exits 0, else TOOL_EXECUTION_ERROR. */
function git(dir: string, args: string[], input?: (stdin: NodeJS.WritableStream) => Promise<void>, onStdout?: (chunk: Buffer) => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: dir, env: gitEnvironment(dir), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => (onStdout ? onStdout(d) : out.push(d)));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => reject(new ToolError('TOOL_EXECUTION_ERROR', `git ${args[0]} could not run: ${e.message}`)));
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new ToolError('TOOL_EXECUTION_ERROR', `git ${args[0]} failed in ${dir} (exit ${code}): ${err.trim().slice(0, 500)}`));
    });
    child.stdin.on('error', () => undefined); // a failing child closes its stdin; the exit code reports it
    if (input)
      input(child.stdin).then(
        () => child.stdin.end(),
        (e: unknown) => {
          child.kill();
          reject(e);
        },
      );
    else child.stdin.end();
  });
}

/** Writes `data` to `stream`, waiting for it to drain when its buffer is full. */
function write(stream: NodeJS.WritableStream, data: Buffer | string): Promise<void> {
  return stream.write(data) ? Promise.resolve() : new Promise((resolve) => stream.once('drain', () => resolve()));
}

/** One `M` line of the export: where it is in the stream, and what it names. */
interface FileChange {
  /** byte offsets of the line in the export (without its newline) */
  start: number;
  end: number;
  mode: string;
  ref: string;
  path: string;
}

/**
 * Parses the file changes (`M <mode> <dataref> <path>`) of a `git fast-export --no-data` stream, skipping
 * every `data <n>` block (commit messages) by its byte count. Paths are never quoted in a Marginalia dump
 * (ASCII names); a quoted path is kept as written and never matches a dump path.
 */
function fileChanges(exp: Buffer): FileChange[] {
  const changes: FileChange[] = [];
  let at = 0;
  while (at < exp.length) {
    let nl = exp.indexOf(0x0a, at);
    if (nl < 0) nl = exp.length;
    const line = exp.toString('utf8', at, nl);
    if (line.startsWith('data ')) {
      const n = Number(line.slice(5));
      at = nl + 1 + n;
      if (exp[at] === 0x0a) at++;
      continue;
    }
    if (line.startsWith('M ')) {
      const m = /^M (\d+) (\S+) (.*)$/.exec(line);
      if (m) changes.push({ start: at, end: nl, mode: m[1] as string, ref: m[2] as string, path: m[3] as string });
    }
    at = nl + 1;
  }
  return changes;
}

/** The highest `mark :<n>` of the export (its commits' marks), so new blob marks never collide. */
function maxMark(exp: Buffer): number {
  let max = 0;
  const re = /^mark :(\d+)$/gm;
  const text = exp.toString('latin1');
  for (let m = re.exec(text); m; m = re.exec(text)) max = Math.max(max, Number(m[1]));
  return max;
}

/** How many blobs read by {@link readBlobs} may wait for their turn (git reads ahead while the last one is written). */
const READ_AHEAD = 2;

/**
 * Reads blobs with one `git cat-file --batch`, handing each to `each` in the order asked, one at a time. git
 * reads ahead by up to {@link READ_AHEAD} blobs while `each` works (its output is paused beyond that), so
 * inflating the next blob overlaps with writing the last one.
 */
function readBlobs(dir: string, ids: readonly string[], each: (index: number, content: Buffer) => Promise<void>): Promise<void> {
  if (ids.length === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['cat-file', '--batch'], { cwd: dir, env: gitEnvironment(dir), stdio: ['pipe', 'pipe', 'pipe'] });
    let buf: Buffer = Buffer.alloc(0);
    // chunks not yet joined onto buf, and how many bytes the next blob needs (joining each chunk would copy a large blob quadratically)
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let need = 0;
    let parsed = 0;
    let index = 0;
    const queue: Buffer[] = [];
    let consuming = false;
    let exited: number | null | undefined;
    let err = '';
    let done = false;
    const finish = (e?: unknown) => {
      if (done) return;
      done = true;
      if (e) {
        child.kill();
        reject(e);
      } else resolve();
    };
    /** Moves every complete blob of `buf` to the queue. */
    const parse = () => {
      for (;;) {
        const nl = buf.indexOf(0x0a);
        if (nl < 0) return;
        const header = buf.toString('latin1', 0, nl);
        const m = /^[0-9a-f]+ blob (\d+)$/.exec(header);
        if (!m) throw new ToolError('TOOL_EXECUTION_ERROR', `git cat-file answered "${header.slice(0, 200)}" for ${ids[parsed]}`);
        const size = Number(m[1]);
        if (buf.length < nl + 1 + size + 1) {
          need = nl + 1 + size + 1;
          return;
        }
        need = 0;
        queue.push(Buffer.from(buf.subarray(nl + 1, nl + 1 + size)));
        parsed++;
        buf = buf.subarray(nl + 1 + size + 1);
      }
    };
    const consume = async () => {
      if (consuming || done) return;
      consuming = true;
      try {
        while (queue.length > 0) {
          const content = queue.shift() as Buffer;
          if (queue.length < READ_AHEAD) child.stdout.resume();
          await each(index++, content);
        }
      } catch (e) {
        finish(e);
        return;
      } finally {
        consuming = false;
      }
      if (index === ids.length) finish();
      else if (exited !== undefined)
        finish(new ToolError('TOOL_EXECUTION_ERROR', `git cat-file returned ${index} of ${ids.length} blobs (exit ${exited}): ${err.trim().slice(0, 300)}`));
    };
    const take = () => {
      try {
        parse();
      } catch (e) {
        finish(e);
        return;
      }
      if (queue.length >= READ_AHEAD) child.stdout.pause();
      void consume();
    };
    child.stdout.on('data', (d: Buffer) => {
      pending.push(d);
      pendingBytes += d.length;
      if (buf.length + pendingBytes < need) return;
      buf = Buffer.concat([buf, ...pending]);
      pending = [];
      pendingBytes = 0;
      take();
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => finish(new ToolError('TOOL_EXECUTION_ERROR', `git cat-file could not run: ${e.message}`)));
    child.on('close', (code) => {
      exited = code;
      if (pending.length > 0) buf = Buffer.concat([buf, ...pending]);
      pending = [];
      take();
    });
    child.stdin.on('error', () => undefined);
    void (async () => {
      for (let i = 0; i < ids.length; i += 1000) await write(child.stdin, ids.slice(i, i + 1000).join('\n') + '\n');
      child.stdin.end();
    })();
  });
}

/**
 * Rewrites the history repository at `dir` (its working tree; the git directory is {@link gitDirOf}) without the erased source, then
 * prunes. Call it only while no other git command runs on the repository (the Snapshotter's queue).
 * Afterwards the index and the working tree match the new HEAD. Errors: TOOL_EXECUTION_ERROR (git missing
 * or failing; before fast-import ends nothing is changed).
 */
export async function eraseFromHistoryRepo(dir: string, request: HistoryErasureRequest): Promise<HistoryErasureResult> {
  const started = performance.now();
  if (!fs.existsSync(gitDirOf(dir))) return { initialized: false, snapshots: 0, snapshots_rewritten: 0, files_rewritten: 0, duration_ms: 0, prune_ms: 0 };
  const e: DumpErasure = { ...request, segmentIdSet: new Set(request.segment_ids) };
  const before = (await git(dir, ['rev-list', '--all'])).toString('latin1').split('\n').filter(Boolean);
  if (before.length === 0)
    return { initialized: true, snapshots: 0, snapshots_rewritten: 0, files_rewritten: 0, duration_ms: performance.now() - started, prune_ms: 0 };
  // packs that exist before the rewrite may hold the text among their objects: pruning must rewrite them
  const packsBefore = packFiles(dir);
  const exp = await git(dir, ['fast-export', '--all', '--no-data', '--signed-tags=strip', '--tag-of-filtered-object=rewrite', '--reencode=no']);
  const changes = fileChanges(exp);
  // the table blobs to read, once per (blob, table), in order of first appearance (consecutive versions of a
  // file follow each other, so fast-import stores each new blob as a delta of the previous one)
  const wanted: { ref: string; table: string }[] = [];
  const seen = new Map<string, number>();
  for (const c of changes) {
    const table = tableOfPath(c.path);
    if (!table || !/^[0-9a-f]{40,64}$/.test(c.ref)) continue;
    const key = `${c.ref}\t${table}`;
    if (!seen.has(key)) {
      seen.set(key, wanted.length);
      wanted.push({ ref: c.ref, table });
    }
  }
  let nextMark = maxMark(exp) + 1;
  const marks = new Map<string, string>(); // `${ref}\t${table}` -> `:mark` of the rewritten blob
  let filesRewritten = 0;
  await git(dir, ['fast-import', '--force', '--quiet'], async (stdin) => {
    await readBlobs(
      dir,
      wanted.map((w) => w.ref),
      async (i, content) => {
        const w = wanted[i]!;
        const bytes = eraseFromTableBytes(w.table, content, e);
        if (bytes === null) return;
        const mark = `:${nextMark++}`;
        marks.set(`${w.ref}\t${w.table}`, mark);
        filesRewritten++;
        await write(stdin, `blob\nmark ${mark}\ndata ${bytes.length}\n`);
        await write(stdin, bytes);
        await write(stdin, '\n');
      },
    );
    // the export itself, with the erased text file's lines left out and rewritten tables pointing at their new blobs
    let at = 0;
    for (const c of changes) {
      const table = tableOfPath(c.path);
      const drop = isErasedTextPath(c.path, e.source_id);
      const mark = table ? marks.get(`${c.ref}\t${table}`) : undefined;
      if (!drop && !mark) continue;
      await write(stdin, exp.subarray(at, c.start));
      if (mark) await write(stdin, `M ${c.mode} ${mark} ${c.path}`);
      at = drop ? c.end + 1 : c.end;
    }
    await write(stdin, exp.subarray(at));
  });
  const ours = new Set(packFiles(dir).filter((f) => !packsBefore.includes(f)));
  const after = (await git(dir, ['rev-list', '--all'])).toString('latin1').split('\n').filter(Boolean);
  const old = new Set(before);
  const rewritten = after.filter((sha) => !old.has(sha)).length;
  // index and working tree to the new HEAD (the erased text file leaves the working tree with the index)
  await git(dir, ['read-tree', '-u', '--reset', 'HEAD']);
  const pruneStarted = performance.now();
  // any pack but the rewrite's own (one from before, or one git's auto-gc wrote meanwhile) may hold old objects
  await pruneHistory(
    dir,
    packFiles(dir).some((f) => !ours.has(f)),
  );
  const now = performance.now();
  return {
    initialized: true,
    snapshots: after.length,
    snapshots_rewritten: rewritten,
    files_rewritten: filesRewritten,
    duration_ms: now - started,
    prune_ms: now - pruneStarted,
  };
}

/**
 * Drops every object no ref reaches: the reflogs expired (they still name the old commits), every reachable
 * object written into one new pack (`git repack -a -d`: the old packs go, with the unreachable objects they
 * held), and the unreachable loose objects deleted (`git prune --expire=now`). This is what `git gc --prune=now`
 * does for unreachable objects, without its delta search over every object not yet stored as a delta
 * (`--window=0`): existing deltas are reused (the rewritten table files come from fast-import as deltas of
 * each other), the rest is stored whole, zlib-compressed. On the bench's 100 MB project with 50 mostly loose
 * snapshots the full `git gc` took several times longer (bench/erasure.ts). `repack` false: the history had no
 * pack before the rewrite (the automatic snapshots leave loose objects until git's own auto-gc packs them), so
 * every old object is a loose one and `git prune` alone drops the unreachable ones; the rewrite's own pack
 * holds only new objects. Errors: TOOL_EXECUTION_ERROR.
 */
export async function pruneHistory(dir: string, repack = true): Promise<void> {
  await git(dir, ['reflog', 'expire', '--expire=now', '--expire-unreachable=now', '--all']);
  if (repack) await git(dir, ['repack', '-a', '-d', '-q', '--window=0']);
  await git(dir, ['prune', '--expire=now']);
}

/** The pack files of the history at `dir` (`objects/pack/*.pack` of its git directory, {@link gitDirOf}). */
export function packFiles(dir: string): string[] {
  try {
    return fs.readdirSync(path.join(gitDirOf(dir), 'objects', 'pack')).filter((f) => f.endsWith('.pack'));
  } catch {
    return [];
  }
}
