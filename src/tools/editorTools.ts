import { z } from 'zod';
import { applySourceEdits, reconcileSourceText } from '../domain/sourceEdits';
import { defineTool } from './defineTool';
import { args, id, position, text } from './schemas';

/**
 * Tools of the editor's own bookkeeping (audience `editor`): they run through the one pipeline (journal,
 * events, audit) for the researcher's session, and no agent surface lists them.
 */
export const applySourceEditsTool = defineTool({
  name: 'apply_source_edits',
  group: 'source',
  title: 'Apply Editor Edits to a Source',
  description:
    "Mirror edits made in the editor to a source's stored text and move its coded segments with them. Edits apply in order, each in the " +
    'coordinates the previous left (code points). Returns {length, moved, resized, removed}. Errors: SOURCE_NOT_FOUND, INVALID_POSITION, INVALID_ARGUMENTS.',
  input: args({
    source_id: id('the source'),
    edits: z
      .array(args({ start_pos: position('start of the replaced range'), end_pos: position('end of the replaced range'), text: text(50_000_000) }))
      .min(1)
      .max(10_000),
    expected_length: z.number().int().min(0).optional().describe("the editor's text length in code points after the edits (a drift check)"),
  }),
  effect: 'modify',
  trust: 'apply_code',
  audience: 'editor',
  run: (ctx, input) => ({ source_id: input.source_id, ...applySourceEdits(ctx.domain, input.source_id, input.edits, input.expected_length) }),
});

export const reconcileSourceTextTool = defineTool({
  name: 'reconcile_source_text',
  group: 'source',
  title: 'Reconcile a Source Changed Outside the Editor',
  description:
    "Replace a source's stored text with its file's current text and re-anchor its segments by their quoted text; segments that cannot be " +
    'found are kept aside as orphans and returned. Returns {kept, relocated, orphaned}. Errors: SOURCE_NOT_FOUND.',
  input: args({ source_id: id('the source'), text: text(50_000_000).describe('the new full text') }),
  effect: 'modify',
  trust: 'apply_code',
  audience: 'editor',
  run: (ctx, input) => ({ source_id: input.source_id, ...reconcileSourceText(ctx.domain, input.source_id, input.text) }),
});

/** undo_agent_action is a registry tool for the researcher since issue 14 (src/tools/undoTools.ts); re-exported for the Activity view. */
export { undoAgentActionTool } from './undoTools';

/** The editor-only tools. */
export const EDITOR_TOOLS = [applySourceEditsTool, reconcileSourceTextTool];
