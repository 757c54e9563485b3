import { z } from 'zod';
import { isLead, MAX_CODER_NAME, readScopeFor, setBlindCoding, teamSettingsOf, type TeamSettings } from '../domain/teamSettings';
import { defineTool } from './defineTool';
import type { ToolContext } from './context';
import { args, text } from './schemas';

/**
 * Blind coding (issue 16 item 5; src/domain/teamSettings.ts): the researcher switches it on and names the lead;
 * while it is on every coder (a researcher's coder name, another human coder entered through the reviewer token, an
 * agent) sees only their own codings, the lead sees all and ends it to reconcile.
 */

/** The setting and what it means for the caller: `you.sees` is `all` or `own_codings`. */
function settingsOut(ctx: ToolContext, s: TeamSettings) {
  const caller = { user: ctx.actor.user, role: ctx.actor.role };
  const scope = readScopeFor(s, caller);
  return {
    blind_coding: s.blind,
    lead: s.lead,
    blind_since: s.blind_since,
    updated_at: s.updated_at,
    updated_by: s.updated_by,
    you: { coder: ctx.actor.user, coder_role: ctx.actor.role ?? 'researcher', is_lead: isLead(s, caller), sees: scope === null ? 'all' : 'own_codings' },
  };
}

const SETTINGS_RETURNS = 'Returns {blind_coding, lead, blind_since, updated_at, updated_by, you: {coder, coder_role, is_lead, sees: "all" | "own_codings"}}.';

export const setBlindCodingTool = defineTool({
  name: 'set_blind_coding',
  group: 'project',
  title: 'Set Blind Coding',
  description:
    'Researcher only. Switch blind coding on or off for the whole project (a team setting stored in the project). While it is on, each coder ' +
    '(the researcher, another human coder, each agent by its coder name) sees only their own codings: list_segments, list_segments_for_source, ' +
    "retrieve_segments, search hits, code and source counts, and in VS Code the Codes tree and the editor. The lead (a researcher's coder name; " +
    "default: the caller, or the lead already set) sees everyone's and ends blind coding to reconcile (enabled false, or end_blind_coding); " +
    'nobody else may end it or change the lead. ' +
    SETTINGS_RETURNS +
    ' Errors: INVALID_ARGUMENTS, APPROVAL_FORBIDDEN (an agent; ending it or changing the lead when you are not the lead).',
  input: args({
    enabled: z.boolean().describe('true: blind coding on; false: off (the lead reconciles)'),
    lead: text(MAX_CODER_NAME, 1).optional().describe("the lead's coder name, not blank (sees all, ends blind coding); default: you, or the lead already set"),
  }),
  effect: 'modify',
  trust: 'guidance',
  researcherOnly: true,
  dryRun: 'none',
  run: (ctx, input) => settingsOut(ctx, setBlindCoding(ctx.domain.repo, { user: ctx.actor.user, role: ctx.actor.role }, input, ctx.domain.now)),
});

export const endBlindCodingTool = defineTool({
  name: 'end_blind_coding',
  group: 'project',
  title: 'End Blind Coding',
  description:
    'Researcher only: the lead ends blind coding to reconcile; every coder sees every coding again (the same as set_blind_coding with enabled false). ' +
    SETTINGS_RETURNS +
    ' Errors: APPROVAL_FORBIDDEN (an agent, or not the lead).',
  input: args({}),
  effect: 'modify',
  trust: 'guidance',
  researcherOnly: true,
  dryRun: 'none',
  run: (ctx) => settingsOut(ctx, setBlindCoding(ctx.domain.repo, { user: ctx.actor.user, role: ctx.actor.role }, { enabled: false }, ctx.domain.now)),
});

export const getTeamSettingsTool = defineTool({
  name: 'get_team_settings',
  group: 'project',
  title: 'Get Team Settings',
  description:
    "The project's team setting: whether blind coding is on, who leads, and what you see (all codings, or only your own while blind coding is on and you are not the lead). " +
    SETTINGS_RETURNS,
  input: args({}),
  effect: 'read',
  trust: 'read',
  run: (ctx) => settingsOut(ctx, teamSettingsOf(ctx.domain.repo)),
});

/** The team tools, in registry order. */
export const TEAM_TOOLS = [setBlindCodingTool, endBlindCodingTool, getTeamSettingsTool];
