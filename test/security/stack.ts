/**
 * The whole server of `marginalia serve`, in process, for the security suite: a project in a fresh temporary
 * folder, the agent context (known tokens, `.marginalia/config.yaml` text, an in-memory audit log), the one
 * pipeline, the HTTP tool server with REST + SSE, MCP (Streamable HTTP) and WebSocket mounted exactly as
 * src/cli/main.ts mounts them, optionally the gRPC adapter with mutual TLS (certificates made with
 * src/cli/certs.ts), and the CLI adapter's local backend. Plus raw HTTP and upgrade helpers that can send any
 * Host, Origin and Content-Type.
 */
import { generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import forge from 'node-forge';
import { startHttpServer, type RunningHttpServer } from '../../src/adapters/http/httpServer';
import { mountRest } from '../../src/adapters/rest/restAdapter';
import { createWsAdapter, WS_PATH } from '../../src/adapters/ws/wsAdapter';
import { startGrpcServer, type RunningGrpcServer } from '../../src/adapters/grpc/grpcAdapter';
import { AgentContext } from '../../src/agent/agentContext';
import type { AuditEntry } from '../../src/agent/auditLog';
import type { Caller, ToolPipeline } from '../../src/agent/pipeline';
import { certFiles, ensureAuthority, issueClientCert, readServerTls } from '../../src/cli/certs';
import { ALL_TOOLS, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../src/cli/compose';
import { createServeMcp } from '../../src/cli/mcpCommand';
import { silentLogger } from '../../src/core/log';
import type { HostPort } from '../../src/tools/context';

/** The install's two secrets in these tests. */
export const TOKENS = { agent: 'sec-agent-token-0123456789abcdef0123', reviewer: 'sec-reviewer-token-fedcba98765432100123' };
export const AS_AGENT = { authorization: `Bearer ${TOKENS.agent}` };
export const AS_RESEARCHER = { authorization: `Bearer ${TOKENS.reviewer}` };

/** Generous limits: the suite makes many calls from many sessions; trust stays at the spec's defaults. */
export const BASE_CONFIG = [
  'agent_context:',
  '  sessions:',
  '    max_concurrent: 500',
  '  rate_limits:',
  '    requests_per_minute: 100000',
  '    mutations_per_minute: 100000',
];

export const PROTO = path.resolve(__dirname, '..', '..', 'proto', 'marginalia.proto');

/** A running in-process server and what the tests need of it. */
export interface Stack {
  dir: string;
  projectPath: string;
  handle: ProjectHandle;
  agent: AgentContext;
  pipeline: ToolPipeline;
  server: RunningHttpServer;
  port: number;
  base: string;
  /** the audit log's lines, in order */
  audit: string[];
  /** the researcher, in process (an explicit session opened with the reviewer token) */
  researcher: Caller;
  grpc?: { server: RunningGrpcServer; port: number; dir: string };
  /** the audit entries after `mark` (an index from {@link auditMark}) */
  auditSince(mark: number): AuditEntry[];
  auditMark(): number;
  /** calls a tool as the researcher and returns its data (fails the test on an error envelope) */
  asResearcher(tool: string, args: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
}

export interface StackOptions {
  /** more lines under `agent_context:` (indented by two spaces) */
  config?: string[];
  /** the configuration's first lines instead of {@link BASE_CONFIG} */
  base?: string[];
  grpc?: boolean;
  /** the host's allowed roots (VS Code's workspace folders, `serve --allow-path`) */
  allowedRoots?: string[];
  /** the project's folder (default: a fresh temporary folder) */
  dir?: string;
}

export function tmp(prefix = 'marginalia-sec-'): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/** Starts the whole server on 127.0.0.1 with a free port. */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const dir = opts.dir ?? tmp();
  const projectPath = path.join(dir, 'study.qda');
  const handle = await openProjectHandle(projectPath, { create: true, checkpointIdleMs: 0 });
  const audit: string[] = [];
  const agent = new AgentContext({
    tools: ALL_TOOLS,
    project: () => handle,
    tokens: TOKENS,
    configText: [...(opts.base ?? BASE_CONFIG), ...(opts.config ?? [])].join('\n') + '\n',
    logger: silentLogger,
    audit: { append: (l) => void audit.push(l), read: async () => audit.join('\n') },
  });
  const host: HostPort = { ...headlessHost, allowedRoots: () => opts.allowedRoots ?? [] };
  const pipeline = createPipeline({ project: () => handle, host, logger: silentLogger, agent, embeddings: null });
  const ws = createWsAdapter({ agent, pipeline, logger: silentLogger });
  const mcp = createServeMcp({ agent, project: () => handle, projectPath, version: 'security-test', logger: silentLogger });
  let rest: { dispose(): void } | undefined;
  const server = await startHttpServer({
    pipeline,
    port: 0,
    logger: silentLogger,
    version: 'security-test',
    agent,
    extend: (app) => {
      rest = mountRest(app, { agent, pipeline, logger: silentLogger });
      mcp.endpoint.mount(app);
    },
    upgrades: { [WS_PATH]: (req, socket, head) => ws.handleUpgrade(req, socket, head) },
  });
  let grpcPart: Stack['grpc'];
  if (opts.grpc) {
    const certDir = path.join(dir, 'certs');
    ensureAuthority(certDir);
    const g = await startGrpcServer({ agent, pipeline, tokens: TOKENS, tls: readServerTls(certDir), port: 0, host: '127.0.0.1', logger: silentLogger });
    grpcPart = { server: g, port: g.port, dir: certDir };
  }
  const researcher = agent.openSession({ authorization: AS_RESEARCHER.authorization, client_type: 'CUSTOM', client_name: 'researcher-in-process' }).caller;
  const entries = (from: number) =>
    audit.slice(from).flatMap((l) => {
      try {
        return [JSON.parse(l) as AuditEntry];
      } catch {
        return [];
      }
    });
  return {
    dir,
    projectPath,
    handle,
    agent,
    pipeline,
    server,
    port: server.port,
    base: `http://127.0.0.1:${server.port}`,
    audit,
    researcher,
    grpc: grpcPart,
    auditMark: () => audit.length,
    auditSince: (mark) => entries(mark),
    async asResearcher(tool, args) {
      const out = await agent.call(researcher, tool, args);
      if (!out.envelope.success) throw new Error(`${tool} as the researcher failed: ${out.envelope.error_code} ${out.envelope.error}`);
      return out.envelope.data;
    },
    async close() {
      ws.dispose();
      rest?.dispose();
      await mcp.dispose();
      await grpcPart?.server.close();
      await server.close();
      agent.dispose();
      await handle.close();
      if (!opts.dir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A raw HTTP answer. */
export interface RawResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
}

/**
 * One HTTP request with full control of the headers: `headers.host` replaces the Host header (`null` sends
 * none), no Content-Type is added unless given. The body is sent as given (a string) or as JSON.
 */
export function raw(port: number, method: string, urlPath: string, opts: { headers?: Record<string, string | null>; body?: unknown } = {}): Promise<RawResult> {
  const headers: Record<string, string> = {};
  let setHost = true;
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    if (k.toLowerCase() === 'host' && v === null) setHost = false;
    else if (v !== null) headers[k] = v;
  }
  const payload = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  const chunked = Object.keys(headers).some((k) => k.toLowerCase() === 'transfer-encoding');
  if (payload !== undefined && !chunked) headers['content-length'] = String(Buffer.byteLength(payload));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers, setHost, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      // an SSE stream never ends: read what arrives in the first moment, then stop
      const isStream = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
      const finish = () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      };
      res.on('data', (c: Buffer) => chunks.push(c));
      if (isStream) {
        setTimeout(() => {
          finish();
          res.destroy();
        }, 100);
      } else res.on('end', finish);
      res.on('error', () => undefined);
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/**
 * A WebSocket upgrade request with the given headers: resolves with 101 (the socket is then closed) or with
 * the refusal's status and JSON body.
 */
export function upgrade(port: number, urlPath: string, headers: Record<string, string | null>): Promise<{ status: number; body: any }> {
  const h: Record<string, string> = {
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-version': '13',
    'sec-websocket-key': Buffer.from('0123456789abcdef').toString('base64'),
  };
  let setHost = true;
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === 'host' && v === null) setHost = false;
    else if (v !== null) h[k] = v;
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'GET', path: urlPath, headers: h, setHost, agent: false });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve({ status: 101, body: null });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

// ----- gRPC -----------------------------------------------------------------------------------------------

export type GrpcClient = grpc.Client & Record<string, any>;

let ctor: grpc.ServiceClientConstructor | undefined;
function grpcCtor(): grpc.ServiceClientConstructor {
  if (!ctor) {
    const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO, { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true })) as any;
    ctor = pkg.marginalia.v1.Marginalia as grpc.ServiceClientConstructor;
  }
  return ctor;
}

/** A gRPC client on `port` trusting the CA in `caDir`, presenting `cert`/`key` (none: no client certificate). */
export function grpcClient(port: number, caDir: string, client?: { cert: string; key: string }): GrpcClient {
  const ca = fs.readFileSync(certFiles(caDir).caCert);
  const creds = client ? grpc.credentials.createSsl(ca, fs.readFileSync(client.key), fs.readFileSync(client.cert)) : grpc.credentials.createSsl(ca);
  const Ctor = grpcCtor();
  return new Ctor(`127.0.0.1:${port}`, creds, { 'grpc.ssl_target_name_override': 'localhost' }) as unknown as GrpcClient;
}

/** One unary call with a 10 s deadline; rejects with the ServiceError. */
export function grpcUnary<T = any>(client: GrpcClient, method: string, req: Record<string, unknown>): Promise<T> {
  return new Promise((resolve, reject) => {
    client[method](req, { deadline: Date.now() + 10_000 }, (err: grpc.ServiceError | null, res: T) => (err ? reject(err) : resolve(res)));
  });
}

/** Issues a client certificate with role `agent` or `researcher` from the CA in `dir`. */
export function clientCert(dir: string, name: string, role: 'agent' | 'researcher'): { cert: string; key: string } {
  const c = issueClientCert(dir, name, role);
  return { cert: c.cert, key: c.key };
}

/** A client certificate signed by the CA in `dir` with an arbitrary subject OU (e.g. `admin`), or none. */
export function oddCert(dir: string, name: string, ou: string | null): { cert: string; key: string } {
  const files = certFiles(dir);
  const caCert = forge.pki.certificateFromPem(fs.readFileSync(files.caCert, 'utf8'));
  const caKey = forge.pki.privateKeyFromPem(fs.readFileSync(files.caKey, 'utf8'));
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  const priv = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  const keys = { privateKey: priv, publicKey: forge.pki.setRsaPublicKey(priv.n, priv.e) };
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '0a' + Date.now().toString(16);
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  cert.setSubject([{ name: 'commonName', value: name }, ...(ou ? [{ name: 'organizationalUnitName', value: ou }] : [])]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', clientAuth: true },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  const out = { cert: path.join(dir, `odd-${name}.pem`), key: path.join(dir, `odd-${name}-key.pem`) };
  fs.writeFileSync(out.cert, forge.pki.certificateToPem(cert));
  fs.writeFileSync(out.key, forge.pki.privateKeyToPem(keys.privateKey));
  return out;
}
