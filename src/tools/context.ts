import type { Clock } from '../core/clock';
import type { PathPolicy } from '../core/pathPolicy';
import type { DomainContext } from '../domain/events';
import type { Actor } from '../domain/model';
import type { ProjectRepository } from '../domain/ports';
import type { ReadScope } from '../domain/teamSettings';
import type { VersionControl } from '../domain/versionControl';
import type { HistoryErasure, ProjectErasure } from '../domain/erasure';

/** The open project as tools see it (the store arrives through this port; tools never import it). */
export interface OpenProject {
  /** display name: the file name without `.qda` */
  readonly name: string;
  /** absolute path of the `.qda` file */
  readonly path: string;
  readonly repo: ProjectRepository;
  /** Runs `fn` as one durable transaction (see ProjectStore.transaction). */
  transaction<T>(fn: () => T): T;
  /**
   * Runs `fn` in a transaction that is always rolled back (ProjectStore.dryRun): the pipeline's dry run of a
   * held call before it is queued. Absent in hosts without it: held calls are queued unchecked.
   */
  dryRun?<T>(fn: () => T): T;
  /**
   * A number that changes whenever the project's content may have changed (ProjectStore.writeGeneration);
   * equal values mean equal content. Absent: reads are never memoized (ToolDef.memo).
   */
  readonly writeGeneration?: number;
  /** the project's version history (`.marginalia/history`), supplied by the composition root; absent in hosts without one */
  readonly vcs?: VersionControl;
  /** erase_source's work in the store (src/store/erasureStore.ts); absent in hosts without it */
  readonly erasure?: ProjectErasure;
  /** erase_source's work in the version history (the Snapshotter); absent in hosts without one */
  readonly historyErasure?: HistoryErasure;
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
  /**
   * Base URL of a local Whisper-compatible transcription server (OpenAI-style `/v1/audio/transcriptions`), when
   * the researcher configured one: the setting `marginalia.transcription.endpoint` in VS Code, the environment
   * variable `MARGINALIA_TRANSCRIPTION_ENDPOINT` for `marginalia serve`. Undefined or empty: none.
   */
  readonly transcriptionEndpoint?: string;
  /**
   * Asks the researcher whether an agent may change a source they are editing (agent-context spec,
   * observer signals: "on a conflict over a source being edited by the user asks the user whether the AI
   * may work on it"). Resolves true to allow (the source is then in observer mode for that session),
   * false when declined; hosts without an editor leave it undefined (always allowed).
   */
  /**
   * Folders (absolute) where agents' file paths may lie besides the project's folder and
   * `agent_context.allowed_paths`: VS Code's workspace folders; `marginalia serve --allow-path DIR`. Undefined:
   * none. The researcher's own calls are never restricted (see src/core/pathPolicy.ts).
   */
  allowedRoots?(): readonly string[];
  requestSourceAccess?(sourceIds: readonly number[], agent: { session_id: string; client_name: string; tool: string }): Promise<boolean>;
}

/**
 * Progress of a long tool call (an import reading a large file, a plan being written): `done` of `total`
 * units of `unit` (`bytes`, `items`), `total` null when unknown, and a short human `message` naming the step
 * (e.g. "Reading analytics_json file"). Reported through {@link PrepareContext.progress} and
 * `ToolContext.progress`; the pipeline throttles it, logs it, and forwards it to the caller's surface (MCP
 * `notifications/progress`, VS Code's progress notification).
 */
export interface ToolProgress {
  message: string;
  done: number;
  total: number | null;
  unit: 'bytes' | 'items';
}

/** Everything a tool's `run` receives. */
export interface ToolContext {
  project: OpenProject;
  /** the domain context of this call: repository, event sink, actor, time */
  domain: DomainContext<ProjectRepository>;
  actor: Actor;
  host: HostPort;
  clock: Clock;
  /** reports progress of long work inside the transaction (see {@link ToolProgress}); may be absent */
  progress?: (p: ToolProgress) => void;
  /** where this caller's file paths may lie (restricted for agents; see src/core/pathPolicy.ts); absent: unrestricted */
  paths?: PathPolicy;
  /**
   * Whose codings this caller may read (blind coding, src/domain/teamSettings.ts): null or absent, everyone's; else
   * only that coder's. For read tools `domain.repo` is already the scoped view (scopedRepository).
   */
  scope?: ReadScope;
}
