import { z } from 'zod';
import { ToolError } from '../core/errors';
import type { Actor } from '../domain/model';
import type { PreparedRestore, VersionControl } from '../domain/versionControl';
import { defineTool, type PrepareContext } from './defineTool';
import { args } from './schemas';

/**
 * Version control (HTTP spec, section 4, "Version control"; issue 6, item 4). The history is a git
 * repository of its own at `<project dir>/.marginalia/history` holding a canonical text dump of the project.
 * The git work is asynchronous, so it happens in `prepare` through the `VersionControl` port the
 * composition root supplies (`PrepareContext.vcs`); the one project write, restoring rows, happens in `run`
 * inside the store transaction (`OpenProject.vcs.applyRestore`). Tools never import vcs or the store.
 */

/** The default of list_snapshots' `limit` (the spec's). */
export const DEFAULT_SNAPSHOT_LIMIT = 20;
const MAX_SNAPSHOT_LIMIT = 1000;

/** A git revision naming a snapshot: a SHA (full or abbreviated), HEAD, HEAD~N, HEAD^; never an option. */
function ref(what: string) {
  return z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._/~^@{}-]*$/, 'must be a snapshot ref: a commit SHA (full or abbreviated), HEAD or HEAD~N')
    .describe(`${what}: a snapshot's ref or short_ref from list_snapshots, or HEAD, HEAD~1, ...`);
}

const NOT_INITIALIZED = 'Version control is not available for this project in this host.';

/** The port from the prepare context, or VERSION_CONTROL_NOT_INITIALIZED when the host supplies none. */
function vcsOf(ctx: PrepareContext): VersionControl {
  if (!ctx.vcs) throw new ToolError('VERSION_CONTROL_NOT_INITIALIZED', NOT_INITIALIZED);
  return ctx.vcs;
}

/** The caller as the prepare context names it (hosts that do not pass it get an anonymous actor). */
function actorOf(ctx: PrepareContext): Actor {
  return ctx.actor ?? { user: 'unknown', session_id: 'unknown', client_type: 'CUSTOM' };
}

export const initializeVersionControlTool = defineTool({
  name: 'initialize_version_control',
  group: 'version_control',
  title: 'Initialize Version Control',
  description:
    'Start the project history: creates .marginalia/history beside the project as a git repository of its own (never the workspace repository), ' +
    'writes a canonical text dump of the project (one sorted JSONL file per table, each source text as a file) and commits it as "Initial snapshot". ' +
    "From then on every change is snapshotted automatically (a couple of seconds after the last change), with a title saying what changed in words, authored by whoever made the change (the researcher's coder name or the agent's name). " +
    'Calling it again is harmless: it snapshots the current state if it changed and returns created false. ' +
    "Returns {initialized: true, created, history_dir, ref, short_ref, file_count}. Errors: VERSION_CONTROL_NOT_INITIALIZED (the folder's history belongs to another project file), " +
    'TOOL_EXECUTION_ERROR (git is missing or failed), NO_PROJECT.',
  input: args({}),
  effect: 'create',
  trust: 'create',
  prepare: (_input, ctx) => vcsOf(ctx).initialize(actorOf(ctx)),
  run: (_ctx, _input, prepared) => ({ initialized: true, ...prepared }),
});

export const listSnapshotsTool = defineTool({
  name: 'list_snapshots',
  group: 'version_control',
  title: 'List Snapshots',
  description:
    `The project history, newest first: at most limit (default ${DEFAULT_SNAPSHOT_LIMIT}) snapshots. ` +
    'Returns {count, snapshots: [{ref (commit SHA), short_ref, message (what changed, in words, e.g. "Coded 3 passages with \'Belonging\' in Interview A"), ' +
    'author (the researcher\'s coder name or the agent\'s name; "Marginalia" for the first), by_agent (true when an agent made it), date (ISO 8601 UTC)}]}. ' +
    'Use a ref with view_diff or restore_snapshot. Errors: VERSION_CONTROL_NOT_INITIALIZED (call initialize_version_control first), NO_PROJECT.',
  input: args({
    limit: z.number().int().min(1).max(MAX_SNAPSHOT_LIMIT).optional().describe(`most snapshots to return, newest first (default ${DEFAULT_SNAPSHOT_LIMIT})`),
  }),
  effect: 'read',
  trust: 'read',
  prepare: (input, ctx) => vcsOf(ctx).listSnapshots(input.limit ?? DEFAULT_SNAPSHOT_LIMIT),
  run: (_ctx, _input, snapshots) => ({ count: snapshots.length, snapshots }),
});

export const viewDiffTool = defineTool({
  name: 'view_diff',
  group: 'version_control',
  title: 'View Diff',
  description:
    'What changed between two snapshots (from_ref to to_ref; refs from list_snapshots, or HEAD~1 and HEAD for the last change). ' +
    'Returns {from_ref, to_ref, codes, categories, folders, sources, cases: {added, removed, changed (names), renamed: [{from, to}]}, ' +
    'segments, av_segments: {added, removed, changed (counts), added_ids, removed_ids, changed_ids}, tables: {table: {added, removed, changed}} for every table that differs, ' +
    'in_words (the same for a person: [{heading, lines}], e.g. {heading: "Passages coded (2)", lines: ["\'Trust\' in interview-04: \\"Nobody trusted the council…\\""]}), ' +
    'raw_diff (the git diff of the two dumps, cut at 200,000 characters), raw_diff_truncated}. Writes nothing. ' +
    'Errors: SNAPSHOT_NOT_FOUND (a ref names no snapshot), VERSION_CONTROL_NOT_INITIALIZED, NO_PROJECT.',
  input: args({ from_ref: ref('the older snapshot'), to_ref: ref('the newer snapshot') }),
  effect: 'read',
  trust: 'read',
  prepare: (input, ctx) => vcsOf(ctx).viewDiff(input.from_ref, input.to_ref),
  run: (_ctx, _input, diff) => diff,
});

export const restoreSnapshotTool = defineTool({
  name: 'restore_snapshot',
  group: 'version_control',
  title: 'Restore Snapshot',
  description:
    'Destructive: puts the whole project (codes, categories, sources and their texts, folders, segments, cases, memos) back to snapshot ref. ' +
    'It first snapshots the current state as "Before restoring <short ref>" so the restore can be undone by restoring before_ref, then changes the project in one transaction, ' +
    'then commits "Restored <short ref>"; the history stays linear (nothing is checked out). ' +
    'Returns {restored: true, ref, short_ref, message (of the restored snapshot), before_ref, before_short_ref, changes: {table: {inserted, updated, deleted}}}. ' +
    'Errors: SNAPSHOT_NOT_FOUND, VERSION_CONTROL_NOT_INITIALIZED, TOOL_EXECUTION_ERROR (the project changed while the restore was prepared: nothing was restored, call again), NO_PROJECT.',
  input: args({ ref: ref('the snapshot to restore') }),
  effect: 'destroy',
  trust: 'delete',
  prepare: (input, ctx) => vcsOf(ctx).prepareRestore(input.ref, actorOf(ctx)),
  run: (ctx, _input, prepared: PreparedRestore) => {
    const vcs = ctx.project.vcs;
    if (!vcs) throw new ToolError('VERSION_CONTROL_NOT_INITIALIZED', NOT_INITIALIZED);
    const result = vcs.applyRestore(prepared);
    ctx.domain.events.emit({
      event_type: 'project.snapshot_restored',
      aggregate_type: 'snapshot',
      aggregate_id: prepared.ref,
      payload: {
        ref: prepared.ref,
        short_ref: prepared.short_ref,
        message: prepared.message,
        before_ref: prepared.before_ref,
        before_short_ref: prepared.before_short_ref,
      },
    });
    return {
      restored: true,
      ref: prepared.ref,
      short_ref: prepared.short_ref,
      message: prepared.message,
      before_ref: prepared.before_ref,
      before_short_ref: prepared.before_short_ref,
      changes: result.changes,
    };
  },
});
