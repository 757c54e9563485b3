/**
 * The gRPC adapter's entry (proto/marginalia.proto, service `marginalia.v1.Marginalia`, mutual TLS): its options
 * and {@link startGrpcServer}, which composes the handlers held in this folder: proto.ts (loading the contract),
 * messages.ts (messages and conversions), certIdentity.ts (who a client certificate names), strictUtf8.ts
 * (refusing strings that are not UTF-8), serverContext.ts (what every handler shares), callHandlers.ts (tool
 * calls and approvals), sessionHandlers.ts (explicit sessions) and subscribe.ts (event streams). Every import of
 * `adapters/grpc/grpcAdapter` finds what it used here.
 */
import * as grpc from '@grpc/grpc-js';
import type { AgentContext, Tokens } from '../../agent/agentContext';
import type { InvokeOutcome, ToolPipeline } from '../../agent/pipeline';
import type { Logger } from '../../core/log';
import { callHandlers } from './callHandlers';
import { marginaliaService } from './proto';
import type { GrpcServerContext } from './serverContext';
import { sessionHandlers } from './sessionHandlers';
import { refuseInvalidUtf8, strictUtf8Service } from './strictUtf8';
import { streamHandlers } from './subscribe';

export { CERT_ROLES, identityOfCertificate, type CertIdentity } from './certIdentity';
export { toCallResponse, toProtoEvent } from './messages';
export { GRPC_SERVICE, loadMarginaliaProto, marginaliaService, PROTO_OPTIONS, protoPath } from './proto';
export { firstInvalidStringField, strictUtf8Service, type InvalidStringField } from './strictUtf8';
export { GRPC_STREAM_TOUCH_MS, MAX_GRPC_STREAMS } from './subscribe';

/** Largest message a client may send, bytes (the HTTP server's body limit). */
export const GRPC_MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

/** PEM material of the server side of mutual TLS. */
export interface GrpcTls {
  /** the install's CA certificate: client certificates must chain to it */
  ca: Buffer;
  /** the server certificate (for 127.0.0.1 / localhost) and its private key */
  cert: Buffer;
  key: Buffer;
}

/** Options of {@link startGrpcServer}. */
export interface GrpcOptions {
  agent: AgentContext;
  /** only for the tool listing (ListTools); every call goes through `agent` */
  pipeline: ToolPipeline;
  /** the install's tokens: a certificate's role opens sessions with the matching token, so the agent layer's rules apply unchanged */
  tokens: Tokens;
  tls: GrpcTls;
  /** 0 picks a free port */
  port: number;
  /** loopback only: 127.0.0.1 (default), ::1 or localhost */
  host?: string;
  logger: Logger;
  /** called once per call, for the one-line call log */
  onCall?: (line: string, outcome: InvokeOutcome) => void;
  /** how often an open Subscribe stream touches its session (default {@link GRPC_STREAM_TOUCH_MS}) */
  touchMs?: number;
}

/** A running gRPC server. */
export interface RunningGrpcServer {
  readonly port: number;
  readonly host: string;
  /** open Subscribe streams */
  readonly streams: number;
  /** ends every stream and stops the server (forcibly after 2 s) */
  close(): Promise<void>;
}

/**
 * Starts the gRPC adapter (proto/marginalia.proto, service `marginalia.v1.Marginalia`) on
 * `host:port` with mutual TLS: the server presents `tls.cert` and requires a client certificate signed by
 * `tls.ca` (a client without one, or with one from another CA, fails the TLS handshake and never reaches
 * a handler). The certificate's subject OU is its role: `agent` calls open sessions with the agent token,
 * `researcher` with the reviewer token, so the agent context's rules apply unchanged (only the researcher
 * may approve; agents' Suggest/Require calls wait). Calls without a `session_id` run in one implicit
 * session per certificate name and role (client name `grpc:<CN>`, client type CUSTOM); explicit sessions
 * (OpenSession) belong to the certificate that opened them. Every call goes through `agent`
 * (AgentContext.call/approve/reject), so sessions, validation, rate limits, trust and audit all apply.
 *
 * Only loopback hosts are accepted. Resolves once bound; rejects with the bind error (e.g. the port is in use).
 */
export async function startGrpcServer(opts: GrpcOptions): Promise<RunningGrpcServer> {
  const host = opts.host ?? '127.0.0.1';
  if (!['127.0.0.1', '::1', 'localhost'].includes(host)) throw new Error(`Refusing to listen on ${host}: Marginalia serves loopback addresses only`);
  const agent = opts.agent;
  const server = new grpc.Server({ 'grpc.max_receive_message_length': GRPC_MAX_RECEIVE_BYTES, 'grpc.max_send_message_length': -1 });
  const ctx: GrpcServerContext = { opts, agent, owners: new Map(), streams: new Map() };
  const streams = ctx.streams;
  const handlers: grpc.UntypedServiceImplementation = { ...callHandlers(ctx), ...sessionHandlers(ctx), ...streamHandlers(ctx) };

  server.addService(strictUtf8Service(marginaliaService()), refuseInvalidUtf8(handlers, agent));
  const credentials = grpc.ServerCredentials.createSsl(opts.tls.ca, [{ private_key: opts.tls.key, cert_chain: opts.tls.cert }], true);
  const address = host === '::1' ? `[::1]:${opts.port}` : `${host}:${opts.port}`;
  const port = await new Promise<number>((resolve, reject) => server.bindAsync(address, credentials, (err, p) => (err ? reject(err) : resolve(p))));
  return {
    port,
    host,
    get streams() {
      return streams.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of [...streams.values()]) s.end();
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000);
        force.unref();
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
