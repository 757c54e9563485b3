/** Child-process servers and a sequential keep-alive node:http client for the HTTP part of the bench. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';

export interface ChildServer {
  child: ChildProcess;
  port: number;
  /** the last few KB the child wrote to stderr */
  stderrTail(): string;
  stop(): Promise<void>;
}

/**
 * Whether the loopback benches (section 1's goals, bench/mcp.ts) pin their servers to CPU0 and themselves to CPU1, as
 * the anchors measured their floors (shared/notes/perf-anchors.md section 2): unless BENCH_PIN=0, with taskset and at
 * least 2 CPUs. Unpinned, the scheduler sometimes puts a client and a server on one vCPU, which halves a loopback round
 * trip (0.12 against 0.24 ms in the anchors), so a floor's p50 moves between runs by more than the gap measured.
 */
export const PIN_SERVERS = process.env.BENCH_PIN !== '0' && fs.existsSync('/usr/bin/taskset') && os.cpus().length >= 2;

/** Pins this process to CPU1 (`on`) or back to every CPU (with taskset; see {@link PIN_SERVERS}). */
export function pinSelf(on: boolean): void {
  execFileSync('/usr/bin/taskset', ['-p', '-c', on ? '1' : `0-${os.cpus().length - 1}`, String(process.pid)], { stdio: 'ignore' });
}

/** Prefix that pins a child to one CPU with taskset (the pinned passes; the client pins itself elsewhere). */
export function pinPrefix(cpu: number | undefined): string[] {
  if (cpu === undefined || !fs.existsSync('/usr/bin/taskset')) return [];
  return ['/usr/bin/taskset', '-c', String(cpu)];
}

/**
 * Spawns `node ...args` and resolves with the port once stdout matches `at http://127.0.0.1:PORT`.
 * stdout and stderr are drained continuously (the real server writes one call-log line per request to
 * stderr, as it would to a terminal).
 */
export function spawnServer(nodeArgs: string[], opts: { cwd: string; cpu?: number; timeoutMs?: number; env?: NodeJS.ProcessEnv }): Promise<ChildServer> {
  const prefix = pinPrefix(opts.cpu);
  const cmd = prefix.length > 0 ? (prefix[0] as string) : process.execPath;
  const args = prefix.length > 0 ? [...prefix.slice(1), process.execPath, ...nodeArgs] : nodeArgs;
  const child = spawn(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let matched = false;
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    if (err.length > 16_384) err = err.slice(-8192);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${nodeArgs.join(' ')} did not start within ${opts.timeoutMs ?? 30_000} ms; stderr:\n${err}`));
    }, opts.timeoutMs ?? 30_000);
    const onEarlyExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${nodeArgs.join(' ')} exited with ${code} before listening; stderr:\n${err}`));
    };
    child.once('exit', onEarlyExit);
    child.stdout?.on('data', (d: Buffer) => {
      if (matched) return; // keep draining
      out += d.toString();
      const m = /at http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        matched = true;
        clearTimeout(timer);
        child.off('exit', onEarlyExit);
        resolve({
          child,
          port: Number(m[1]),
          stderrTail: () => err,
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            const timeout = setTimeout(() => child.kill('SIGKILL'), 10_000);
            await exited;
            clearTimeout(timeout);
          },
        });
      }
    });
  });
}

/** A sequential client over one keep-alive socket. */
export class KeepAliveClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly body: Buffer;

  constructor(
    readonly port: number,
    readonly path: string,
    body: string,
    private readonly headers: Record<string, string> = {},
  ) {
    this.body = Buffer.from(body, 'utf8');
  }

  /** One POST; resolves with status and the complete response body. */
  call(): Promise<{ status: number; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: this.port,
          path: this.path,
          method: 'POST',
          agent: this.agent,
          headers: { ...this.headers, 'content-type': 'application/json', 'content-length': this.body.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(this.body);
    });
  }

  /** `n` sequential calls; returns each call's latency in ms. Throws on a non-200 or a body of the wrong size. */
  async run(n: number, expectBytes: number): Promise<number[]> {
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const r = await this.call();
      out[i] = performance.now() - t0;
      if (r.status !== 200 || r.body.length !== expectBytes)
        throw new Error(`port ${this.port}: status ${r.status}, ${r.body.length} bytes (expected 200, ${expectBytes})`);
    }
    return out;
  }

  close(): void {
    this.agent.destroy();
  }
}

let clockTicks: number | undefined;

/**
 * CPU time (user + system, ms) a process has used so far, from /proc/<pid>/stat; undefined where /proc
 * is missing. Resolution is one clock tick (10 ms), so use it over many calls.
 */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command name (which may contain spaces) start at state (field 3)
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]); // utime (14) + stime (15)
    if (clockTicks === undefined) {
      try {
        clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
      } catch {
        clockTicks = 100;
      }
    }
    return (ticks * 1000) / clockTicks;
  } catch {
    return undefined;
  }
}
