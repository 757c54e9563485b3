import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock';
import { isoTime, systemClock } from '../core/clock';
import { ToolError } from '../core/errors';
import type { Disposable } from '../core/lifecycle';

/**
 * One stored agent credential (issue 14 item 2). The token itself is never stored: only the lowercase hex
 * SHA-256 of its UTF-8 bytes. Times are ISO 8601 UTC; `last_used_at` is null until the first call.
 */
export interface StoredAgentCredential {
  name: string;
  token_sha256: string;
  created_at: string;
  last_used_at: string | null;
}

/**
 * Where agent credentials live. Headless: a JSON file per project under the Marginalia home
 * (src/cli/credentials.ts `fileAgentCredentialStorage`); tests and the extension may pass their own.
 * Reads and writes are synchronous and whole-list.
 */
export interface AgentCredentialStorage {
  /** every stored credential ([] when none are stored yet) */
  read(): StoredAgentCredential[];
  /** replaces the stored list */
  write(list: StoredAgentCredential[]): void;
  /**
   * A value that changes whenever the store changed, also by another process (a file's mtime and size),
   * so a running server notices `marginalia agent add/revoke`; absent for stores only this process writes.
   */
  stamp?(): string;
}

/** A store in memory (the default of AgentContext): lost when the process ends. */
export function memoryCredentialStorage(initial: StoredAgentCredential[] = []): AgentCredentialStorage {
  let list = initial.map((c) => ({ ...c }));
  return {
    read: () => list.map((c) => ({ ...c })),
    write: (next) => {
      list = next.map((c) => ({ ...c }));
    },
  };
}

/** The name of the install's own agent token (`MARGINALIA_TOKEN` or the discovery file's token): it is an agent named so. */
export const BUILTIN_AGENT = 'agent';
/** The owner name of the researcher's sessions; no agent may be named so. */
export const RESEARCHER_OWNER = 'researcher';
/** An agent's name: 1-64 characters, letters, digits, space, `.`, `_`, `-`, starting with a letter or digit. */
export const AGENT_NAME = /^[\p{L}\p{N}][\p{L}\p{N} ._-]{0,63}$/u;
/** How often (ms) a successful {@link AgentCredentials.identify} re-checks the store's stamp for changes made by other processes. */
const REFRESH_MS = 250;
/** How much newer (ms) a credential's use must be before `last_used_at` is written to the store again. */
const LAST_USED_WRITE_MS = 60_000;
/** How many recently identified tokens {@link AgentCredentials.identify} remembers (so a request's second check does not hash again). */
const RECENT_MAX = 32;

/** sha256 of `token` (UTF-8) as 32 bytes. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * The researcher's named agent credentials of one project (issue 14 item 2): each agent gets its own
 * bearer token (32 random bytes, base64url), shown once by {@link issue}. Tokens are stored as SHA-256 hashes
 * only; {@link identify} hashes the presented token and compares it with every stored hash in constant time
 * (`timingSafeEqual`, no early exit). {@link revoke} tells {@link onRevoked} listeners at once (the agent
 * context ends the agent's sessions and streams); a credential removed by another process (the CLI) is
 * noticed on the next {@link refresh} and reported the same way.
 */
export class AgentCredentials {
  private stored: StoredAgentCredential[] = [];
  private hashes: { name: string; hash: Buffer }[] = [];
  private stamp: string | undefined;
  private checkedAt = -Infinity;
  private readonly listeners = new Set<(name: string) => void>();
  /** in-memory last use per name (ms), written to the store at most every {@link LAST_USED_WRITE_MS} */
  private readonly lastUsed = new Map<string, number>();
  /** `last_used_at` of the store per name, parsed (ms), so a call does not parse it again; forgotten when the list changes */
  private readonly lastWritten = new Map<string, number>();
  /**
   * Tokens identified since the list last changed (at most {@link RECENT_MAX}, oldest dropped first), with their
   * credential's name: a hit skips the SHA-256 (an HTTP request identifies its token twice: the guard, then
   * the session). Compared in constant time, every entry, no early exit. Whenever the list changes
   * ({@link setList}: issue, revoke, last use, a change by another process noticed by {@link refresh}) only the
   * entries whose credential is still stored with the same hash are kept; the others are zeroed and dropped.
   */
  private recent: { token: Buffer; name: string; hash: Buffer }[] = [];

  constructor(
    private readonly storage: AgentCredentialStorage = memoryCredentialStorage(),
    private readonly clock: Clock = systemClock,
  ) {
    this.load(false);
  }

  /**
   * Creates a credential named `name` and returns its token (the only time it is shown).
   * Errors: INVALID_ARGUMENTS (empty or not {@link AGENT_NAME}), AGENT_EXISTS (a credential of that name
   * exists, or the name is reserved: `agent`, `researcher`).
   */
  issue(name: string): { name: string; token: string } {
    const clean = typeof name === 'string' ? name.trim() : '';
    if (!AGENT_NAME.test(clean))
      throw new ToolError('INVALID_ARGUMENTS', 'name must be 1-64 characters: letters, digits, space, ".", "_" or "-", starting with a letter or digit');
    if (clean.toLowerCase() === BUILTIN_AGENT || clean.toLowerCase() === RESEARCHER_OWNER)
      throw new ToolError('AGENT_EXISTS', `"${clean}" is reserved (the install's own agent token, or the researcher); choose another name`, { name: clean });
    const token = randomBytes(32).toString('base64url');
    this.mutate((list) => {
      if (list.some((c) => c.name.toLowerCase() === clean.toLowerCase()))
        throw new ToolError('AGENT_EXISTS', `An agent named "${clean}" already has a credential; revoke it first or choose another name`, { name: clean });
      list.push({ name: clean, token_sha256: digest(token).toString('hex'), created_at: isoTime(this.clock.now()), last_used_at: null });
      return list;
    });
    return { name: clean, token };
  }

  /** Every issued credential, by creation time (never a token or hash). The install's own token (`agent`) is not listed. */
  list(): { name: string; created_at: string; last_used_at: string | null }[] {
    this.refresh();
    return this.stored.map((c) => {
      const used = this.lastUsed.get(c.name);
      const last = used !== undefined && (c.last_used_at === null || Date.parse(c.last_used_at) < used) ? isoTime(used) : c.last_used_at;
      return { name: c.name, created_at: c.created_at, last_used_at: last };
    });
  }

  /** Revokes the credential `name`: true when it existed (listeners are told), false when unknown. */
  revoke(name: string): boolean {
    let found = false;
    this.mutate((list) => {
      const next = list.filter((c) => c.name !== name);
      found = next.length !== list.length;
      return next;
    });
    if (found) this.revoked(name);
    return found;
  }

  /**
   * The agent a bearer token (bare, without `Bearer `) belongs to, or null. Hashes the token and compares
   * it with every stored hash in constant time. A miss re-reads the store first (a credential just added
   * by another process); a hit re-checks the store at most every 250 ms (a revocation by another process).
   * A token identified since the list last changed is recognised without hashing again (compared in constant
   * time with the remembered tokens); a revocation forgets every remembered token at once.
   */
  identify(token: string): string | null {
    if (!token) return null;
    const now = this.clock.now();
    if (now - this.checkedAt >= REFRESH_MS) this.refresh();
    const presented = Buffer.from(token, 'utf8');
    let found = this.recall(presented);
    if (found === null) {
      const h = digest(token);
      found = this.match(h);
      if (found === null && this.refresh(true)) found = this.match(h);
      if (found !== null) this.remember(presented, found, h);
    }
    if (found !== null) this.used(found, now);
    return found;
  }

  /** The name remembered for `presented`, comparing it with every remembered token (constant time per length). */
  private recall(presented: Buffer): string | null {
    let found: string | null = null;
    for (const r of this.recent) if (r.token.length === presented.length && timingSafeEqual(r.token, presented) && found === null) found = r.name;
    return found;
  }

  private remember(presented: Buffer, name: string, hash: Buffer): void {
    if (this.recent.length >= RECENT_MAX) this.recent.shift()?.token.fill(0);
    this.recent.push({ token: presented, name, hash });
  }

  private match(h: Buffer): string | null {
    let found: string | null = null;
    for (const c of this.hashes) if (timingSafeEqual(c.hash, h) && found === null) found = c.name;
    return found;
  }

  /** Listens for revocations (by {@link revoke}, or noticed by {@link refresh}). */
  onRevoked(listener: (name: string) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  /**
   * Re-reads the store when its stamp changed (another process added or revoked a credential), telling
   * {@link onRevoked} listeners of every name that disappeared. `force`: also when the stamp is the same
   * (stores without stamps). Returns true when the list was re-read.
   */
  refresh(force = false): boolean {
    this.checkedAt = this.clock.now();
    const stamp = this.storage.stamp?.();
    if (!force && stamp === this.stamp) return false;
    if (stamp !== undefined && stamp === this.stamp) return false;
    this.load(true);
    return true;
  }

  private load(tell: boolean): void {
    const before = new Set(this.stored.map((c) => c.name));
    this.stamp = this.storage.stamp?.();
    let list: StoredAgentCredential[];
    try {
      list = this.storage.read();
    } catch {
      list = this.stored;
    }
    this.setList(list);
    if (tell) for (const name of before) if (!this.stored.some((c) => c.name === name)) this.revoked(name);
  }

  private setList(list: StoredAgentCredential[]): void {
    this.lastWritten.clear();
    this.stored = list.filter((c) => typeof c?.name === 'string' && typeof c.token_sha256 === 'string' && /^[0-9a-f]{64}$/.test(c.token_sha256));
    this.hashes = this.stored.map((c) => ({ name: c.name, hash: Buffer.from(c.token_sha256, 'hex') }));
    this.recent = this.recent.filter((r) => {
      const kept = this.hashes.some((c) => c.name === r.name && c.hash.equals(r.hash));
      if (!kept) r.token.fill(0);
      return kept;
    });
  }

  /** Read (fresh), change, write: another process's additions are never lost. */
  private mutate(fn: (list: StoredAgentCredential[]) => StoredAgentCredential[]): void {
    this.refresh();
    const next = fn(this.storage.read().map((c) => ({ ...c })));
    this.storage.write(next);
    this.setList(next);
    this.stamp = this.storage.stamp?.();
    this.checkedAt = this.clock.now();
  }

  private used(name: string, now: number): void {
    this.lastUsed.set(name, now);
    const written = this.lastWritten.get(name);
    if (written !== undefined && now - written < LAST_USED_WRITE_MS) return;
    const c = this.stored.find((x) => x.name === name);
    if (!c) return;
    if (c.last_used_at !== null) {
      const at = Date.parse(c.last_used_at);
      this.lastWritten.set(name, at);
      if (now - at < LAST_USED_WRITE_MS) return;
    }
    try {
      this.mutate((list) => list.map((x) => (x.name === name ? { ...x, last_used_at: isoTime(now) } : x)));
    } catch {
      // a store that cannot be written: the time stays in memory
    }
  }

  private revoked(name: string): void {
    this.lastUsed.delete(name);
    for (const l of [...this.listeners]) {
      try {
        l(name);
      } catch {
        // a listener's failure does not stop the others
      }
    }
  }
}
