/**
 * The memo cache of reads (ToolDef.memo): a read's result per input, kept for one write generation of the
 * open project and per read scope (blind coding).
 */
import { shareResult } from '../../core/sharedResult';
import { scopeKey } from '../../domain/teamSettings';
import type { OpenProject, ToolContext } from '../../tools/context';
import type { AnyTool } from '../../tools/defineTool';

/** Most inputs one memoized read keeps per project and write generation (ToolDef.memo). */
export const MEMO_ENTRIES = 64;

/** The memoized results of one project at one write generation, by tool, read scope and input. */
export interface MemoTable {
  generation: number;
  results: Map<string, unknown>;
}

/**
 * A memoized read (ToolDef.memo): the result of `tool` for `input` made at the project's current write
 * generation, else a fresh run, kept (deep-frozen, {@link shareResult}) until the generation changes. At
 * most {@link MEMO_ENTRIES} inputs per project; without a generation (a project port that has none) it
 * always runs.
 */
export function memoRead(memos: WeakMap<OpenProject, MemoTable>, project: OpenProject | null, tool: AnyTool, input: unknown, ctx: ToolContext): unknown {
  const generation = project?.writeGeneration;
  if (!project || generation === undefined) return tool.run(ctx, input, undefined);
  let memo = memos.get(project);
  if (memo?.generation !== generation) {
    memo = { generation, results: new Map() };
    memos.set(project, memo);
  }
  const key = `${tool.name}\u0000${scopeKey(ctx.scope ?? null)}\u0000${JSON.stringify(input)}`;
  if (memo.results.has(key)) return memo.results.get(key);
  const data = shareResult(tool.run(ctx, input, undefined));
  // the generation is read again: a read never writes, but a tool that did would not be cached stale
  if (project.writeGeneration === generation) {
    if (memo.results.size >= MEMO_ENTRIES) memo.results.clear();
    memo.results.set(key, data);
  }
  return data;
}
