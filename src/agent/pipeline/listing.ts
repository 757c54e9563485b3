/**
 * The tool listing (GET /tools, MCP tools/list): every agent-facing tool with its JSON Schema, and for a
 * viewer the trust level that applies to them ({@link trustForViewer}).
 */
import { z } from 'zod';
import type { AnyTool } from '../../tools/defineTool';
import type { PipelineCore } from './core';
import { trustForViewer } from './trust';
import type { Caller, ToolListing, ToolViewer } from './types';

/** JSON Schema (draft 2020-12) of a tool's input, describing what callers send (`io: 'input'`). */
export function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}

/** The listing made for nobody in particular (tools whose audience is agents), built once per pipeline. */
export function baseListing(core: PipelineCore): ToolListing[] {
  core.listing ??= core.opts.tools
    .filter((t) => (t.audience ?? 'agents') === 'agents')
    .map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      group: t.group,
      effect: t.effect,
      trust_category: t.trust,
      inputSchema: toJsonSchema(t.input),
    }));
  return core.listing;
}

/**
 * Every tool with its JSON Schema (draft 2020-12, from `z.toJSONSchema`), in registry order. With `viewer`
 * (issue 14 item 6), each tool also says the trust level that applies to that caller (`trust_level`), and
 * for an agent the description of a tool it would see held ends with what the pending answer looks like.
 */
export function listTools(core: PipelineCore, viewer?: ToolViewer): ToolListing[] {
  const listing = baseListing(core);
  if (!viewer) return listing;
  const agent = core.opts.agent;
  return listing.map((t) => {
    const { trust_level, note } = trustForViewer(agent, core.tools.get(t.name) as AnyTool, viewer);
    return { ...t, trust_level, ...(note ? { description: `${t.description}${note}` } : {}) };
  });
}

/**
 * The viewer of {@link listTools} for `caller`: the researcher, or an agent with its session's own trust
 * floor (`context.trust_level`; auto when the session is unknown). Reads only: touches no session.
 */
export function viewerOf(core: PipelineCore, caller: Caller): ToolViewer {
  if (caller.researcher || !core.opts.agent) return { researcher: true };
  return { researcher: false, floor: core.opts.agent.sessions.get(caller.session_id)?.context.trust_level ?? 'auto' };
}
