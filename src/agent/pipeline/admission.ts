/**
 * Stages 1 to 3 of a call: the session it belongs to, the tool it names, and its arguments validated once
 * against the tool's schema.
 */
import { isToolError } from '../../core/errors';
import { describeInvalidArguments } from '../../tools/argumentErrors';
import type { AnyTool } from '../../tools/defineTool';
import type { Session } from '../sessions';
import type { PipelineCore } from './core';
import { baseListing } from './listing';
import { StageFailure } from './stageFailure';
import type { Caller } from './types';

/**
 * Stage 1: the session the call belongs to. The researcher's local session is created on first use;
 * any other caller must name a live session (adapters create implicit ones for plain HTTP clients).
 * Errors: SESSION_NOT_FOUND, SESSION_EXPIRED (both denied).
 */
export function resolveSession(core: PipelineCore, caller: Caller): Session | undefined {
  const agent = core.opts.agent;
  if (!agent) return undefined;
  try {
    if (caller.client_type === 'LOCAL_UI' && !agent.sessions.get(caller.session_id)) {
      return agent.sessions.create({
        client_type: 'LOCAL_UI',
        client_name: caller.client_name,
        authenticated: true,
        session_id: caller.session_id,
        user_id: caller.user,
      });
    }
    return agent.sessions.touch(caller.session_id);
  } catch (e) {
    if (isToolError(e)) throw new StageFailure(e.code, e.message, e.details, true);
    throw e;
  }
}

/** Stage 2: the tool, or TOOL_NOT_FOUND (editor-only tools exist only for the researcher's own session). */
export function lookupTool(core: PipelineCore, name: string, caller: Caller): AnyTool {
  const tool = core.tools.get(name);
  if (!tool || (tool.audience === 'editor' && caller.client_type !== 'LOCAL_UI'))
    throw new StageFailure('TOOL_NOT_FOUND', `Unknown tool "${name}". GET /tools lists the ${baseListing(core).length} tools.`);
  // researcher-only tools (erase_source): refused to agents before validation and trust, never queued for approval
  if (tool.researcherOnly && core.opts.agent && !caller.researcher) {
    throw new StageFailure(
      'APPROVAL_FORBIDDEN',
      `${tool.name} is the researcher's alone (the VS Code UI, or a client holding the reviewer token); agents cannot call it or ask for it`,
      undefined,
      true,
    );
  }
  return tool;
}

/** Stage 3: validate the arguments once against the tool's schema, or INVALID_ARGUMENTS. */
export function validateInput(tool: AnyTool, args: unknown): unknown {
  const input = args ?? {};
  const parsed = tool.input.safeParse(input);
  if (parsed.success) return parsed.data;
  // messages that say what was expected ("code_id must be a positive integer"), src/tools/argumentErrors.ts
  const { message, issues } = describeInvalidArguments(tool.name, parsed.error.issues, input);
  throw new StageFailure('INVALID_ARGUMENTS', message, { issues });
}
