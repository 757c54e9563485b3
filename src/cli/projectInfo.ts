import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import type { ProjectInfo } from '../agent/contextBuilder';
import type { Logger } from '../core/log';
import { projectSideDir } from './credentials';

/** The file beside a project that holds its research frame: `.marginalia/project.yaml`. */
export function projectInfoPath(projectPath: string): string {
  return path.join(projectSideDir(projectPath), 'project.yaml');
}

/**
 * A reader of the project's research frame for the briefing (`qda://project/briefing`) as the file beside the
 * project gives it: the fallback (and import) for fields never saved in the project itself with
 * update_project_briefing; the stored value wins field by field (ContextBuilder.projectInfo).
 * `.marginalia/project.yaml` has the keys `description` (text), `research_questions` (a list of texts,
 * or one text) and `methodology` (text). The file is re-read when its modification time changes; a
 * missing file gives nothing, an unreadable one is logged once and gives nothing.
 */
export function projectInfoReader(projectPath: string, logger?: Logger): () => Partial<ProjectInfo> | undefined {
  const file = projectInfoPath(projectPath);
  let mtime = -1;
  let cached: Partial<ProjectInfo> | undefined;
  let warned = false;
  return () => {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
    } catch {
      mtime = -1;
      cached = undefined;
      return undefined;
    }
    if (stat.mtimeMs === mtime) return cached;
    mtime = stat.mtimeMs;
    try {
      const doc = parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown> | null;
      const text = (v: unknown) => (typeof v === 'string' ? v.trim() : undefined);
      const rq = doc?.research_questions;
      cached = {
        description: text(doc?.description),
        methodology: text(doc?.methodology),
        research_questions: Array.isArray(rq) ? rq.map((q) => String(q).trim()).filter(Boolean) : typeof rq === 'string' && rq.trim() ? [rq.trim()] : undefined,
      };
      warned = false;
    } catch (e) {
      if (!warned) logger?.warn(`${file} could not be read: ${(e as Error).message}`);
      warned = true;
      cached = undefined;
    }
    return cached;
  };
}
