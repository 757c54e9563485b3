import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { ToolError } from '../core/errors';
import type { Logger } from '../core/log';
import type { AgentContext, Role, Tokens } from '../agent/agentContext';
import type { InvokeOutcome, ToolPipeline } from '../agent/pipeline';
import { startGrpcServer, type RunningGrpcServer } from '../adapters/grpc/grpcAdapter';
import { defaultCertDir, ensureAuthority, issueClientCert, readServerTls } from './certs';

/** The usage lines of `marginalia certs` (main.ts prints them in its help). */
export const CERTS_USAGE = `  marginalia certs [--out DIR] [--client NAME [--role agent|researcher]]
      Makes the local CA and the server certificate (127.0.0.1, ::1, localhost) for the gRPC adapter's
      mutual TLS when missing, and with --client a client certificate whose role (default agent) decides
      what it may do: researcher certificates may approve. Files are 0600 in DIR (default
      <MARGINALIA_HOME>/certs): ca.pem, ca-key.pem, server.pem, server-key.pem, client-NAME.pem, client-NAME-key.pem.`;

/**
 * Runs `marginalia certs` (see {@link CERTS_USAGE}): prints what it made and which files a client needs.
 * Errors: INVALID_ARGUMENTS (a bad name or role, --role without --client).
 */
export function runCerts(argv: string[]): void {
  const { values } = parseArgs({ args: argv, options: { out: { type: 'string' }, client: { type: 'string' }, role: { type: 'string' } }, strict: true });
  const dir = path.resolve(values.out ?? defaultCertDir());
  if (values.role !== undefined && values.client === undefined) throw new ToolError('INVALID_ARGUMENTS', '--role goes with --client NAME');
  const role = (values.role ?? 'agent') as Role;
  if (role !== 'agent' && role !== 'researcher') throw new ToolError('INVALID_ARGUMENTS', `--role must be agent or researcher (got ${values.role})`);
  const { files, created } = ensureAuthority(dir);
  const lines = [`Marginalia certificates in ${files.dir}:`];
  const mark = (f: string) => (created.includes(f) ? ' (new)' : '');
  lines.push(`  CA:      ${files.caCert}${mark(files.caCert)}  (clients verify the server with it)`);
  lines.push(`  server:  ${files.serverCert}${mark(files.serverCert)}, ${files.serverKey}  (127.0.0.1, ::1, localhost)`);
  if (values.client !== undefined) {
    let issued: ReturnType<typeof issueClientCert>;
    try {
      issued = issueClientCert(dir, values.client, role);
    } catch (e) {
      throw new ToolError('INVALID_ARGUMENTS', (e as Error).message);
    }
    lines.push(`  client:  ${issued.cert}, ${issued.key}  (CN ${values.client}, role ${role})`);
    lines.push('', `A gRPC client connects to 127.0.0.1:PORT with root certificate ${issued.ca}, certificate ${issued.cert} and key ${issued.key}.`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * Starts the gRPC adapter for `marginalia serve` on 127.0.0.1:`port` (0: a free port) with the
 * certificates in `certDir` (default `<MARGINALIA_HOME>/certs`), creating the CA and server certificate
 * when missing (logged). Errors: the bind error (e.g. EADDRINUSE).
 */
export async function startGrpcForServe(opts: {
  agent: AgentContext;
  pipeline: ToolPipeline;
  tokens: Tokens;
  logger: Logger;
  port: number;
  certDir?: string;
  onCall?: (line: string, outcome: InvokeOutcome) => void;
}): Promise<RunningGrpcServer> {
  const dir = path.resolve(opts.certDir ?? defaultCertDir());
  const { created } = ensureAuthority(dir);
  if (created.length > 0)
    opts.logger.info(
      `gRPC: created ${created.map((f) => path.basename(f)).join(', ')} in ${dir}; issue client certificates with: marginalia certs --client NAME --role agent|researcher`,
    );
  return startGrpcServer({
    agent: opts.agent,
    pipeline: opts.pipeline,
    tokens: opts.tokens,
    tls: readServerTls(dir),
    port: opts.port,
    host: '127.0.0.1',
    logger: opts.logger,
    onCall: opts.onCall,
  });
}
