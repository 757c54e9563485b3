/**
 * Stage 4b and the paths a call runs with: where a caller's file paths may lie (one {@link PathPolicy} per
 * call, each path resolved once), the check before the trust decision, and the real paths substituted before
 * the tool runs.
 */
import * as nodePath from 'node:path';
import { isToolError } from '../../core/errors';
import { PathPolicy } from '../../core/pathPolicy';
import type { AnyTool } from '../../tools/defineTool';
import type { PipelineCore } from './core';
import { StageFailure } from './stageFailure';
import type { Caller } from './types';

/**
 * Where `caller`'s file paths may lie (docs/agents.md, "File paths"; src/core/pathPolicy.ts):
 * unrestricted for the researcher and without the agent layer; for agents the open project's folder, the
 * host's allowed roots (VS Code workspace folders, `marginalia serve --allow-path`) and
 * `agent_context.allowed_paths` (relative to the project's folder), never writing into its `.marginalia`.
 */
export function pathPolicy(core: PipelineCore, caller: Caller): PathPolicy {
  const agent = core.opts.agent;
  if (!agent || caller.researcher) return PathPolicy.unrestricted();
  const projectPath = core.opts.project()?.path;
  const allowed = agent.config().allowed_paths;
  return PathPolicy.deferred(() => {
    const projectDir = projectPath ? nodePath.dirname(nodePath.resolve(projectPath)) : undefined;
    const roots = [...(projectDir ? [projectDir] : []), ...(core.opts.host.allowedRoots?.() ?? []), ...allowed];
    return { roots, base: projectDir, noWrite: projectDir ? [nodePath.join(projectDir, '.marginalia')] : [] };
  });
}

/**
 * Stage 4b: the file paths a tool's arguments name ({@link ToolDef.paths}) against `policy`, before the
 * trust decision, so a refused path is never queued for approval. Errors: the tool's own code (denied).
 */
export function checkPaths(tool: AnyTool, input: unknown, policy: PathPolicy): void {
  if (!tool.paths || !policy.restricted) return;
  for (const p of tool.paths) {
    const value = (input as Record<string, unknown> | null)?.[p.arg];
    if (typeof value !== 'string') continue;
    try {
      policy.check(value, p.access, p.code);
    } catch (e) {
      if (isToolError(e)) throw new StageFailure(e.code, e.message, e.details, true);
      throw e;
    }
  }
}

/**
 * The arguments a call runs with under `policy`: each path argument checked again (it may have changed
 * since the request was queued) and replaced by its real path, so the tool reads or writes exactly what
 * was checked. Unrestricted: `input` unchanged. Errors: the tool's own code (denied).
 */
export function resolvePaths(tool: AnyTool, input: unknown, policy: PathPolicy): unknown {
  if (!tool.paths || !policy.restricted || input === null || typeof input !== 'object') return input;
  checkPaths(tool, input, policy);
  const out: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const p of tool.paths) {
    const value = out[p.arg];
    if (typeof value === 'string') out[p.arg] = policy.check(value, p.access, p.code);
  }
  return out;
}
