import type { Clock } from '../core/clock';
import type { DomainContext } from '../domain/events';
import type { Actor } from '../domain/model';
import type { ProjectRepository } from '../domain/ports';

/** The open project as tools see it (the store arrives through this port; tools never import it). */
export interface OpenProject {
  /** display name: the file name without `.qda` */
  readonly name: string;
  /** absolute path of the `.qda` file */
  readonly path: string;
  readonly repo: ProjectRepository;
  /** Runs `fn` as one durable transaction (see ProjectStore.transaction). */
  transaction<T>(fn: () => T): T;
}

/** A request to show a range of a source in the editor. Positions in code points. */
export interface NavigationTarget {
  source_id: number;
  source_name: string;
  start_pos: number;
  end_pos: number;
  highlight: boolean;
}

/**
 * What the host (VS Code, or the headless CLI) offers tools: its mode, the screen the researcher is on,
 * and navigation. Headless hosts answer navigation with `navigated: false` and say why.
 */
export interface HostPort {
  readonly mode: 'desktop' | 'headless' | 'hybrid';
  currentScreen(): string;
  navigate(target: NavigationTarget): { navigated: boolean; detail: string };
}

/** Everything a tool's `run` receives. */
export interface ToolContext {
  project: OpenProject;
  /** the domain context of this call: repository, event sink, actor, time */
  domain: DomainContext<ProjectRepository>;
  actor: Actor;
  host: HostPort;
  clock: Clock;
}
