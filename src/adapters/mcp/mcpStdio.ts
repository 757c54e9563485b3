import type { McpServer, Transport } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { Readable, Writable } from 'node:stream';
import { isToolError } from '../../core/errors';
import { parseStrictJson } from '../../core/strictJson';
import type { Logger } from '../../core/log';
import { silentLogger } from '../../core/log';
import type { AgentContext } from '../../agent/agentContext';
import type { ContextBuilder } from '../../agent/contextBuilder';
import type { ClientType } from '../../agent/sessions';
import { bindCaller, type CallLogSink } from '../../agent/kit';
import { createMcpServerFor } from './mcpServer';
import { McpTaskStore } from './mcpTasks';
import { resourcesTouchedBy } from './resourceEvents';

/** Longest stdio line (one JSON-RPC message) accepted, bytes: the HTTP endpoint's body limit. */
export const MCP_STDIO_MAX_LINE_BYTES = 64 * 1024 * 1024;

/**
 * The SDK's stdio transport with strict input: every line (MCP stdio framing: one JSON-RPC message per
 * `\n`-terminated line, a trailing `\r` dropped) is parsed with `parseStrictJson` (src/core/strictJson.ts)
 * before the SDK sees it. A line that is not valid UTF-8, holds a lone surrogate escape, names a key twice
 * or is not JSON is answered with a JSON-RPC parse error (-32700, id null, `data.error_code` INVALID_JSON
 * and `data.byte_offset` within the line) and dropped, where the SDK alone would decode it with U+FFFD
 * or skip it without an answer. A line longer than {@link MCP_STDIO_MAX_LINE_BYTES} is dropped with a
 * parse error too. Blank lines are ignored.
 */
export class StrictStdioServerTransport extends StdioServerTransport {
  private strictParts: Buffer[] = [];
  private strictSize = 0;
  private strictSkipping = false;

  constructor(stdin: Readable = process.stdin, stdout: Writable = process.stdout) {
    super(stdin, stdout, { maxBufferSize: MCP_STDIO_MAX_LINE_BYTES + 1 });
    // the SDK registers `_ondata` on stdin when it starts: checked lines go on to its own handler
    const forward = this._ondata;
    this._ondata = (chunk: Buffer) => {
      let buf = chunk;
      while (buf.length > 0) {
        const nl = buf.indexOf(0x0a);
        const piece = nl === -1 ? buf : buf.subarray(0, nl);
        if (!this.strictSkipping) {
          if (this.strictSize + piece.length > MCP_STDIO_MAX_LINE_BYTES) {
            this.strictSkipping = true;
            this.strictParts = [];
            this.strictSize = 0;
            this.refuse(`a line longer than ${MCP_STDIO_MAX_LINE_BYTES} bytes`, { error_code: 'INVALID_ARGUMENTS' });
          } else {
            this.strictParts.push(piece);
            this.strictSize += piece.length;
          }
        }
        if (nl === -1) break;
        if (this.strictSkipping) this.strictSkipping = false;
        else {
          let line = this.strictParts.length === 1 ? (this.strictParts[0] as Buffer) : Buffer.concat(this.strictParts);
          this.strictParts = [];
          this.strictSize = 0;
          if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
          if (this.checked(line)) forward(Buffer.concat([line, NEWLINE]));
        }
        buf = buf.subarray(nl + 1);
      }
    };
  }

  /** True when `line` is strict JSON (blank lines: false, silently); else answers a parse error. */
  private checked(line: Buffer): boolean {
    if (line.toString('latin1').trim() === '') return false;
    try {
      parseStrictJson(line, { what: 'The line' });
      return true;
    } catch (e) {
      if (!isToolError(e)) throw e;
      this.refuse(e.message, { error_code: e.code, ...(e.details as Record<string, unknown> | undefined) });
      return false;
    }
  }

  private refuse(message: string, data: Record<string, unknown>): void {
    this.send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${message}`, data } } as unknown as Parameters<
      StdioServerTransport['send']
    >[0]).catch(() => undefined);
  }
}

const NEWLINE = Buffer.from('\n');

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
  /** one call-log line per tools/call (see McpServerForOptions.onCall) */
  onCall?: CallLogSink;
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
  const tasks = new McpTaskStore(opts.agent);
  const handle = serveStdio(
    ({ era }) => {
      const entry: Live = { server: undefined as unknown as McpServer, era, subscribed: new Set() };
      entry.server = createMcpServerFor(
        opts.agent,
        (hints) =>
          bindCaller(opts.agent, {
            authorization: opts.authorization,
            client_name: hints.clientName ?? opts.clientName ?? 'mcp-stdio',
            client_type: opts.clientType ?? 'CUSTOM',
          }),
        {
          version: opts.version,
          context: opts.context,
          era,
          subscribe: true,
          logger,
          onCall: opts.onCall,
          tasks: era === 'legacy' ? tasks : undefined,
          onSubscribe: (uri, on) => void (on ? entry.subscribed.add(uri) : entry.subscribed.delete(uri)),
        },
      );
      live.add(entry);
      entry.server.server.onclose = () => void live.delete(entry);
      return entry.server;
    },
    { transport: opts.transport ?? new StrictStdioServerTransport(), onerror: (e) => logger.warn(`MCP stdio: ${e.message}`) },
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
  // a held call's task finished: notifications/tasks/status to the 2025 client that declared tasks (it may stop polling)
  const stopStatus = tasks.onStatus((_owner, task) => {
    for (const entry of live) {
      if (entry.era !== 'legacy' || !entry.server.isConnected() || entry.server.server.getClientCapabilities()?.tasks === undefined) continue;
      const notify = entry.server.server.notification.bind(entry.server.server) as (n: { method: string; params: Record<string, unknown> }) => Promise<void>;
      notify({ method: 'notifications/tasks/status', params: { ...task } }).catch((e: Error) =>
        logger.warn(`MCP stdio task notification failed: ${e.message}`),
      );
    }
  });
  void closed.then(() => {
    subscription.close();
    stopStatus();
    tasks.dispose();
  });
  return {
    closed,
    async close() {
      subscription.close();
      await handle.close();
      resolveClosed();
    },
  };
}
