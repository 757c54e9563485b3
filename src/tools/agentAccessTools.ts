import { z } from 'zod';
import { ToolError } from '../core/errors';
import type { AgentAccessKind, AgentAccessRule } from '../domain/ports';
import { defineTool } from './defineTool';
import { args, id } from './schemas';

/**
 * Sources closed to agents (issue 14 item 11): the researcher closes a source, a folder or a case to every
 * agent or to named agents; the pipeline then refuses (SOURCE_CLOSED) or redacts every agent read of it
 * (src/agent/agentAccess.ts). Stored in table `agent_access` (migration 15).
 */

/** An agent's name as set_agent_access takes it: 1-100 characters, not blank. */
const agentName = z.string().trim().min(1, { error: 'an agent name must not be empty' }).max(100, { error: 'an agent name is at most 100 characters' });

export const setAgentAccessTool = defineTool({
  name: 'set_agent_access',
  group: 'source',
  title: 'Set Agent Access',
  description:
    'Researcher only. Close a source, a folder (its sources and those of its sub-folders) or a case (its member sources and the sources of its ranges) ' +
    'to agents, or open it again. Name exactly one of source_id, folder_id, case_id. access "closed" with agents (names) closes it to those agents ' +
    'only, without agents to every agent; it replaces an earlier rule of the same target. access "open" without agents deletes the rule; with ' +
    'agents it removes those names from a rule that names agents. While closed, an agent that names the source (or a segment of it) gets ' +
    'SOURCE_CLOSED (403), may not export, and sees "[closed to agents: source "..."]" instead of its words everywhere else; the researcher is ' +
    'unaffected. Returns {target_kind, target_id, target_name, access, agents, closed_source_ids} (agents null: every agent; closed_source_ids: ' +
    'every source closed by any rule now). Errors: INVALID_ARGUMENTS (not exactly one target; opening a rule for every agent for some agents only), ' +
    'SOURCE_NOT_FOUND, FOLDER_NOT_FOUND, CASE_NOT_FOUND, APPROVAL_FORBIDDEN (called by an agent).',
  input: args({
    source_id: id('the source to close or open').optional(),
    folder_id: id('the folder to close or open (with its sub-folders)').optional(),
    case_id: id('the case to close or open').optional(),
    access: z.enum(['closed', 'open']).describe('"closed": agents may not read it; "open": they may again'),
    agents: z
      .array(agentName)
      .min(1, { error: 'agents, when given, names at least one agent' })
      .max(100)
      .optional()
      .describe('agent names (omit: every agent)'),
  }),
  effect: 'modify',
  trust: 'guidance',
  researcherOnly: true,
  dryRun: 'none',
  run: (ctx, input) => {
    const repo = ctx.domain.repo;
    const targets = (
      [
        ['source', input.source_id],
        ['folder', input.folder_id],
        ['case', input.case_id],
      ] as const
    ).filter((t) => t[1] !== undefined);
    if (targets.length !== 1)
      throw new ToolError(
        'INVALID_ARGUMENTS',
        `set_agent_access names exactly one of source_id, folder_id, case_id (got ${targets.length === 0 ? 'none' : targets.map((t) => `${t[0]}_id`).join(' and ')})`,
      );
    const [kind, targetId] = targets[0] as readonly [AgentAccessKind, number];
    const name = kind === 'source' ? repo.getSource(targetId)?.name : kind === 'folder' ? repo.getFolder(targetId)?.name : repo.getCase(targetId)?.name;
    if (name === undefined) {
      const code = kind === 'source' ? 'SOURCE_NOT_FOUND' : kind === 'folder' ? 'FOLDER_NOT_FOUND' : 'CASE_NOT_FOUND';
      throw new ToolError(code, `No ${kind} with ${kind}_id ${targetId}. list_${kind === 'case' ? 'cases' : `${kind}s`} shows them.`);
    }
    const agents = input.agents ? [...new Set(input.agents)] : null;
    const existing = repo.listAgentAccess().find((r) => r.target_kind === kind && r.target_id === targetId);
    let result: { access: 'closed' | 'open'; agents: string[] | null };
    if (input.access === 'closed') {
      repo.setAgentAccess(kind, targetId, 'closed', agents, ctx.actor.user, ctx.domain.now);
      result = { access: 'closed', agents };
    } else if (agents === null || !existing) {
      repo.setAgentAccess(kind, targetId, 'open', null, ctx.actor.user, ctx.domain.now);
      result = { access: 'open', agents: null };
    } else if (existing.agents === null) {
      throw new ToolError(
        'INVALID_ARGUMENTS',
        `${kind} "${name}" is closed to every agent; open it for every agent (omit agents), or close it to named agents instead (access "closed" with the names that stay shut out)`,
      );
    } else {
      const left = existing.agents.filter((a) => !agents.includes(a));
      if (left.length === 0) {
        repo.setAgentAccess(kind, targetId, 'open', null, ctx.actor.user, ctx.domain.now);
        result = { access: 'open', agents: null };
      } else {
        repo.setAgentAccess(kind, targetId, 'closed', left, ctx.actor.user, ctx.domain.now);
        result = { access: 'closed', agents: left };
      }
    }
    const closedSourceIds = [...new Set(repo.listClosedSources().map((r) => r.source_id))];
    return { target_kind: kind, target_id: targetId, target_name: name, ...result, closed_source_ids: closedSourceIds };
  },
});

export const getAgentAccessTool = defineTool({
  name: 'get_agent_access',
  group: 'source',
  title: 'Get Agent Access',
  description:
    'What the researcher closed to agents: the rules (a source, a folder with its sub-folders, a case) and every source they close. Returns ' +
    '{rules: [{target_kind, target_id, target_name, access: "closed", agents (null: every agent), closed_by, closed_at}], ' +
    'sources: [{source_id, source_name, agents, via: [{kind, id}]}]}. An agent that reads a closed source gets SOURCE_CLOSED or a marker instead of its words.',
  input: args({}),
  effect: 'read',
  trust: 'read',
  run: (ctx) => {
    const repo = ctx.domain.repo;
    const rules = repo.listAgentAccess().map((r: AgentAccessRule) => ({
      target_kind: r.target_kind,
      target_id: r.target_id,
      target_name: r.target_name,
      access: r.access,
      agents: r.agents,
      closed_by: r.set_by,
      closed_at: r.set_at,
    }));
    const sources = new Map<number, { source_id: number; source_name: string; agents: string[] | null; via: { kind: AgentAccessKind; id: number }[] }>();
    for (const r of repo.listClosedSources()) {
      let s = sources.get(r.source_id);
      if (!s) sources.set(r.source_id, (s = { source_id: r.source_id, source_name: r.source_name, agents: [], via: [] }));
      // closed to every agent by any rule: every agent; else the union of the names
      s.agents = s.agents === null || r.agents === null ? null : [...new Set([...s.agents, ...r.agents])];
      s.via.push({ kind: r.via_kind, id: r.via_id });
    }
    return { count: rules.length, rules, sources: [...sources.values()] };
  },
});
