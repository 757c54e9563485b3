/**
 * The pure part of the coded-segment decorations (no vscode import, so it runs in tests and in
 * bench/decorations.ts): for one source's text, its segments and the codebook, the UTF-16 range, colour
 * and hover markdown of each segment, grouped by colour (one decoration type per colour). The editor side
 * (codedSegmentDecorations.ts) turns the offsets into positions with the document and draws them.
 */
import { OffsetMap } from '../../core/offsets';
import type { SegmentMark } from '../../domain/model';
import type { CodeWithCounts } from '../../domain/ports';

/** One segment as drawn: editor (UTF-16) offsets, end exclusive, and its hover as markdown (theme icons on). */
export interface SegmentDecoration {
  code_id: number;
  start: number;
  end: number;
  hover: string;
}

/** Markdown-escapes text (the same escaping as the codes tree's tooltips). */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, (c) => `\\${c}`);
}

/** The hover of a segment: code name (with an AI badge when an agent made it), memos, coder, session and time. */
export function segmentHover(
  s: SegmentMark,
  code: CodeWithCounts,
  madeByAgent: (sessionId: string | null, role?: 'researcher' | 'agent' | null) => boolean,
): string {
  const ai = madeByAgent(s.session_id, s.coder_role);
  let md = `**${escapeMarkdown(code.name)}**${ai ? ' $(sparkle) AI' : ''}\n\n`;
  if (code.memo) md += `*Code memo:* ${escapeMarkdown(code.memo)}\n\n`;
  if (s.memo) md += `*Segment memo:* ${escapeMarkdown(s.memo)}\n\n`;
  md += `Coded by ${escapeMarkdown(s.owner)}${ai ? ` (agent session ${escapeMarkdown(s.session_id ?? '')})` : ''} · ${escapeMarkdown(s.created_at.slice(0, 16).replace('T', ' '))}`;
  return md;
}

/**
 * The decorations of one source: colour -> its segments' decorations, in segment order. Segments whose
 * code is not in `codes` are left out. Offsets are converted from code points (what Marginalia stores)
 * to UTF-16 (what editors use) with one {@link OffsetMap} of `text`.
 */
export function computeSegmentDecorations(
  text: string,
  segments: readonly SegmentMark[],
  codes: ReadonlyMap<number, CodeWithCounts>,
  madeByAgent: (sessionId: string | null, role?: 'researcher' | 'agent' | null) => boolean,
): Map<string, SegmentDecoration[]> {
  const map = new OffsetMap(text);
  const byColor = new Map<string, SegmentDecoration[]>();
  for (const s of segments) {
    const code = codes.get(s.code_id);
    if (!code) continue;
    let list = byColor.get(code.color);
    if (!list) byColor.set(code.color, (list = []));
    list.push({ code_id: code.code_id, start: map.toUtf16(s.start_pos), end: map.toUtf16(s.end_pos), hover: segmentHover(s, code, madeByAgent) });
  }
  return byColor;
}

/**
 * Line and character of UTF-16 offsets in a text, like a VS Code document's `positionAt` (line breaks
 * `\n`, `\r\n` and `\r`): one scan to build, then a binary search per offset. bench/decorations.ts uses it
 * to count the position conversion the editor does for each range.
 */
export class LineIndex {
  private readonly starts: number[] = [0];
  constructor(private readonly text: string) {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10) this.starts.push(i + 1);
      else if (c === 13) {
        if (text.charCodeAt(i + 1) === 10) i++;
        this.starts.push(i + 1);
      }
    }
  }
  /** Number of lines (a text ending in a line break has an empty last line). */
  get lineCount(): number {
    return this.starts.length;
  }

  /** UTF-16 offset where line `line` (0-based, clamped) starts. */
  lineStart(line: number): number {
    return this.starts[Math.min(Math.max(line, 0), this.starts.length - 1)] as number;
  }

  /** UTF-16 offset where the text of line `line` (0-based, clamped) ends, before its line break. */
  lineEnd(line: number): number {
    const l = Math.min(Math.max(line, 0), this.starts.length - 1);
    if (l === this.starts.length - 1) return this.text.length;
    const next = this.starts[l + 1] as number;
    return this.text.charCodeAt(next - 1) === 10 && this.text.charCodeAt(next - 2) === 13 ? next - 2 : next - 1;
  }

  /** Line and character (UTF-16) of a UTF-16 offset, clamped to the text. */
  positionAt(offset: number): { line: number; character: number } {
    const o = Math.min(Math.max(offset, 0), this.text.length);
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.starts[mid] as number) <= o) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo, character: o - (this.starts[lo] as number) };
  }
}
