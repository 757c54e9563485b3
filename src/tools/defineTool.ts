import type { z } from 'zod';
import type { ErrorCode } from '../core/errors';
import type { PathAccess, PathPolicy } from '../core/pathPolicy';
import type { EmbeddingsPort, ProjectRepository } from '../domain/ports';
import type { ErasurePorts } from '../domain/erasure';
import type { ToolContext, ToolProgress } from './context';

export type { ToolProgress } from './context';
import type { Actor } from '../domain/model';
import type { VersionControl } from '../domain/versionControl';
import type { SnapshotReader } from '../exchange/projectSnapshot';

/** The tool groups of the HTTP spec (section 1), plus Marginalia's own. */
export type ToolGroup =
  | 'core'
  | 'project'
  | 'source'
  | 'folder'
  | 'code'
  | 'ai_code_suggestions'
  | 'ai_text_coding'
  | 'batch'
  | 'av'
  | 'version_control'
  | 'exchange'
  | 'case'
  | 'analysis'
  | 'search';

/**
 * What a tool does to the project: drives transactions, trust defaults, MCP annotations and snapshots.
 * `read` never writes; `create` adds; `modify` changes existing items; `destroy` deletes or merges;
 * `bulk` changes many items at once.
 */
export type Effect = 'read' | 'create' | 'modify' | 'destroy' | 'bulk';

/**
 * The trust category of the agent-context spec (section 5, "Default trust by category"); the trust
 * layer maps it to a level.
 */
export type TrustCategory =
  | 'read'
  | 'search'
  | 'report'
  | 'create_code'
  | 'apply_code'
  | 'rename'
  | 'delete'
  | 'merge'
  | 'bulk'
  | 'create'
  | 'guidance'
  | 'approval'
  // a source's memo (update_memo): the capability table's Auto for a write, overridable to notify or suggest
  | 'memo';

/**
 * One tool, defined once. Every surface (HTTP `GET /tools`, MCP, LM tools, WebSocket, gRPC, CLI) is
 * derived from this object.
 *
 * The pipeline validates arguments against `input` once, awaits `prepare` (asynchronous work that
 * writes nothing, such as reading and extracting a file), then calls `run` synchronously inside one
 * store transaction (none for `read` tools). `run` returns the envelope's `data`; it throws `ToolError`
 * for expected failures.
 */
export interface ToolDef<S extends z.ZodType = z.ZodType, P = unknown, R = unknown> {
  /** snake_case, the spec's name; LM tools get the `qda_` prefix */
  name: string;
  group: ToolGroup;
  /** human label, e.g. "Create Code" */
  title: string;
  /** model-facing: what it does, when to use it, what it returns, its errors */
  description: string;
  /** THE input schema; its JSON Schema is what every listing shows */
  input: S;
  effect: Effect;
  trust: TrustCategory;
  /**
   * A `read` tool without `prepare` whose result depends only on the project's content and the input
   * (not on the caller, the clock or the host): the pipeline answers repeated calls from a memo until the
   * project's next write (OpenProject.writeGeneration) and shares the deep-frozen result between callers
   * (src/core/sharedResult.ts), so its JSON is written once.
   */
  memo?: boolean;
  /**
   * `agents` (default): listed on every surface. `editor`: the editor's own bookkeeping (e.g. moving
   * segments with text edits); runs through the pipeline for the researcher's session only and is
   * listed nowhere.
   */
  audience?: 'agents' | 'editor';
  /**
   * Only the researcher (the local UI, or a client holding the reviewer token) may call it: the pipeline refuses
   * every other caller with APPROVAL_FORBIDDEN (HTTP 403) before the trust stage, so an agent's call is never
   * queued for approval either (erase_source).
   */
  researcherOnly?: boolean;
  /** false for tools that work without an open project (guidance tools); default true */
  needsProject?: boolean;
  /** the error code when no project is open (default NO_PROJECT; case tools use CASES_NOT_LISTED/NO_CONTEXT) */
  noProjectCode?: ErrorCode;
  /**
   * The arguments that name files, with what the tool does with them and the tool's error code for a refused
   * path. For agents the pipeline checks them against the path policy (src/core/pathPolicy.ts) before the
   * trust decision (so a refused path is never queued for approval) and again when the call runs, when it
   * also replaces each with its real path (symbolic links followed), so the tool works on what was checked.
   */
  paths?: readonly ToolPath[];
  /**
   * How the pipeline checks an agent's call before holding it for approval (trust level suggest or require;
   * issue 14 item 5), so that a call that would fail answers at once with its own error and only calls that
   * would succeed wait:
   * - `full`: `run` as a dry run against the current project, in a transaction that is always rolled back
   *   (OpenProject.dryRun); its error, if any, is the answer; its events and result describe the request.
   *   For tools whose `run` touches nothing outside the database.
   * - `validate`: only the checks that do no work: the path arguments ({@link paths}) that the tool reads
   *   must name an existing file (else the path's error code). For tools with effects outside the database
   *   (reading or writing files, git, transcription): they run once, when approved.
   * - `none`: no check; queued as asked.
   * Default: `validate` for a tool with `prepare` or `paths` (its work is outside the database), else `full`.
   */
  dryRun?: 'full' | 'validate' | 'none';
  prepare?: (input: z.output<S>, ctx: PrepareContext) => Promise<P>;
  run: (ctx: ToolContext, input: z.output<S>, prepared: P) => R;
  /**
   * The shape of `run`'s result (the envelope's `data`), when the tool declares it: MCP lists it as the
   * tool's `outputSchema` and validates `structuredContent` against it. Absent: MCP lists a generic object
   * schema (precise output schemas for every tool are a follow-up).
   */
  output?: z.ZodType;
}

/** A file-path argument of a tool (see {@link ToolDef.paths}). */
export interface ToolPath {
  /** the argument's name (a top-level string argument) */
  arg: string;
  access: PathAccess;
  /** the error code of a refused path: the tool's own (IMPORT_FAILED, EXPORT_FAILED, SOURCE_IMPORT_FAILED, ...) */
  code: ErrorCode;
  /** the error code of a path (read) that names no file, when it is not `code` (the dry run of a held call, {@link ToolDef.dryRun}) */
  missing?: ErrorCode;
}

/** What `prepare` may use: nothing that writes. */
export interface PrepareContext {
  /** reports progress of long work (see {@link ToolProgress}); absent or a no-op when nobody listens */
  progress?: (p: ToolProgress) => void;
  /** the open project's path, or null */
  projectPath: string | null;
  /**
   * Read access to the open project (null when none is open), for prepare steps that need a stored record
   * before their I/O (e.g. a media source's file path). `prepare` runs outside any transaction: read only.
   */
  reader?: ProjectReader | null;
  /** the host's transcription endpoint (`HostPort.transcriptionEndpoint`), when configured */
  transcriptionEndpoint?: string;
  /**
   * The open project's version history (`OpenProject.vcs`; null when none is open or the host has none).
   * Its git work is asynchronous and belongs here; only `applyRestore` runs in `run`.
   */
  vcs?: VersionControl | null;
  /** who is calling, for records that name the session (a snapshot's author) */
  actor?: Actor;
  /**
   * The text-embedding model of this process (`MARGINALIA_EMBEDDINGS_*`, set by the composition root), or
   * null/undefined when none is configured. Its network calls belong in `prepare`, never in `run`.
   */
  embeddings?: EmbeddingsPort | null;
  /** where this caller's file paths may lie (restricted for agents; see src/core/pathPolicy.ts); absent: unrestricted */
  paths?: PathPolicy;
  /** erase_source's ports: the open project's erasure, its history's, the audit log's (null when no project is open) */
  erasure?: ErasurePorts | null;
  /**
   * Waits until the approval request `requestId` is decided, at most `waitMs` milliseconds (capped at 30 000)
   * and no longer than it has left before it expires; resolves at once for an unknown or decided request.
   * Never rejects. get_approval_status's `wait_ms` long poll (ToolPipeline.awaitDecision).
   */
  awaitDecision?: (requestId: string, waitMs: number) => Promise<void>;
  /** the agent layer's live sessions (list_sessions, get_session, end_session; src/tools/sessionTools.ts); null without an agent layer */
  sessions?: SessionsPort | null;
}

/** A live session as the session tools see it (the agent layer's Session, src/agent/sessions.ts). Times ISO 8601 UTC. */
export interface SessionInfo {
  session_id: string;
  client_type: string;
  client_name: string;
  created_at: string;
  last_activity: string;
  status: string;
  subscriptions: { subscription_id: string; event_patterns: string[]; created_at: string }[];
  context: { project_id: string; user_id: string; trust_level: string; preferences: Record<string, unknown> };
  implicit: boolean;
  /** the agent credential's name, or `researcher` */
  owner: string;
  model?: string;
}

/** The agent layer's sessions as tools reach them (the SessionManager). */
export interface SessionsPort {
  list(): readonly SessionInfo[];
  get(id: string): SessionInfo | undefined;
  /** ends a session (its streams close); errors: SESSION_NOT_FOUND */
  end(id: string, reason: 'ended_by_researcher'): unknown;
}

/** The repository reads `prepare` may use. */
export type ProjectReader = Pick<
  ProjectRepository,
  'getSource' | 'getSourceText' | 'listCodes' | 'listSegmentsForSearch' | 'getSegmentsForSearch' | 'embeddedHashes'
> &
  // export_data reads one consistent snapshot of the whole project (src/exchange/projectSnapshot.ts)
  SnapshotReader;

/** A tool of any schema, as the registry holds it. */
export type AnyTool = ToolDef<z.ZodType, any, unknown>;

/** Identity helper that infers a tool's types from its schema. */
export function defineTool<S extends z.ZodType, P = undefined, R = unknown>(def: ToolDef<S, P, R>): ToolDef<S, P, R> {
  return def;
}
