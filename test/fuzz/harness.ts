/**
 * The main-thread side of the fuzz suite: starts test/fuzz/serverWorker.ts (the real HTTP tool server in
 * a worker thread), sends raw HTTP requests to it with a per-request timeout, and asks the worker for id
 * pools, canonical dumps and fresh epochs.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DumpDigest, EpochInfo, FixtureFiles, InitInfo, Pools, SeedVariant, WorkerRequest } from './serverWorker';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The tokens the fuzz server runs with. */
export const TOKENS = { agent: 'fuzz-agent-token-0123456789abcdef', reviewer: 'fuzz-reviewer-token-fedcba9876543210' };

/** One raw HTTP exchange. */
export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  ms: number;
}

/** A request body: text, bytes, or `repeat` copies of a chunk (bodies larger than a string may be). */
export type RawBody = string | Buffer | { chunk: Buffer; repeat: number; tail?: Buffer };

/** An error the server logged, as the worker forwarded it. */
export interface ServerLog {
  msg: string;
  stack?: string;
}

/** The fuzz server in its worker, and how to talk to it. */
export class FuzzServer {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  /** errors the server logged since the last {@link takeLogs} */
  private logs: ServerLog[] = [];
  /** set when the worker died */
  crashed: string | undefined;
  port = 0;
  files: FixtureFiles | undefined;
  epoch: EpochInfo | undefined;

  /** Starts the worker, seeds the projects and starts the server. */
  async start(root: string, samples: string): Promise<void> {
    const entry = path.join(__dirname, 'serverWorker.ts');
    // the worker loads TypeScript the way mocha does here (tsx's require hook)
    const code = `require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(entry)});`;
    this.worker = new Worker(code, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 4096 } });
    this.worker.on('message', (m: { id?: number; ok?: boolean; value?: unknown; error?: string; type?: string; msg?: string; stack?: string }) => {
      if (m.type === 'log') {
        this.logs.push({ msg: m.msg ?? '', stack: m.stack });
        return;
      }
      const w = m.id === undefined ? undefined : this.waiting.get(m.id);
      if (!w || m.id === undefined) return;
      this.waiting.delete(m.id);
      if (m.ok) w.resolve(m.value);
      else w.reject(new Error(`fuzz worker: ${m.error}`));
    });
    const died = (why: string) => {
      this.crashed ??= why;
      for (const w of this.waiting.values()) w.reject(new Error(`fuzz worker died: ${why}`));
      this.waiting.clear();
    };
    this.worker.on('error', (e) => died(e.stack ?? e.message));
    this.worker.on('exit', (code) => died(`exit ${code}`));
    const info = (await this.ask({ type: 'init', root, samples, tokens: TOKENS })) as InitInfo;
    this.port = info.port;
    this.files = info.files;
  }

  private ask(msg: DistributiveOmit<WorkerRequest, 'id'>): Promise<unknown> {
    const worker = this.worker;
    if (!worker || this.crashed) return Promise.reject(new Error(`fuzz worker is not running${this.crashed ? `: ${this.crashed}` : ''}`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ ...msg, id });
    });
  }

  /** Closes the open project and opens a fresh copy of seed `variant`. */
  async reset(variant: SeedVariant): Promise<EpochInfo> {
    this.epoch = (await this.ask({ type: 'reset', variant })) as EpochInfo;
    return this.epoch;
  }

  /** The ids and names that exist now, and with `refs` the snapshot refs (a git call). */
  pools(refs = false): Promise<Pools> {
    return this.ask({ type: 'pools', refs }) as Promise<Pools>;
  }

  /** The canonical dump of the open project, as sha256 per file. */
  dump(): Promise<DumpDigest> {
    return this.ask({ type: 'dump' }) as Promise<DumpDigest>;
  }

  /** Bytes in the open project's journal: every committed transaction appends to it (checkpoints are off, see serverWorker.ts). */
  journalBytes(): number {
    try {
      return fs.statSync((this.epoch as EpochInfo).journalPath).size;
    } catch {
      return -1;
    }
  }

  /**
   * Changes whenever the project may have changed, across checkpoints too: the journal's size and modification
   * time and the project file's inode and modification time. Journal bytes alone repeat when a checkpoint
   * (erase_source vacuums and checkpoints even with idle checkpoints off) cuts the journal back to a size seen before.
   */
  changeKey(): string {
    const info = this.epoch as EpochInfo;
    try {
      const j = fs.statSync(info.journalPath);
      const p = fs.statSync(info.projectPath);
      return `${j.size}:${j.mtimeMs}:${p.ino}:${p.mtimeMs}`;
    } catch {
      return 'missing';
    }
  }

  /**
   * What the journal holds between byte offsets `from` and `to`: the transactions committed meanwhile, as
   * their statements. Undefined when the journal was cut (a checkpoint) in between.
   */
  journalSlice(from: number, to: number): { sql: string; params: unknown[] }[][] | undefined {
    if (to < from) return undefined;
    const fd = fs.openSync((this.epoch as EpochInfo).journalPath, 'r');
    try {
      const buf = Buffer.alloc(to - from);
      fs.readSync(fd, buf, 0, buf.length, from);
      return buf
        .toString('utf8')
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => (JSON.parse(l) as { q: [string, unknown[]][] }).q.map(([sql, params]) => ({ sql, params })));
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Errors the server logged since the last call. */
  takeLogs(): ServerLog[] {
    const l = this.logs;
    this.logs = [];
    return l;
  }

  /**
   * Sends one request and resolves with the answer, or rejects after `timeoutMs` (a hang) or on a
   * connection error. `headers` are sent as given (no defaults but Content-Length).
   */
  send(method: string, urlPath: string, headers: Record<string, string>, body: RawBody | undefined, timeoutMs: number): Promise<RawResponse> {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      let length = 0;
      if (typeof body === 'string') length = Buffer.byteLength(body);
      else if (Buffer.isBuffer(body)) length = body.length;
      else if (body) length = body.chunk.length * body.repeat + (body.tail?.length ?? 0);
      const req = http.request(
        {
          host: '127.0.0.1',
          port: this.port,
          method,
          path: urlPath,
          agent: this.agent,
          headers: body === undefined ? headers : { 'content-length': String(length), ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started });
          });
          res.on('error', (e) => {
            clearTimeout(timer);
            reject(e);
          });
        },
      );
      const timer = setTimeout(() => {
        req.destroy(new Error(`no answer within ${timeoutMs} ms (hang)`));
      }, timeoutMs);
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      if (body === undefined) {
        req.end();
        return;
      }
      if (typeof body === 'string' || Buffer.isBuffer(body)) {
        req.end(body);
        return;
      }
      // a body of many chunks: write with back-pressure; the server may answer (413) before it has read all
      let i = 0;
      const writeMore = () => {
        while (i < body.repeat) {
          i++;
          if (!req.write(body.chunk)) {
            req.once('drain', writeMore);
            return;
          }
        }
        req.end(body.tail);
      };
      writeMore();
    });
  }

  /** Stops the server and the worker. */
  async stop(): Promise<void> {
    if (this.worker && !this.crashed) {
      try {
        await this.ask({ type: 'stop' });
      } catch {
        // already gone
      }
    }
    this.agent.destroy();
    await this.worker?.terminate();
    this.worker = undefined;
  }
}
