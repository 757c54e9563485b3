import { z } from 'zod';
import { ToolError } from '../core/errors';
import type { Actor } from '../domain/model';
import type { RemoteSyncPort } from '../domain/remoteSync';
import { defineTool, type PrepareContext } from './defineTool';
import { args } from './schemas';

/**
 * The project history's git remote (issue 16 item 2; src/vcs/remote.ts through the `VersionControl.remote` port).
 * Configuring a remote is the researcher's alone (researcherOnly: an agent could otherwise send every transcript
 * anywhere); syncing changes the whole project and sends it to the remote, so an agent's call is held for the
 * researcher's approval (trust category bulk: Require, not overridable); the status is a read.
 */

function remoteOf(ctx: PrepareContext): RemoteSyncPort {
  const remote = ctx.vcs?.remote;
  if (!ctx.vcs || !remote)
    throw new ToolError('VERSION_CONTROL_NOT_INITIALIZED', 'Version control (and so a remote) is not available for this project in this host.');
  if (!ctx.vcs.isInitialized()) {
    throw new ToolError(
      'VERSION_CONTROL_NOT_INITIALIZED',
      `Version control is not initialized for this project (no ${ctx.vcs.historyDir}). Call initialize_version_control first.`,
    );
  }
  return remote;
}

function actorOf(ctx: PrepareContext): Actor {
  return ctx.actor ?? { user: 'unknown', session_id: 'unknown', client_type: 'CUSTOM' };
}

export const configureRemoteTool = defineTool({
  name: 'configure_remote',
  group: 'version_control',
  title: 'Configure Remote',
  description:
    'Researcher only. Sets the git remote the project history syncs with: any git URL (a folder path, file://, ssh://, user@host:path, https://, git://), ' +
    "for example an empty repository on GitHub, GitLab, an institution's server or a shared folder made with git init --bare. " +
    'Marginalia stores no credentials: fetch and push use your own git setup (credential helper, SSH key); a URL with a password is refused. ' +
    'Nothing is sent until sync_project. Calling it again replaces the URL. Returns {configured: true, name, url, replaced}. ' +
    'Errors: INVALID_ARGUMENTS (an unusable URL or name), VERSION_CONTROL_NOT_INITIALIZED (call initialize_version_control first), APPROVAL_FORBIDDEN (an agent), NO_PROJECT.',
  input: args({
    url: z.string().min(1).max(2000).describe('the git remote: a path, file://, ssh://, user@host:path, https:// or git:// URL'),
    name: z.string().min(1).max(64).optional().describe('the remote\'s name in the history repository (default "origin")'),
  }),
  effect: 'modify',
  trust: 'guidance',
  researcherOnly: true,
  dryRun: 'none',
  prepare: (input, ctx) => remoteOf(ctx).configure(input.url, input.name ?? 'origin'),
  run: (_ctx, _input, out) => ({ configured: true, ...out }),
});

export const syncProjectTool = defineTool({
  name: 'sync_project',
  group: 'version_control',
  title: 'Sync Project',
  description:
    "Synchronise the project with its configured remote: snapshot now, fetch, then fast-forward (the remote's snapshots are applied to the project), " +
    'push (the remote lacks snapshots made here), or, when both moved on, merge the two histories entity by entity (matched by GUID) and commit the merge authored by your coder name, ' +
    'then push. The project changes in one journaled transaction; a sync that changed it emits project.synced (outcome, ref, changes per table, conflicts). Returns {outcome: up_to_date | pushed | fast_forward | merged, remote: {name, url}, ref, short_ref, ' +
    "received, sent (snapshots), pushed, changes: {table: {inserted, updated, deleted}}, merge (the merge's counts), conflicts (to resolve), in_words}. " +
    'Errors: REMOTE_NOT_CONFIGURED (configure_remote first), SYNC_DIVERGED (both moved on and no merge is available; nothing changed), ' +
    "VERSION_CONTROL_NOT_INITIALIZED, REMOTE_UNREACHABLE (502: git could not read or write the remote: not a repository, no access, no network, a rejected push; git's message says why), " +
    "TOOL_EXECUTION_ERROR (git failed in the project's own history), NO_PROJECT.",
  input: args({}),
  effect: 'bulk',
  trust: 'bulk',
  prepare: (_input, ctx) => remoteOf(ctx).sync(actorOf(ctx)),
  run: (ctx, _input, result) => {
    // the sync wrote its changes in a transaction of its own, without per-entity events: one event tells every
    // subscriber (views, event streams, MCP resources) that the project changed, with the counts per table
    if (Object.keys(result.changes).length > 0) {
      ctx.domain.events.emit({
        event_type: 'project.synced',
        aggregate_type: 'project',
        aggregate_id: result.ref,
        payload: {
          outcome: result.outcome,
          ref: result.ref,
          short_ref: result.short_ref,
          remote: result.remote.name,
          received: result.received,
          sent: result.sent,
          changes: result.changes,
          conflicts: result.conflicts.length,
        },
      });
    }
    return result;
  },
});

export const getRemoteStatusTool = defineTool({
  name: 'get_remote_status',
  group: 'version_control',
  title: 'Get Remote Status',
  description:
    'How the project history stands against its remote: {configured, name, url, ahead (snapshots here the remote lacks), behind (snapshots there not here), ' +
    'last_sync (ISO 8601 UTC or null), last_outcome, reachable, fetch_error?}. Fetches first unless fetch is false (then ahead and behind are as of the last fetch). ' +
    'Changes nothing in the project. Errors: VERSION_CONTROL_NOT_INITIALIZED, NO_PROJECT.',
  input: args({
    fetch: z.boolean().optional().describe('ask the remote first (default true); false answers from the last fetch, without the network'),
  }),
  effect: 'read',
  trust: 'read',
  prepare: (input, ctx) => remoteOf(ctx).status(input.fetch ?? true),
  run: (_ctx, _input, status) => status,
});

/** The remote tools, in registry order. */
export const REMOTE_TOOLS = [configureRemoteTool, syncProjectTool, getRemoteStatusTool] as const;
