/**
 * Stage 5c: the dry run of a call about to be held (issue 14 item 5): a call that would fail answers its own
 * error at once instead of being queued, and what it would do is described to the researcher.
 */
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { isoTime } from '../../core/clock';
import type { PathPolicy } from '../../core/pathPolicy';
import type { DomainEvent } from '../../domain/events';
import type { Actor } from '../../domain/model';
import type { HostPort, ToolContext } from '../../tools/context';
import type { AnyTool } from '../../tools/defineTool';
import type { PipelineCore } from './core';
import { pathPolicy } from './paths';
import { roleOf } from './provenance';
import { StageFailure } from './stageFailure';
import type { Caller, DryRunOutcome } from './types';

/** A tool's dry-run mode ({@link ToolDef.dryRun}): its own, else `validate` when it works outside the database (prepare, paths), else `full`. */
export function dryRunMode(tool: AnyTool): 'full' | 'validate' | 'none' {
  return tool.dryRun ?? (tool.prepare || tool.paths ? 'validate' : 'full');
}

/**
 * Stage 5c: the dry run of a call about to be held ({@link dryRunMode}). `full`: the tool runs against the
 * open project inside a transaction that is always rolled back (OpenProject.dryRun: nothing journaled, no
 * event stored or published, no snapshot; caches keyed by the write generation are dropped), with a host
 * that navigates nowhere; returns what it would return and raise. `validate`: the files its read paths name
 * must exist. `none`, no project, or a host without dry runs: nothing checked (undefined).
 * Errors: the tool's own (the call would fail now: it is not queued); TOOL_EXECUTION_ERROR for an
 * unexpected failure of the tool.
 */
export function dryRun(core: PipelineCore, tool: AnyTool, input: unknown, caller: Caller, paths = pathPolicy(core, caller)): DryRunOutcome | undefined {
  const mode = dryRunMode(tool);
  if (mode === 'none') return undefined;
  if (mode === 'validate') {
    checkFilesExist(tool, input, paths);
    return undefined;
  }
  const project = core.opts.project();
  if (!project?.dryRun) return undefined;
  const host = core.opts.host;
  const quietHost: HostPort = {
    mode: host.mode,
    currentScreen: () => host.currentScreen(),
    navigate: (t) => ({ navigated: false, detail: `dry run: "${t.source_name}" was not opened` }),
    transcriptionEndpoint: host.transcriptionEndpoint,
    allowedRoots: () => host.allowedRoots?.() ?? [],
  };
  const actor: Actor = { user: caller.user, role: roleOf(caller), session_id: caller.session_id, client_type: caller.client_type, can_approve: false };
  const raised: DomainEvent[] = [];
  const ctx: ToolContext = {
    project,
    domain: { repo: project.repo, events: { emit: (e) => void raised.push(e) }, actor, now: isoTime(core.clock.now()) },
    actor,
    host: quietHost,
    clock: core.clock,
    progress: () => undefined,
    paths,
  };
  const data = project.dryRun(() => tool.run(ctx, input, undefined));
  return { data, events: raised };
}

/**
 * The `validate` dry run: every absolute path a tool reads ({@link ToolDef.paths}, access `read`) names an
 * existing file. Relative paths are left to the tool (it refuses them with its own message). Errors: the
 * path's `missing` code, else its `code`, naming the path.
 */
function checkFilesExist(tool: AnyTool, input: unknown, policy: PathPolicy): void {
  for (const p of tool.paths ?? []) {
    const value = (input as Record<string, unknown> | null)?.[p.arg];
    if (p.access !== 'read' || typeof value !== 'string' || !nodePath.isAbsolute(value)) continue;
    const real = policy.restricted ? policy.check(value, 'read', p.code) : value;
    let isFile: boolean;
    try {
      isFile = fs.statSync(real).isFile();
    } catch {
      isFile = false;
    }
    if (!isFile) throw new StageFailure(p.missing ?? p.code, `${p.arg}: no file at "${value}"; nothing was queued for approval`, { path: value });
  }
}
