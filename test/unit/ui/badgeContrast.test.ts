/**
 * Agent Activity's status badges meet WCAG 2.1 AA for text (contrast ratio >= 4.5:1) whatever the theme
 * (issue 13, item 8; the PENDING badge was white on yellow). The contrast function is first checked against
 * published values: black on white is 21:1 (WCAG 2.1, definition of contrast ratio), #777777 on white is
 * 4.48:1 (the commonly cited just-failing grey, e.g. WebAIM's contrast checker), white on white is 1:1.
 */
import assert from 'node:assert/strict';
import { AA_TEXT_CONTRAST, BADGE_COLOURS, contrastRatio, relativeLuminance } from '../../../src/ui/activity/badgeColours';
import { activityHtml } from '../../../src/ui/activity/activityPage';

describe('ui/activity: status badge contrast (WCAG 2.1)', () => {
  it('computes the published contrast ratios', () => {
    assert.equal(contrastRatio('#000000', '#FFFFFF'), 21);
    assert.equal(contrastRatio('#FFFFFF', '#000000'), 21, 'order does not matter');
    assert.equal(Number(contrastRatio('#777777', '#FFFFFF').toFixed(2)), 4.48);
    assert.equal(contrastRatio('#fff', '#FFFFFF'), 1);
    assert.equal(relativeLuminance('#FFFFFF'), 1);
    assert.equal(relativeLuminance('#000'), 0);
    assert.throws(() => relativeLuminance('yellow'), RangeError);
  });

  it('gives white on yellow (the old PENDING badge) as failing', () => {
    assert.ok(contrastRatio('#FFFFFF', '#CCA700') < AA_TEXT_CONTRAST, 'VS Code dark theme warning yellow with white text');
  });

  for (const [status, c] of Object.entries(BADGE_COLOURS)) {
    it(`${status}: ${c.fg} on ${c.bg} is at least 4.5:1`, () => {
      const ratio = contrastRatio(c.fg, c.bg);
      assert.ok(ratio >= AA_TEXT_CONTRAST, `${status} ${ratio.toFixed(2)}:1`);
    });
  }

  it('the activity page paints every status badge with its checked pair, not with theme colours', () => {
    const html = activityHtml('vscode-resource:', 'vscode-resource:/activity.js');
    for (const [status, c] of Object.entries(BADGE_COLOURS)) {
      assert.ok(html.includes(`.status-${status.toLowerCase()} .badge { color: ${c.fg}; background: ${c.bg}; }`), status);
    }
    assert.doesNotMatch(html, /\.badge[^}]*var\(--vscode-(badge|inputValidation)/, 'no theme colour behind badge text');
  });
});
