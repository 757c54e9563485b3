/**
 * The version check of held calls (issue 14 item 5): what a held call read (the versions of the entities its
 * arguments name), and on approval the refusal (VERSION_CONFLICT) naming each entity changed since and who
 * changed it.
 */
import type { ApprovalRecord, EntityRef } from '../../domain/ports';
import type { OpenProject } from '../../tools/context';
import type { AnyTool } from '../../tools/defineTool';
import { entityRefsOf } from './arguments';
import { StageFailure } from './stageFailure';

/** What a held call read (ApprovalRecord.read_versions): the newest event's sequence number then, and `kind:id` -> version. */
interface ReadVersions {
  seq: number;
  versions: Record<string, number>;
}

/** One entity that changed between holding a call and approving it (VERSION_CONFLICT `details.changes`). */
export interface VersionChange {
  kind: EntityRef['kind'];
  id: number;
  name: string | null;
  read_version: number;
  /** null: it was deleted */
  version: number | null;
  /** the newest stored event about it since the call was held: its type and who caused it; null when none names it */
  changed_by: { event_type: string; user: string; client_type: string; session_id: string; at: string } | null;
}

/**
 * ApprovalRecord.read_versions of a call about to be held: the newest event's sequence number and the
 * version of every entity its arguments name ({@link entityRefsOf}) that exists now; null when it names none
 * or the repository has no versions.
 */
export function readVersions(project: OpenProject, tool: AnyTool, input: unknown): string | null {
  const refs = entityRefsOf(tool.name, input);
  if (refs.length === 0 || !project.repo.entityVersions) return null;
  const versions: Record<string, number> = {};
  for (const v of project.repo.entityVersions(refs)) if (v.version !== null) versions[`${v.kind}:${v.id}`] = v.version;
  const read: ReadVersions = { seq: project.repo.lastEventSeq(), versions };
  return JSON.stringify(read);
}

/**
 * The version check on approval (issue 14 item 5; agent-context spec, conflict table: "the same code renamed
 * by two sessions: version check"): every code, category and source the held call named must still be at
 * the version it had when the call was held, and every text segment must still exist (a segment modified
 * meanwhile is "last write wins" in that table: the approved call's write is the last). Errors: VERSION_CONFLICT (409) naming each change, what it was and who made it
 * (`details.changes`: {@link VersionChange}[]); the request stays pending, so the researcher can approve an
 * edited call or reject it.
 */
export function checkVersions(project: OpenProject, record: ApprovalRecord): void {
  if (!record.read_versions || !project.repo.entityVersions) return;
  let read: ReadVersions;
  try {
    read = JSON.parse(record.read_versions) as ReadVersions;
  } catch {
    return;
  }
  const refs: EntityRef[] = Object.keys(read.versions).map((key) => {
    const [kind, id] = key.split(':');
    return { kind: kind as EntityRef['kind'], id: Number(id) };
  });
  // a text segment changed meanwhile is last write wins (the spec's conflict table); only its deletion conflicts
  const changed = project.repo
    .entityVersions(refs)
    .filter((v) => (v.kind === 'segment' ? v.version === null : v.version !== read.versions[`${v.kind}:${v.id}`]));
  if (changed.length === 0) return;
  const causes = lastEventsAbout(project, read.seq, changed);
  const changes: VersionChange[] = changed.map((v) => ({
    kind: v.kind,
    id: v.id,
    name: v.name,
    read_version: read.versions[`${v.kind}:${v.id}`] as number,
    version: v.version,
    changed_by: causes.get(`${v.kind}:${v.id}`) ?? null,
  }));
  const words = changes.map((c) => {
    const what = c.name !== null ? `${c.kind} '${c.name}'` : `${c.kind} ${c.id}`;
    const how = c.version === null ? 'was deleted' : `changed (version ${c.read_version} -> ${c.version}${c.changed_by ? `: ${c.changed_by.event_type}` : ''})`;
    return `${what} ${how}${c.changed_by ? ` by ${c.changed_by.user} (${c.changed_by.client_type})` : ''}`;
  });
  throw new StageFailure(
    'VERSION_CONFLICT',
    `Since ${record.client_name} asked for this, ${words.join('; ')}. The request still waits: approve it with edited arguments, or reject it.`,
    { request_id: record.request_id, changes },
  );
}

/** The newest stored event after `afterSeq` about each entity of `refs` (aggregate type = kind, aggregate id = id), by `kind:id`; scans at most 20 000 events. */
function lastEventsAbout(project: OpenProject, afterSeq: number, refs: readonly EntityRef[]): Map<string, NonNullable<VersionChange['changed_by']>> {
  const wanted = new Set(refs.map((r) => `${r.kind}:${r.id}`));
  const found = new Map<string, NonNullable<VersionChange['changed_by']>>();
  let after = afterSeq;
  for (let scanned = 0; scanned < 20_000;) {
    const page = project.repo.listEventsSince(after, 500);
    for (const e of page) {
      const key = `${e.aggregate_type}:${e.aggregate_id}`;
      if (wanted.has(key))
        found.set(key, {
          event_type: e.event_type,
          user: e.caused_by.user,
          client_type: e.caused_by.client_type,
          session_id: e.caused_by.session_id,
          at: e.timestamp,
        });
    }
    scanned += page.length;
    if (page.length < 500) break;
    after = page[page.length - 1]?.metadata.sequence_number ?? after;
  }
  return found;
}
