/**
 * The one composition of the protocol surfaces (issue 14, items 7 and 12): `marginalia serve`, the VS Code
 * extension, and `marginalia mcp` and `marginalia cli` while they own a project all call {@link startSurfaces},
 * so every host serves its surfaces under the same configuration. A host names the surfaces it wants
 * (`SurfaceOptions.surfaces`: `mcp` and `cli` want the HTTP tool interface, REST with its event stream and
 * `/mcp`, for the researcher and for the processes that forward to them); the configuration decides which
 * of those are on.
 *
 * The HTTP tool interface (`/tools`, `/approvals`, `/session/*`) is always served: it is the base every other
 * HTTP surface mounts on. `agent_context.protocols.<name>.enabled: false` in `.marginalia/config.yaml` removes
 * that surface: REST and server-sent events (`rest`: `/api/*`, `/events`), WebSocket (`websocket`: the upgrade on
 * `/ws` is refused), MCP (`mcp`: `/mcp` answers 404). gRPC (`grpc`, off by default) listens on its own port with
 * mutual TLS when enabled or when a port is given (`--grpc-port`). The configuration's ports of REST, WebSocket
 * and MCP are not used: those surfaces share the HTTP server's port.
 */
import type { AgentContext, Tokens } from '../agent/agentContext';
import type { ToolPipeline } from '../agent/pipeline';
import type { CallLogSink } from '../agent/kit';
import type { Logger } from '../core/log';
import { writeDiscovery } from './credentials';
import type { OpenProject } from '../tools/context';
import { startHttpServer } from '../adapters/http/httpServer';
import { mountRest } from '../adapters/rest/restAdapter';
import { createWsAdapter, WS_PATH } from '../adapters/ws/wsAdapter';
import { createServeMcp, type ServeMcp } from './serveMcp';
import { startGrpcForServe } from './grpcCommands';

/** A surface a server can run: the always-on HTTP tool interface and the four configurable protocols. */
export type SurfaceName = 'http' | 'rest' | 'sse' | 'websocket' | 'mcp' | 'grpc';

/** What {@link startSurfaces} started. */
export interface RunningSurfaces {
  host: string;
  /** the HTTP port (tools, and REST, SSE, WebSocket and MCP when on) */
  port: number;
  /** the gRPC port, when gRPC is on */
  grpcPort?: number;
  /** the surfaces on, in a fixed order */
  surfaces: SurfaceName[];
  /** the HTTP server's base URL, e.g. `http://127.0.0.1:8765` */
  base: string;
  /** the MCP endpoint and the ContextBuilder behind its resources, when MCP is on (stdio servers share the builder) */
  mcp?: ServeMcp;
  /** stops every surface (the project stays open) */
  close(): Promise<void>;
}

/** Options of {@link startSurfaces}. */
export interface SurfaceOptions {
  agent: AgentContext;
  pipeline: ToolPipeline;
  project: () => OpenProject | null;
  projectPath: string;
  tokens: Tokens;
  logger: Logger;
  version: string;
  port: number;
  host?: string;
  /** the call log (adapter kit: one line per call) */
  onCall?: CallLogSink;
  /** gRPC: a port given on the command line (0: a free one), which turns gRPC on whatever the configuration says */
  grpcPort?: number;
  grpcCertDir?: string;
  /** MCP conformance suite only: /mcp without a token, as the agent */
  mcpOpen?: boolean;
  /** the surfaces this host wants (default: every surface); the configuration turns each on or off, HTTP is always on */
  surfaces?: readonly SurfaceName[];
  /**
   * Headless hosts: write the discovery file of `projectPath` (URL, agent token; `marginalia mcp`, `cli` and
   * `watch` find the owner there) while the surfaces run, and every second end expired sessions, reject
   * requests whose time is up and re-read revoked credentials (`marginalia agent revoke` in another process).
   */
  headless?: boolean;
}

/** The surfaces the configuration turns on (gRPC also when a port is given). */
export function enabledSurfaces(agent: AgentContext, grpcPort?: number): SurfaceName[] {
  const p = agent.config.protocols;
  const out: SurfaceName[] = ['http'];
  if (p.rest.enabled) out.push('rest', 'sse');
  if (p.websocket.enabled) out.push('websocket');
  if (p.mcp.enabled) out.push('mcp');
  if (grpcPort !== undefined || p.grpc.enabled) out.push('grpc');
  return out;
}

/**
 * Starts the HTTP server with the configured surfaces mounted, and gRPC when on, and records what runs in
 * `agent.served` (so `qda://project/settings` tells the truth). Logs one line naming the surfaces on.
 * Errors: the HTTP server's (EADDRINUSE, a non-loopback host); gRPC's listen error, after the HTTP server
 * was closed again (message prefixed `gRPC:`).
 */
export async function startSurfaces(opts: SurfaceOptions): Promise<RunningSurfaces> {
  const { agent, pipeline, logger } = opts;
  const on = enabledSurfaces(agent, opts.grpcPort).filter((s) => s === 'http' || !opts.surfaces || opts.surfaces.includes(s));
  const ws = on.includes('websocket') ? createWsAdapter({ agent, pipeline, logger, onCall: opts.onCall }) : undefined;
  const mcp = on.includes('mcp')
    ? createServeMcp({
        agent,
        project: opts.project,
        projectPath: opts.projectPath,
        version: opts.version,
        logger,
        openAgentToken: opts.mcpOpen ? opts.tokens.agent : undefined,
        onCall: opts.onCall,
      })
    : undefined;
  let rest: { dispose(): void } | undefined;
  const http = await startHttpServer({
    pipeline,
    port: opts.port,
    host: opts.host,
    logger,
    version: opts.version,
    agent,
    onCall: opts.onCall,
    extend: (app) => {
      if (on.includes('rest'))
        rest = mountRest(app, { agent, pipeline, logger, onCall: opts.onCall, protocols: on.filter((s) => s !== 'grpc' && s !== 'mcp') });
    },
    extendFirst: (app) => mcp?.endpoint.mount(app),
    openPaths: opts.mcpOpen && mcp ? ['/mcp'] : undefined,
    upgrades: ws ? { [WS_PATH]: (req, socket, head) => ws.handleUpgrade(req, socket, head) } : {},
  }).catch(async (e: unknown) => {
    ws?.dispose();
    await mcp?.dispose();
    throw e;
  });
  let grpc: Awaited<ReturnType<typeof startGrpcForServe>> | undefined;
  if (on.includes('grpc')) {
    const port = opts.grpcPort ?? agent.config.protocols.grpc.port;
    try {
      grpc = await startGrpcForServe({ agent, pipeline, tokens: opts.tokens, logger, port, certDir: opts.grpcCertDir, onCall: opts.onCall });
    } catch (e) {
      ws?.dispose();
      rest?.dispose();
      await mcp?.dispose();
      await http.close();
      throw new Error(`gRPC could not listen on 127.0.0.1:${port}: ${(e as Error).message}`, { cause: e });
    }
  }
  agent.served = { host: http.host, port: http.port, grpc_port: grpc?.port ?? null, surfaces: [...on] };
  const base = `http://${http.host === '::1' ? '[::1]' : http.host}:${http.port}`;
  const upkeep = opts.headless ? startUpkeep(opts, base) : undefined;
  logger.info(
    `serving ${on.join(', ')} on ${http.host}:${http.port}${grpc ? ` (gRPC with mutual TLS on 127.0.0.1:${grpc.port})` : ''}; off: ${(['rest', 'websocket', 'mcp', 'grpc'] as const).filter((s) => !on.includes(s)).join(', ') || 'none'}`,
  );
  return {
    host: http.host,
    port: http.port,
    grpcPort: grpc?.port,
    surfaces: on,
    base,
    mcp,
    close: async () => {
      upkeep?.();
      agent.served = undefined;
      ws?.dispose();
      rest?.dispose();
      await mcp?.dispose();
      await grpc?.close();
      await http.close();
    },
  };
}

/** The discovery file and the one-second sweeper of a headless host ({@link SurfaceOptions.headless}); returns their stop. */
function startUpkeep(opts: SurfaceOptions, base: string): () => void {
  const { agent, pipeline } = opts;
  const removeDiscovery = writeDiscovery({
    project: opts.projectPath,
    pid: process.pid,
    url: base,
    port: Number(new URL(base).port),
    token: opts.tokens.agent,
    mcp_url: `${base}/mcp`,
    started_at: new Date().toISOString(),
  });
  const sweeper = setInterval(() => {
    // a credential revoked by `marginalia agent revoke` (another process) ends its sessions within a second
    agent.credentials.refresh();
    agent.sessions.sweep();
    pipeline.sweepApprovals();
  }, 1000);
  sweeper.unref();
  return () => {
    clearInterval(sweeper);
    removeDiscovery();
  };
}
