/**
 * Finding the copies of an erased source's text that erase_source does not own: exports (REFI-QDA `.qdpx` and
 * `.qdc`, HTML reports, CSV tables, codebooks), the transcript file a source was imported from, anything else
 * under the project's folder. They are listed for the researcher, never deleted: they may be deliberate copies
 * (an archive for the ethics board) or files of other tools.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import JSZip from 'jszip';
import type { TextRedactor } from '../domain/erasure';

/** One file that holds the erased text. */
export interface FoundCopy {
  /** absolute path */
  path: string;
  /** path relative to the project's folder, with `/` */
  relative: string;
  bytes: number;
  /** for archives (.qdpx, .docx, ...): the entries that hold the text */
  entries?: string[];
}

/** Files larger than this are not read (bytes). */
const MAX_FILE_BYTES = 512 * 1024 * 1024;
/** Folders never entered: version-control internals, dependency trees. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

/** The text forms a file may hold the erased text in: as is, HTML-escaped, CSV-quoted (quotes doubled). */
function textForms(text: string): string[] {
  const forms = [text];
  if (/&(#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos|#39);/i.test(text)) {
    forms.push(
      text
        .replace(/<br\s*\/?>/gi, '\n')
        .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
        .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&(apos|#39);/g, "'")
        .replace(/&amp;/g, '&'),
    );
  }
  if (text.includes('""')) forms.push(text.replace(/""/g, '"'));
  if (text.includes('\r\n')) forms.push(text.replace(/\r\n/g, '\n'));
  return forms;
}

function holds(text: string, redactor: TextRedactor): boolean {
  return textForms(text).some((t) => redactor.contains(t));
}

/** The entries of a ZIP archive (`bytes`) whose text holds the erased text; [] when none, null when it is no readable archive. */
async function zipEntriesHolding(bytes: Buffer, redactor: TextRedactor): Promise<string[] | null> {
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(bytes);
  } catch {
    return null;
  }
  const found: string[] = [];
  for (const entry of Object.values(zip.files)) {
    if (entry.dir) continue;
    const content = await entry.async('nodebuffer');
    if (
      holds(content.toString('utf8'), redactor) ||
      (content.length > 1 && content[0] === 0xff && content[1] === 0xfe && holds(content.toString('utf16le'), redactor))
    )
      found.push(entry.name);
  }
  return found;
}

/**
 * Every file under `dir` (recursively, symbolic links not followed) whose bytes hold one of `redactor`'s
 * texts: as UTF-8 (or UTF-16 with a byte-order mark), HTML-escaped, CSV-quoted, or inside a ZIP archive's
 * entries. `skip` returns true for absolute paths not to read (the project's own files that the erasure
 * rewrites). Unreadable files are skipped.
 */
export async function findCopiesOfText(dir: string, redactor: TextRedactor, skip: (absolute: string) => boolean): Promise<FoundCopy[]> {
  const found: FoundCopy[] = [];
  if (redactor.needles.length === 0) return found;
  const walk = async (d: string): Promise<void> => {
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const ent of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const abs = path.join(d, ent.name);
      if (skip(abs)) continue;
      if (ent.isDirectory()) {
        if (!SKIPPED_DIRS.has(ent.name)) await walk(abs);
        continue;
      }
      if (!ent.isFile()) continue;
      let bytes: Buffer;
      try {
        const st = await fs.promises.stat(abs);
        if (st.size > MAX_FILE_BYTES || st.size === 0) continue;
        bytes = await fs.promises.readFile(abs);
      } catch {
        continue;
      }
      const relative = path.relative(dir, abs).split(path.sep).join('/');
      if (bytes.length > 4 && bytes.readUInt32LE(0) === 0x04034b50) {
        const entries = await zipEntriesHolding(bytes, redactor);
        if (entries && entries.length > 0) {
          found.push({ path: abs, relative, bytes: bytes.length, entries });
          continue;
        }
        if (entries) continue;
      }
      const utf16 = bytes[0] === 0xff && bytes[1] === 0xfe;
      if (holds(bytes.toString(utf16 ? 'utf16le' : 'utf8'), redactor)) found.push({ path: abs, relative, bytes: bytes.length });
    }
  };
  await walk(dir);
  return found;
}
