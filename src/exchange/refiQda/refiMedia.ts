/**
 * Where a REFI-QDA export (`.qdpx`, refiExport.ts) puts each media source's file: embedded in the zip
 * (`internal://`), referenced by absolute path (`absolute:///...`, REFI-QDA 1.5 section 8.3), or nowhere.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { ProjectSnapshot, SnapshotSource } from '../projectSnapshot';

/** Largest media file embedded in a `.qdpx` (bytes); larger ones are referenced by path. */
export const MAX_EMBEDDED_MEDIA_BYTES = 256 * 1024 * 1024;

/** Where a media source's file goes: inside the zip, referenced by absolute path, or nowhere (unknown file). */
export type MediaPlacement =
  | { mode: 'internal'; file: string; entry: string; path: string }
  | { mode: 'external'; file: string; path: string; reason: string }
  | { mode: 'none'; reason: string };

/** A path as a REFI `absolute://` URL (section 8.3: forward slashes, `absolute:///C:/...` on Windows). */
export function absoluteUrl(file: string): string {
  const p = file.replace(/\\/g, '/');
  return `absolute://${p.startsWith('/') ? '' : '/'}${p}`;
}

const MIME_EXTENSIONS: Record<string, string> = {
  'audio/mpeg': '.mp3',
  'audio/mp4': '.m4a',
  'audio/wav': '.wav',
  'audio/x-wav': '.wav',
  'audio/ogg': '.ogg',
  'audio/flac': '.flac',
  'video/mp4': '.mp4',
  'video/quicktime': '.mov',
  'video/webm': '.webm',
  'image/jpeg': '.jpg',
  'image/png': '.png',
  'application/pdf': '.pdf',
};

/** The file extension a source's embedded copy gets: the original's, else one from its MIME type, else `.bin`. */
function mediaExtension(s: SnapshotSource): string {
  const ext = s.file_path ? path.extname(s.file_path).toLowerCase() : '';
  if (/^\.[a-z0-9]{1,8}$/.test(ext)) return ext;
  return (s.mime && MIME_EXTENSIONS[s.mime]) || '.bin';
}

/**
 * Decides, per source that has a file (PDF, image, audio, video), where it goes: embedded when the file exists
 * and is at most {@link MAX_EMBEDDED_MEDIA_BYTES}, referenced by absolute path when it is larger, nowhere when
 * it is not found (a warning). Reads file metadata only.
 */
export async function placeMedia(snapshot: ProjectSnapshot): Promise<Map<number, MediaPlacement>> {
  const out = new Map<number, MediaPlacement>();
  for (const s of snapshot.sources) {
    if (s.type === 'text') continue;
    if (!s.file_path) {
      out.set(s.source_id, { mode: 'none', reason: `the ${s.type} source "${s.name}" has no file; only its record is exported` });
      continue;
    }
    let size: number;
    try {
      const st = await fs.stat(s.file_path);
      if (!st.isFile()) throw new Error('not a file');
      size = st.size;
    } catch {
      out.set(s.source_id, {
        mode: 'external',
        file: s.file_path,
        path: absoluteUrl(s.file_path),
        reason: `the file of "${s.name}" (${s.file_path}) was not found; the export refers to its old path`,
      });
      continue;
    }
    if (size > MAX_EMBEDDED_MEDIA_BYTES) {
      out.set(s.source_id, {
        mode: 'external',
        file: s.file_path,
        path: absoluteUrl(s.file_path),
        reason: `the file of "${s.name}" is ${size} bytes (more than ${MAX_EMBEDDED_MEDIA_BYTES}); the export refers to it by its absolute path instead of embedding it`,
      });
      continue;
    }
    const name = `${snapshot.guids.guid('source', s.source_id)}${mediaExtension(s)}`;
    out.set(s.source_id, { mode: 'internal', file: s.file_path, entry: `sources/${name}`, path: `internal://${name}` });
  }
  return out;
}
