import { systemClock, type Clock } from '../core/clock';
import type { Logger } from '../core/log';
import { ToolPipeline, type AuditSink } from '../agent/pipeline';
import { ProjectStore, type StoreOptions } from '../store/projectStore';
import { SqlProjectRepository } from '../store/sqlRepository';
import type { HostPort, OpenProject } from '../tools/context';
import { EDITOR_TOOLS } from '../tools/editorTools';
import { TOOLS } from '../tools/registry';

/** An open project with its store, as the composition roots hold it. */
export interface ProjectHandle extends OpenProject {
  readonly store: ProjectStore;
  close(): Promise<void>;
}

/**
 * Opens the project at `path` (creating it with `opts.create`) and wraps it as the {@link OpenProject}
 * port tools use. Errors: PROJECT_LOCKED, PROJECT_CORRUPT, NO_PROJECT (see ProjectStore.open).
 */
export async function openProjectHandle(path: string, opts: StoreOptions = {}): Promise<ProjectHandle> {
  const store = await ProjectStore.open(path, opts);
  const repo = new SqlProjectRepository(store);
  return {
    store,
    name: store.name,
    path: store.filePath,
    repo,
    transaction: (fn) => store.transaction(fn),
    close: () => store.close(),
  };
}

/** The host port of a headless process: no editor to navigate in. */
export const headlessHost: HostPort = {
  mode: 'headless',
  currentScreen: () => 'headless (no editor attached)',
  navigate: (t) => ({ navigated: false, detail: `Headless mode: no editor is attached, so "${t.source_name}" was not opened. The range and its text are returned.` }),
};

/** Builds the one pipeline over the registry for a project provider and host. */
export function createPipeline(opts: { project: () => OpenProject | null; host: HostPort; logger: Logger; clock?: Clock; audit?: AuditSink }): ToolPipeline {
  return new ToolPipeline({ tools: [...TOOLS, ...EDITOR_TOOLS], project: opts.project, host: opts.host, logger: opts.logger, clock: opts.clock ?? systemClock, audit: opts.audit });
}
