/** Latency statistics and the plain-text table the bench prints. */

export interface Stats {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentiles of `samples` (ms). */
export function stats(samples: readonly number[]): Stats {
  if (samples.length === 0) throw new Error('stats of no samples');
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] as number;
  return {
    n: s.length,
    min: s[0] as number,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: s[s.length - 1] as number,
    mean: s.reduce((a, b) => a + b, 0) / s.length,
  };
}

/** A duration in ms with sensible precision: 0.0123, 0.412, 4.12, 41.2, 412. */
export function ms(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (v < 0.1) return v.toFixed(4);
  if (v < 10) return v.toFixed(3);
  if (v < 100) return v.toFixed(1);
  return v.toFixed(0);
}

/** A ratio as "1.87x". */
export function ratio(a: number, b: number): string {
  return b > 0 ? `${(a / b).toFixed(2)}x` : 'n/a';
}

/** Bytes as MB (10^6) with one decimal. */
export function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** Renders rows as a Markdown-style table with padded columns (readable in a terminal and pasteable). */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(' | ')} |`;
  const sep = `|${widths.map((w, i) => (i === 0 ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), sep, ...rows.map(line)].join('\n');
}

/** The columns of a latency row: n, p50, p90, p99, min, max. */
export function latencyCells(s: Stats): string[] {
  return [String(s.n), ms(s.p50), ms(s.p90), ms(s.p99), ms(s.min), ms(s.max)];
}

export const LATENCY_HEADER = ['n', 'p50 ms', 'p90 ms', 'p99 ms', 'min ms', 'max ms'];
