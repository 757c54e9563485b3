/**
 * What the inverse of every kind of event works with (src/domain/undoInverse.ts applies them; the inverses
 * themselves are in invertCoding.ts, invertCategory.ts, invertCase.ts and invertSource.ts): the ids of items
 * made again, the NOT_UNDOABLE "blocked" refusal, and the owner an item made again keeps.
 */
import { ToolError } from '../../core/errors';
import type { DomainContext } from '../events';
import type { Actor, CoderRole } from '../model';
import type { ProjectRepository } from '../ports';
import type { Names } from '../undoWords';

/** The context the inverses run in (the caller's transaction). */
export type Ctx = DomainContext<ProjectRepository>;

/** New ids given to items an inverse made again, by kind and old id (later events of the same action name the old ids). */
export class IdMap {
  private readonly maps = new Map<string, Map<number, number>>();
  set(kind: string, from: number, to: number): void {
    let m = this.maps.get(kind);
    if (!m) this.maps.set(kind, (m = new Map()));
    m.set(from, to);
  }
  get(kind: string, id: number): number {
    return this.maps.get(kind)?.get(id) ?? id;
  }
  /** `id` remapped, null staying null */
  opt(kind: string, id: unknown): number | null {
    return id === null || id === undefined ? null : this.get(kind, id as number);
  }
}

/** A refusal because the state changed since the action. */
export function blocked(what: string, why: string, extra: Record<string, unknown> = {}): ToolError {
  return new ToolError('NOT_UNDOABLE', `Cannot ${what}: ${why}.`, { reason: 'blocked', ...extra });
}

/**
 * `ctx` acting as the owner (and session) an event recorded for an item, so what undo makes again keeps the
 * coder who made it (stored as `owner`); without them (an event of undo's own), the caller.
 */
export function ownedBy(ctx: Ctx, p: Record<string, unknown>): Ctx {
  const user = typeof p.owner === 'string' ? p.owner : ctx.actor.user;
  const session = typeof p.session_id === 'string' ? p.session_id : ctx.actor.session_id;
  const role = roleOfSession(ctx, session);
  const actor: Actor = { ...ctx.actor, user, session_id: session };
  if (role) actor.role = role;
  else delete actor.role;
  return { ...ctx, actor };
}

/**
 * The coder role of what `session` made, for an item undo makes again (migration 14's `coder_role`): the caller's
 * own session → the caller's role; the local UI → researcher; else the role its session.connected event names;
 * a session with no such event ran without the agent layer (tests, the sample seeder): the caller's role. Null:
 * a session connected before roles were recorded.
 */
export function roleOfSession(ctx: Ctx, session: string | null): CoderRole | null {
  if (session === null || session === ctx.actor.session_id) return ctx.actor.role ?? null;
  if (session === 'local') return 'researcher';
  const connected = ctx.repo.findSessionConnected(session, Number.MAX_SAFE_INTEGER);
  // no agent layer: the role followed the client type, as the caller's own did
  if (!connected) return ctx.actor.role ?? null;
  const role = connected.payload.role;
  return role === 'researcher' || role === 'agent' ? role : null;
}

/** A payload value read as a nullable string (null for null and undefined). */
export const nullableStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** What the inverse of one event works with. */
export interface Inversion {
  ctx: Ctx;
  p: Record<string, unknown>;
  repo: ProjectRepository;
  ids: IdMap;
  what: string;
  names: Names;
  /** the refusal for a thing that no longer has the value the event gave it */
  changedSince: (thing: string, now: string) => ToolError;
}
