/**
 * The colours of the Agent Activity status badges (issue 13, item 8: "Status badges meet WCAG AA contrast in
 * light and dark themes"). Each badge paints its own background, so its text contrast does not depend on the
 * theme: fixed pairs, each checked against WCAG 2.1 AA for normal text (contrast ratio at least 4.5:1,
 * success criterion 1.4.3) by test/unit/ui/badgeContrast.test.ts with {@link contrastRatio}. Theme colours
 * were not used: `inputValidation.warningBackground` with `badge.foreground` is white on yellow in the
 * default dark theme (about 1.6:1), and no theme guarantees an AA pair for them. No vscode import: the
 * webview's style sheet (activityPage.ts) and the unit test read the same table.
 */
import type { ActivityStatus } from '../../protocol/activity';

/** A badge's text colour and background, `#RRGGBB`. */
export interface BadgeColours {
  fg: string;
  bg: string;
}

/** The badge of each status: dark text on the light backgrounds (pending), white on the dark ones. */
export const BADGE_COLOURS: Readonly<Record<ActivityStatus, BadgeColours>> = {
  COMPLETED: { fg: '#FFFFFF', bg: '#1E7B34' },
  PENDING_APPROVAL: { fg: '#1F1F1F', bg: '#F2C94C' },
  QUEUED: { fg: '#1F1F1F', bg: '#C9CED6' },
  REJECTED: { fg: '#FFFFFF', bg: '#8A4B08' },
  FAILED: { fg: '#FFFFFF', bg: '#B3261E' },
};

/** WCAG 2.1 AA's least contrast ratio for normal-size text (success criterion 1.4.3). */
export const AA_TEXT_CONTRAST = 4.5;

/**
 * The relative luminance of an sRGB colour `#RRGGBB` (or `#RGB`), 0 (black) to 1 (white), by WCAG 2.1's
 * definition (https://www.w3.org/TR/WCAG21/#dfn-relative-luminance): each channel c = value/255 is
 * linearised (c <= 0.03928 ? c/12.92 : ((c+0.055)/1.055)^2.4), then L = 0.2126 R + 0.7152 G + 0.0722 B.
 * Throws a RangeError for anything else than a hex colour.
 */
export function relativeLuminance(hex: string): number {
  const m = /^#?([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(hex.trim());
  if (!m) throw new RangeError(`not a #RRGGBB colour: ${hex}`);
  const h = m[1]!.length === 3 ? [...m[1]!].map((c) => c + c).join('') : m[1]!;
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = parseInt(h.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/**
 * The contrast ratio of two colours, 1 to 21, by WCAG 2.1's definition
 * (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio): (L1 + 0.05) / (L2 + 0.05) with L1 the lighter's
 * relative luminance. Order does not matter. Black on white is 21.
 */
export function contrastRatio(a: string, b: string): number {
  const [la, lb] = [relativeLuminance(a), relativeLuminance(b)];
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/** The badges' CSS for the activity page: `.status-<status> .badge { color; background }` for each status. */
export function badgeCss(): string {
  return Object.entries(BADGE_COLOURS)
    .map(([status, c]) => `.status-${status.toLowerCase()} .badge { color: ${c.fg}; background: ${c.bg}; }`)
    .join('\n');
}
