/**
 * English counts for messages a researcher reads: "1 overlap", "2 overlaps", "0 sub-categories".
 * `plural` is the form for any count other than 1 (default: the singular plus "s").
 */
export function countOf(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
