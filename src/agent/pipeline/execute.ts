/**
 * Stage 6: prepare a call outside the database, then run it in one store transaction that also stores its
 * events (reads run outside a transaction, memoized ones through the memo cache); blind coding's read scope
 * is applied to the repository a read sees.
 */
import { isoTime } from '../../core/clock';
import { newUuid } from '../../core/ids';
import type { PathPolicy } from '../../core/pathPolicy';
import type { DomainEvent, EventRecord } from '../../domain/events';
import type { Actor } from '../../domain/model';
import { readScopeFor, scopedRepository, teamSettingsOf } from '../../domain/teamSettings';
import type { OpenProject, ToolContext, ToolProgress } from '../../tools/context';
import type { AnyTool } from '../../tools/defineTool';
import { awaitDecision } from './approvalQueue';
import type { PipelineCore } from './core';
import { storeEvents } from './events';
import { memoRead } from './memo';
import { pathPolicy, resolvePaths } from './paths';
import { progressReporter } from './progress';
import { roleOf } from './provenance';
import { StageFailure } from './stageFailure';
import type { Caller } from './types';

/**
 * Stage 6: prepare, then run in one transaction that also stores the call's events. `also` runs in the
 * same transaction after the tool (approvals record their decision there); events it raises with
 * `first` are stored before the tool's own.
 */
export async function execute(
  core: PipelineCore,
  tool: AnyTool,
  input: unknown,
  caller: Caller,
  also?: (raise: (e: DomainEvent, first?: boolean) => void, data: unknown) => void,
  onProgress?: (p: ToolProgress) => void,
  paths: PathPolicy = pathPolicy(core, caller),
): Promise<{ data: unknown; events: EventRecord[] }> {
  const needsProject = tool.needsProject ?? true;
  input = resolvePaths(tool, input, paths);
  const progress = progressReporter(core.logger, tool, caller, onProgress);
  let project = core.opts.project();
  if (needsProject && !project)
    throw new StageFailure(tool.noProjectCode ?? 'NO_PROJECT', 'No project is open. Ask the researcher to open one (Marginalia: Open Project).');
  const prepared = tool.prepare
    ? await tool.prepare(input, {
        progress,
        projectPath: project?.path ?? null,
        vcs: project?.vcs ?? null,
        actor: { user: caller.user, session_id: caller.session_id, client_type: caller.client_type },
        reader: project?.repo ?? null,
        embeddings: core.opts.embeddings ?? null,
        transcriptionEndpoint: core.opts.host.transcriptionEndpoint,
        paths,
        erasure: project ? { store: project.erasure ?? null, history: project.historyErasure ?? null, audit: core.opts.agent?.audit ?? null } : null,
        awaitDecision: (id, ms) => awaitDecision(core, id, ms),
        sessions: core.opts.agent?.sessions ?? null,
      })
    : undefined;
  project = core.opts.project();
  if (needsProject && !project) throw new StageFailure(tool.noProjectCode ?? 'NO_PROJECT', 'The project was closed while the call was prepared.');
  const actor: Actor = {
    user: caller.user,
    role: roleOf(caller),
    session_id: caller.session_id,
    client_type: caller.client_type,
    can_approve: caller.researcher === true || !core.opts.agent,
    ...(caller.approved_by !== undefined ? { approved_by: caller.approved_by } : {}),
  };
  const raised: DomainEvent[] = [];
  const now = core.clock.now();
  // blind coding (src/domain/teamSettings.ts): a read sees only the caller's own codings while it is on
  const scope = project ? readScopeFor(teamSettingsOf(project.repo, project.writeGeneration), actor) : null;
  const repo = (project as OpenProject | null)?.repo as OpenProject['repo'];
  const ctx: ToolContext = {
    project: project as OpenProject,
    domain: {
      repo: tool.effect === 'read' && repo ? scopedRepository(repo, scope) : repo,
      events: { emit: (e) => void raised.push(e) },
      actor,
      now: isoTime(now),
    },
    actor,
    host: core.opts.host,
    clock: core.clock,
    progress,
    paths,
    scope,
  };
  if (!project || (tool.effect === 'read' && !also))
    return { data: tool.memo && !tool.prepare ? memoRead(core.memos, project, tool, input, ctx) : tool.run(ctx, input, prepared), events: [] };
  const correlation = caller.correlation_id ?? newUuid();
  const open = project;
  return open.transaction(() => {
    const data = tool.run(ctx, input, prepared);
    const leading: DomainEvent[] = [];
    also?.((e, first) => void (first ? leading.push(e) : raised.push(e)), data);
    return { data, events: storeEvents(core, open, caller, correlation, now, [...leading, ...raised]) };
  });
}
