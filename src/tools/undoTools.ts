import { z } from 'zod';
import { undoAction } from '../domain/undo';
import { redoLast, undoLast } from '../domain/undoRedo';
import { defineTool } from './defineTool';
import { args, text } from './schemas';

/**
 * Undo and redo of the researcher's own actions (issue 13, item 1; src/domain/undoRedo.ts). Researcher only:
 * the pipeline refuses agents with APPROVAL_FORBIDDEN (HTTP 403) before validation and trust, and never
 * queues their call for approval (`researcherOnly`).
 */

const outcome = z.object({
  correlation_id: z.string().describe("the action's correlation id: its events in /events/history carry it"),
  description: z.string().describe("the action in words, e.g. coded 'Food security' in interview-04"),
  changes: z
    .array(z.object({ event_type: z.string(), aggregate_type: z.string(), aggregate_id: z.string(), description: z.string() }))
    .describe('what this call changed, one entry per event it raised'),
});

const COMMON =
  'Supported: coding and removing codings (a removed coding comes back with a new segment_id), segment/code/category/source/case memos, the project briefing, ' +
  'create/rename/recolour/move code, delete an unused code, category create/rename/delete, cases (create, delete, members, attributes), ' +
  'source rename and move, document attributes, folder create/rename/delete. Not undoable: merges, deleting a code with codings, imports, ' +
  "deleting sources, AV codings, snapshot restores; text edits belong to the editor's own undo. ";

export const undoTool = defineTool({
  name: 'undo',
  group: 'core',
  title: 'Undo',
  description:
    "Researcher only (agents get APPROVAL_FORBIDDEN): undo the caller's own most recent action by applying its inverse, recorded as the caller " +
    '(its events carry payload.undo_of). ' +
    COMMON +
    'An action that cannot be undone is refused, not skipped (undo stops there). Refused too when a later change by someone else depends on it ' +
    '(e.g. another coder has coded with a code whose creation would be undone); the message names it and nothing changes. Returns {undone: ' +
    '{correlation_id, description, changes}}. Errors: NOTHING_TO_UNDO, NOT_UNDOABLE (details.reason: unsupported, recorded_before, blocked), ' +
    'APPROVAL_FORBIDDEN.',
  input: args({}),
  effect: 'modify',
  trust: 'delete',
  researcherOnly: true,
  output: z.object({ undone: outcome }),
  run: (ctx) => ({ undone: undoLast(ctx.domain) }),
});

export const redoTool = defineTool({
  name: 'redo',
  group: 'core',
  title: 'Redo',
  description:
    "Researcher only (agents get APPROVAL_FORBIDDEN): redo the caller's most recently undone action, when they have done nothing new since " +
    '(a new action clears redo); its events carry payload.redo_of. Refused when a change by someone else since blocks it. Returns {redone: ' +
    '{correlation_id, description, changes}}. Errors: NOTHING_TO_REDO, NOT_UNDOABLE (details.reason blocked), APPROVAL_FORBIDDEN.',
  input: args({}),
  effect: 'modify',
  trust: 'delete',
  researcherOnly: true,
  output: z.object({ redone: outcome }),
  run: (ctx) => ({ redone: redoLast(ctx.domain) }),
});

/**
 * Undo of an agent's action (issue 14, item 8): a normal registry tool for the researcher on every surface (HTTP,
 * REST, MCP, WebSocket, gRPC, CLI with the reviewer token, and the VS Code Activity view); agents get
 * APPROVAL_FORBIDDEN.
 */
export const undoAgentActionTool = defineTool({
  name: 'undo_agent_action',
  group: 'core',
  title: 'Undo an Agent Action',
  description:
    'Researcher only (agents get APPROVAL_FORBIDDEN): undo an agent\'s action by the correlation id of its events (caused_by.role "agent" in ' +
    "/events/history; its request id when it was approved): an applied code's segment is removed; a created code is deleted with the codings " +
    'its creator made with it. A created code that another coder has coded with since is never deleted: the whole undo is refused with ' +
    'NOT_UNDOABLE (details.reason "blocked", details.coders [{coder, coder_role, codings}] naming them) and nothing changes. Merges and ' +
    'deletions cannot be undone. Returns {undone: [{kind: "code" | "segment", id}]}. Errors: NOT_UNDOABLE, APPROVAL_FORBIDDEN.',
  input: args({ correlation_id: text(200, 1).describe("the action's correlation id (its request id when it was approved)") }),
  effect: 'destroy',
  trust: 'delete',
  researcherOnly: true,
  run: (ctx, input) => undoAction(ctx.domain, input.correlation_id),
});

/** The undo and redo tools. */
export const UNDO_TOOLS = [undoTool, redoTool, undoAgentActionTool];
