import { systemClock, type Clock } from '../core/clock';
import type { Logger } from '../core/log';
import { AgentContext } from '../agent/agentContext';
import type { AgentContextConfig } from '../agent/config';
import { ToolPipeline, type AuditSink } from '../agent/pipeline';
import { fileAgentCredentialStorage, fileAuditStorage, loadTokens, readConfigText } from './credentials';
import { ProjectStore, type StoreOptions } from '../store/projectStore';
import { SqlProjectRepository } from '../store/sqlRepository';
import { StoreDumpAccess } from '../store/dumpAccess';
import { StoreErasure } from '../store/erasureStore';
import { Snapshotter } from '../vcs/snapshotter';
import { RemoteSync } from '../vcs/remote';
import { mergeDumps, type MergeConflict } from '../vcs/merge/mergeDumps';
import type { HostPort, OpenProject } from '../tools/context';
import { EDITOR_TOOLS } from '../tools/editorTools';
import { TOOLS } from '../tools/registry';
import type { EmbeddingsPort } from '../domain/ports';
import { embeddingsFromEnv } from '../exchange/embeddings';

/** An open project with its store, as the composition roots hold it. */
export interface ProjectHandle extends OpenProject {
  readonly store: ProjectStore;
  /** the project's version history and automatic snapshots (also `vcs`, the port tools see) */
  readonly snapshotter: Snapshotter;
  close(): Promise<void>;
}

/** Options of {@link openProjectHandle}: the store's, plus the automatic snapshots' debounce. */
export interface HandleOptions extends StoreOptions {
  /** commit an automatic snapshot this many milliseconds after the last change (default 2000) */
  snapshotDebounceMs?: number;
}

/**
 * Opens the project at `path` (creating it with `opts.create`) and wraps it as the {@link OpenProject}
 * port tools use, with its version history (`vcs`: a {@link Snapshotter} over the store's rows, active
 * once `.marginalia/history` exists). Closing commits a waiting snapshot before the store closes.
 * Errors: PROJECT_LOCKED, PROJECT_CORRUPT, NO_PROJECT (see ProjectStore.open).
 */
export async function openProjectHandle(path: string, opts: HandleOptions = {}): Promise<ProjectHandle> {
  const store = await ProjectStore.open(path, opts);
  const repo = new SqlProjectRepository(store);
  const dumpAccess = new StoreDumpAccess(store);
  const snapshotter = new Snapshotter(store.filePath, dumpAccess, { debounceMs: opts.snapshotDebounceMs, logger: opts.logger, repo });
  // the history's git remote (issue 16 item 2): sync applies fetched or merged dumps in one store transaction
  snapshotter.remote = new RemoteSync({
    history: snapshotter,
    rows: dumpAccess,
    transaction: (fn) => store.transaction(fn),
    merge: (base, ours, theirs) =>
      mergeDumps(base, ours, theirs, { now: new Date().toISOString(), projectGuid: repo.projectGuid(), idFloor: idFloorOf(store) }),
    // the merge's conflicts persist with it (merge_conflicts; list_merge_conflicts, resolve_merge_conflict)
    recordConflicts: (conflicts, mergeRef) => repo.saveMergeConflicts(conflicts as MergeConflict[], mergeRef, new Date().toISOString()),
  });
  return {
    store,
    name: store.name,
    path: store.filePath,
    repo,
    vcs: snapshotter,
    snapshotter,
    erasure: new StoreErasure(store, opts.logger),
    historyErasure: snapshotter,
    transaction: (fn) => store.transaction(fn),
    dryRun: (fn) => store.dryRun(fn),
    get writeGeneration() {
      return store.writeGeneration;
    },
    close: async () => {
      await snapshotter.close();
      await store.close();
    },
  };
}

/** Per table, the highest id the project ever gave out (sqlite_sequence): a merge numbers the remote's new rows above it. */
function idFloorOf(store: ProjectStore): Record<string, number> {
  return Object.fromEntries(store.all<{ name: string; seq: number }>('SELECT name, seq FROM sqlite_sequence').map((r) => [r.name, Number(r.seq)]));
}

/**
 * The host port of a headless process: no editor to navigate in. It names no allowed roots of its own:
 * agents' paths lie in the project's folder and `agent_context.allowed_paths` (the pipeline adds both);
 * `marginalia serve` adds its `--allow-path` folders as `allowedRoots`.
 */
export const headlessHost: HostPort = {
  mode: 'headless',
  currentScreen: () => 'headless (no editor attached)',
  navigate: (t) => ({
    navigated: false,
    detail: `Headless mode: no editor is attached, so "${t.source_name}" was not opened. The range and its text are returned.`,
  }),
};

/** Every tool the pipeline knows: the agent-facing registry plus the editor's own. */
export const ALL_TOOLS = [...TOOLS, ...EDITOR_TOOLS];

/**
 * Builds the one pipeline over the registry for a project provider and host. With `agent`, the
 * agent-context layer (sessions, trust, rate limits, approvals, audit) guards every call; without it
 * every stage permits (tool unit tests, seeding).
 */
export function createPipeline(opts: {
  project: () => OpenProject | null;
  host: HostPort;
  logger: Logger;
  clock?: Clock;
  audit?: AuditSink;
  agent?: AgentContext;
  /** the embedding model of search_semantic and find_similar_segments; undefined: from the environment (see {@link embeddingsFromEnvironment}); null: none */
  embeddings?: EmbeddingsPort | null;
}): ToolPipeline {
  const pipeline = new ToolPipeline({
    tools: ALL_TOOLS,
    project: opts.project,
    host: opts.host,
    logger: opts.logger,
    clock: opts.clock ?? systemClock,
    audit: opts.audit,
    agent: opts.agent?.layer,
    embeddings: opts.embeddings === undefined ? embeddingsFromEnvironment(opts.logger) : opts.embeddings,
  });
  opts.agent?.attach(pipeline);
  feedSnapshots(pipeline, opts.project);
  return pipeline;
}

/**
 * Records the spec's ProjectOpened / ProjectClosed as `project.opened` / `project.closed` (payload
 * `{project_name, host}`) through the pipeline, so subscribers (SSE, WebSocket, MCP) and the event log see
 * them. Call after the project is open and before it closes. Never throws: a failure is logged.
 */
export function announceProject(
  pipeline: ToolPipeline,
  project: OpenProject,
  kind: 'opened' | 'closed',
  host: 'vscode' | 'serve',
  user: string,
  logger: Logger,
): void {
  try {
    pipeline.emitSystemEvents(
      { session_id: 'local', client_type: 'LOCAL_UI', client_name: host === 'vscode' ? 'vscode' : 'marginalia serve', user, researcher: true },
      [
        {
          event_type: kind === 'opened' ? 'project.opened' : 'project.closed',
          aggregate_type: 'project',
          aggregate_id: project.name,
          payload: { project_name: project.name, host },
        },
      ],
    );
  } catch (e) {
    logger.error(`could not record project.${kind}`, e);
  }
}

/**
 * Automatic snapshots: hands every finished call and the events it stored to the open project's
 * {@link Snapshotter} (which ignores them until the project has a history). The pipeline reports a call
 * (`onDidCall`) and then publishes its events (`onEvents`), both after the commit is durable, so git never
 * runs inside a transaction.
 */
function feedSnapshots(pipeline: ToolPipeline, project: () => OpenProject | null): void {
  const snapshotter = () => {
    const vcs = project()?.vcs;
    return vcs instanceof Snapshotter ? vcs : undefined;
  };
  pipeline.onDidCall((call) => snapshotter()?.noteCall(call));
  pipeline.onEvents((events) => snapshotter()?.noteEvents(events));
}

/**
 * The agent-context layer of a project: `.marginalia/config.yaml` beside it (defaults when missing),
 * the install's tokens (credentials.ts), and the JSONL audit log at `audit.log_path`.
 * Errors: INVALID_CONFIG.
 */
export function createAgentContextFor(
  projectPath: string,
  opts: {
    project: () => OpenProject | null;
    logger: Logger;
    clock?: Clock;
    tokens?: ReturnType<typeof loadTokens>;
    overrides?: (c: AgentContextConfig) => AgentContextConfig;
    /** the researcher's coder name (see AgentContextOptions.researcherName) */
    researcherName?: () => string;
  },
): AgentContext {
  // the audit path comes from the configuration the context itself loads
  const holder: { ctx?: AgentContext } = {};
  const ctx = new AgentContext({
    tools: ALL_TOOLS,
    project: opts.project,
    configText: readConfigText(projectPath),
    overrides: opts.overrides,
    tokens: opts.tokens ?? loadTokens(),
    researcherName: opts.researcherName,
    audit: fileAuditStorage(projectPath, () => holder.ctx?.config.audit.log_path ?? '.marginalia/audit.jsonl'),
    // the agents' named credentials, hashed, in <MARGINALIA_HOME>/agents/ (issue 14 item 2; `marginalia agent add`)
    credentials: fileAgentCredentialStorage(projectPath),
    clock: opts.clock,
    logger: opts.logger,
  });
  holder.ctx = ctx;
  return ctx;
}

/**
 * The embedding model the environment configures (MARGINALIA_EMBEDDINGS_ENDPOINT, MARGINALIA_EMBEDDINGS_MODEL;
 * see src/exchange/embeddings.ts), or null. A malformed endpoint is logged and treated as none, so semantic
 * search still answers (lexically, saying so in its `method`).
 */
export function embeddingsFromEnvironment(logger: Logger, env: NodeJS.ProcessEnv = process.env): EmbeddingsPort | null {
  try {
    const port = embeddingsFromEnv(env);
    if (port) logger.info(`semantic search: embeddings model "${port.model}" at ${port.endpoint}`);
    return port;
  } catch (e) {
    logger.error(`semantic search falls back to lexical similarity: ${(e as Error).message}`);
    return null;
  }
}
