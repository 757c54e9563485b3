/**
 * WCAG 2.1 colour contrast (no vscode import): relative luminance and contrast ratio of `#RRGGBB` colours,
 * and the text colour (black or white) that reads best on a coloured label.
 *
 * Source: WCAG 2.1, definitions "relative luminance" and "contrast ratio"
 * (https://www.w3.org/TR/WCAG21/#dfn-relative-luminance, https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio).
 * The channel threshold is the sRGB standard's 0.04045 (IEC 61966-2-1); WCAG 2.1 prints 0.03928, which
 * gives the same result for every 8-bit channel value (no 8-bit value lies between the two).
 */

/** Parses `#RRGGBB` (case-insensitive) into 0-255 channels; undefined for anything else. */
export function parseHexColour(hex: string): [number, number, number] | undefined {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex.trim());
  if (!m) return undefined;
  return [parseInt(m[1] as string, 16), parseInt(m[2] as string, 16), parseInt(m[3] as string, 16)];
}

/**
 * WCAG 2.1 relative luminance of an `#RRGGBB` colour: 0 (black) to 1 (white). Throws `Error` when the
 * colour is not `#RRGGBB`.
 */
export function relativeLuminance(hex: string): number {
  const rgb = parseHexColour(hex);
  if (!rgb) throw new Error(`not an #RRGGBB colour: ${hex}`);
  const [r, g, b] = rgb.map((v) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2.1 contrast ratio of two `#RRGGBB` colours, (L1 + 0.05) / (L2 + 0.05) with L1 the lighter: 1 to 21 (unitless). */
export function contrastRatio(a: string, b: string): number {
  const la = relativeLuminance(a);
  const lb = relativeLuminance(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/**
 * The text colour for a label drawn on `background` (`#RRGGBB`): `#000000` or `#FFFFFF`, whichever has the
 * higher contrast ratio (black on a tie). For every background the better of the two reaches at least
 * √21 ≈ 4.58:1 (their product is 21), so a label always meets WCAG AA for normal text (4.5:1), in light
 * and dark themes alike since it does not depend on the theme. A background that is not `#RRGGBB` gets
 * the theme-independent fallback `#000000`.
 */
export function labelTextColour(background: string): '#000000' | '#FFFFFF' {
  if (!parseHexColour(background)) return '#000000';
  return contrastRatio(background, '#FFFFFF') > contrastRatio(background, '#000000') ? '#FFFFFF' : '#000000';
}
