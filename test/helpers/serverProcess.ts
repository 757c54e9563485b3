import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';

/** The repository root (test/helpers/..). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');
/** The shared corpus beside the repository (../shared/corpus). */
export const CORPUS = path.resolve(REPO_ROOT, '..', 'shared', 'corpus');

/**
 * Skips the calling test (printing why) when the shared corpus is missing, and fails instead under
 * CI=true, where the corpus must be present.
 */
export function requireCorpus(ctx: Mocha.Context, sub = ''): string {
  const dir = path.join(CORPUS, sub);
  if (fs.existsSync(dir)) return dir;
  const why = `the shared corpus is missing at ${dir}`;
  if (process.env.CI === 'true') throw new Error(`${why} (required under CI=true)`);
  console.log(`      skipped: ${why}`);
  ctx.skip();
  return dir;
}

/** The agent token every test server runs with (MARGINALIA_TOKEN). */
export const AGENT_TOKEN = 'test-agent-token-0123456789abcdef';
/** The researcher's token every test server runs with (MARGINALIA_REVIEWER_TOKEN). */
export const REVIEWER_TOKEN = 'test-reviewer-token-fedcba9876543210';
/** `Authorization` headers for the two roles. */
/** The researcher's coder name in servers started by {@link startServer} (MARGINALIA_CODER): what the reviewer token's calls are recorded as. */
export const RESEARCHER_CODER = 'Test Researcher';
export const AS_AGENT = { authorization: `Bearer ${AGENT_TOKEN}` };
export const AS_RESEARCHER = { authorization: `Bearer ${REVIEWER_TOKEN}` };

/** A fresh temporary directory. */
export function tmpDir(prefix = 'marginalia-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A `marginalia serve` child process and how to call it. */
export interface ServerProcess {
  child: ChildProcess;
  port: number;
  base: string;
  /** what the server wrote to stderr so far (its call log) */
  stderr: () => string;
  /** what the server wrote to stdout so far (its banner: address, tokens, the gRPC line) */
  stdout: () => string;
  /** SIGTERM and wait for exit; resolves with the exit code */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit */
  kill(): Promise<void>;
}

/**
 * Starts the built CLI (`bin/marginalia.js serve`, run `npm run build` first) on `projectPath` with
 * port 0, and resolves once it prints its address. Extra CLI arguments go in `args`.
 */
export function startServer(projectPath: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'marginalia.js'), 'serve', '--project', projectPath, '--port', '0', ...args], {
    // known tokens, and a private MARGINALIA_HOME so tests never touch the user's ~/.marginalia
    env: {
      ...process.env,
      MARGINALIA_TOKEN: AGENT_TOKEN,
      MARGINALIA_REVIEWER_TOKEN: REVIEWER_TOKEN,
      MARGINALIA_CODER: RESEARCHER_CODER,
      MARGINALIA_HOME: path.join(path.dirname(projectPath), '.marginalia-home'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within 20 s; stderr:\n${err}`)), 20_000);
    const earlyExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening; stderr:\n${err}`));
    };
    child.once('exit', earlyExit);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.off('exit', earlyExit);
        const port = Number(m[1]);
        resolve({
          child,
          port,
          base: `http://127.0.0.1:${port}`,
          stderr: () => err,
          stdout: () => out,
          stop: async () => {
            child.kill('SIGTERM');
            return exited;
          },
          kill: async () => {
            child.kill('SIGKILL');
            await exited;
          },
        });
      }
    });
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** A raw HTTP response: status, headers and parsed JSON body (or the text when not JSON). */
export interface HttpResult<T = any> {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: T;
}

/**
 * Sends one HTTP request with a keep-alive agent. `body` is sent as-is when a string, else as JSON.
 * Authenticates as the researcher unless `headers` carries its own `authorization` ('' sends none).
 */
export function request<T = any>(base: string, method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult<T>> {
  const url = new URL(urlPath, base);
  // the researcher's token unless the test sends its own Authorization (or an empty one to send none)
  const given = Object.keys(headers).find((h) => h.toLowerCase() === 'authorization');
  if (given === undefined) headers = { ...headers, authorization: AS_RESEARCHER.authorization };
  else if (headers[given] === '') {
    const { [given]: _drop, ...rest } = headers;
    headers = rest;
  }
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent,
        headers: { ...(payload !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed as T });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Calls a tool: `POST /tools/{name}` with `{"arguments": args}`. */
export function callTool<T = any>(base: string, name: string, args: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return request<{ success: boolean; data: T; error?: string; error_code?: string; details?: any }>(
    base,
    'POST',
    `/tools/${name}`,
    { arguments: args },
    headers,
  );
}
