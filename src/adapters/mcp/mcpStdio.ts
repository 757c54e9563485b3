import type { McpServer, Transport } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Logger } from '../../core/log';
import { silentLogger } from '../../core/log';
import type { AgentContext } from '../../agent/agentContext';
import type { ContextBuilder } from '../../agent/contextBuilder';
import type { ClientType } from '../../agent/sessions';
import { createMcpServerFor } from './mcpServer';
import { resourcesTouchedBy } from './resourceEvents';

/** Options of {@link serveMcpStdio}. */
export interface McpStdioOptions {
  agent: AgentContext;
  context: ContextBuilder;
  version: string;
  /** the credential this process acts with: `Bearer <agent token>` (stdio clients present none of their own) */
  authorization: string;
  /** the spec's client type of the session (default CUSTOM) */
  clientType?: ClientType;
  /** the client name when the client gives no clientInfo (default `mcp-stdio`) */
  clientName?: string;
  logger?: Logger;
  /** one log line per tools/call (see McpServerForOptions.onCall) */
  onCall?: (line: string) => void;
  /** another transport than this process's stdin/stdout (tests) */
  transport?: Transport;
}

/** A running stdio MCP connection. */
export interface McpStdioConnection {
  /** resolves when the client closed the connection (stdin ended) or {@link close} was called */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

interface Live {
  server: McpServer;
  era: 'legacy' | 'modern';
  /** 2025-era resources/subscribe of this connection */
  subscribed: Set<string>;
}

/**
 * MCP over stdio (MCP 2025-11-25 "stdio" and 2026-07-28) with the v2 SDK's `serveStdio`, which decides the
 * era from the opening message: an `initialize` pins a 2025 instance, a `server/discover` or an enveloped
 * request a 2026-07-28 one. Every call runs in the implicit session of this process's agent token and the
 * client's `clientInfo.name`, through the one pipeline. Committed events become
 * `notifications/resources/updated` (2025: only for URIs the client subscribed with `resources/subscribe`;
 * 2026-07-28: routed by the SDK onto matching `subscriptions/listen` subscriptions) and
 * `notifications/resources/list_changed`. stdout carries only the protocol; log through `logger` (stderr).
 */
export function serveMcpStdio(opts: McpStdioOptions): McpStdioConnection {
  const logger = opts.logger ?? silentLogger;
  const live = new Set<Live>();
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  const handle = serveStdio(
    ({ era }) => {
      const entry: Live = { server: undefined as unknown as McpServer, era, subscribed: new Set() };
      entry.server = createMcpServerFor(opts.agent, (hints) => opts.agent.implicitCaller(opts.authorization, hints.clientName ?? opts.clientName ?? 'mcp-stdio', opts.clientType ?? 'CUSTOM'), {
        version: opts.version,
        context: opts.context,
        era,
        subscribe: true,
        logger,
        onCall: opts.onCall,
        onSubscribe: (uri, on) => void (on ? entry.subscribed.add(uri) : entry.subscribed.delete(uri)),
      });
      live.add(entry);
      entry.server.server.onclose = () => void live.delete(entry);
      return entry.server;
    },
    { transport: opts.transport, onerror: (e) => logger.warn(`MCP stdio: ${e.message}`) },
  );
  if (!opts.transport) {
    // the client ends the connection by closing our stdin (MCP stdio transport)
    process.stdin.once('end', () => resolveClosed());
    process.stdin.once('close', () => resolveClosed());
  }
  const subscription = opts.agent.hub.subscribe(
    (d) => {
      const changes = d.kind === 'event' ? resourcesTouchedBy([d.event]) : { updated: new Set<string>(), listChanged: true };
      for (const entry of live) {
        if (!entry.server.isConnected()) continue;
        for (const uri of changes.updated) {
          if (entry.era === 'legacy' && !entry.subscribed.has(uri)) continue;
          entry.server.server.sendResourceUpdated({ uri }).catch((e: Error) => logger.warn(`MCP stdio notification failed: ${e.message}`));
        }
        if (changes.listChanged) entry.server.sendResourceListChanged();
      }
    },
    { patterns: ['*'] },
  );
  void closed.then(() => subscription.close());
  return {
    closed,
    async close() {
      subscription.close();
      await handle.close();
      resolveClosed();
    },
  };
}
