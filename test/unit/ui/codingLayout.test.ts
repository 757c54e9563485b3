/**
 * The pure model of "codes you can see" (src/ui/decorations/codingLayout.ts, colourContrast.ts): which
 * underline lane, stripe column, label and tint each coded passage gets, overlaps kept apart, and label text
 * contrast by the WCAG 2.1 formula checked against published values. No vscode import.
 */
import assert from 'node:assert/strict';
import type { SegmentMark } from '../../../src/domain/model';
import { CODE_PALETTE } from '../../../src/domain/codeColours';
import { contrastRatio, labelTextColour, relativeLuminance } from '../../../src/ui/decorations/colourContrast';
import { assignLanes, layoutCodings, marksForLines, stripesKey, stripesSvg, tintPieces, type CodeLook } from '../../../src/ui/decorations/codingLayout';

const BLUE = '#4E79A7';
const ORANGE = '#F28E2B';
const RED = '#E15759';
const codes = new Map<number, CodeLook>([
  [1, { code_id: 1, name: 'Food security', color: BLUE }],
  [2, { code_id: 2, name: 'Trust', color: ORANGE }],
  [3, { code_id: 3, name: 'Belonging', color: RED }],
]);
let nextId = 1;
const seg = (code_id: number, start_pos: number, end_pos: number): SegmentMark =>
  ({
    segment_id: nextId++,
    code_id,
    source_id: 1,
    start_pos,
    end_pos,
    memo: null,
    importance: 0,
    owner: 'ana',
    session_id: 'local',
    created_at: '2026-01-02T03:04:05Z',
  }) as SegmentMark;

// The test's own WCAG 2.1 arithmetic (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio).
const lum = (hex: string): number => {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)) as [
    number,
    number,
    number,
  ];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const ratio = (a: string, b: string): number => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);

describe('ui/decorations/colourContrast: WCAG 2.1 contrast of label text', () => {
  it('matches published contrast ratios', () => {
    // WCAG 2.1: black on white is 21:1, a colour on itself 1:1
    assert.equal(contrastRatio('#000000', '#FFFFFF'), 21);
    assert.equal(contrastRatio('#FFFFFF', '#000000'), 21);
    assert.equal(contrastRatio('#4E79A7', '#4e79a7'), 1);
    // WebAIM contrast checker (webaim.org/resources/contrastchecker): #767676 on white 4.54:1 (the lightest grey
    // passing AA), #777777 on white 4.48:1 (fails), pure red #FF0000 on white 4:1, #0000FF on white 8.59:1
    assert.equal(contrastRatio('#767676', '#FFFFFF').toFixed(2), '4.54');
    assert.equal(contrastRatio('#777777', '#FFFFFF').toFixed(2), '4.48');
    assert.equal(contrastRatio('#FF0000', '#FFFFFF').toFixed(2), '4.00');
    assert.equal(contrastRatio('#0000FF', '#FFFFFF').toFixed(2), '8.59');
    assert.equal(relativeLuminance('#FFFFFF'), 1);
    assert.equal(relativeLuminance('#000000'), 0);
    assert.throws(() => relativeLuminance('red'), /not an #RRGGBB colour/);
  });

  it('every palette colour gets the label text colour with the higher contrast, at least WCAG AA 4.5:1', () => {
    for (const c of CODE_PALETTE) {
      const text = labelTextColour(c);
      const other = text === '#000000' ? '#FFFFFF' : '#000000';
      assert.ok(ratio(c, text) >= 4.5, `${text} on ${c}: ${ratio(c, text).toFixed(2)}:1`);
      assert.ok(ratio(c, text) >= ratio(c, other), `${text} on ${c} is the better choice`);
    }
    assert.equal(labelTextColour('#1F3A5F'), '#FFFFFF'); // dark navy: white
    assert.equal(labelTextColour('#FFBE7D'), '#000000'); // light orange: black
    assert.equal(labelTextColour('not a colour'), '#000000');
  });
});

describe('ui/decorations/codingLayout: what each coded line shows', () => {
  it('assignLanes: overlapping spans get different lanes, a lane is reused once free, none beyond the limit', () => {
    // A [0,10) B [5,15) C [12,20): C reuses A's lane 0; D overlaps A and B at 6 -> no lane left of 2
    assert.deepEqual(
      assignLanes(
        [
          { from: 0, to: 10 },
          { from: 5, to: 15 },
          { from: 12, to: 20 },
          { from: 6, to: 8 },
        ],
        2,
      ),
      [0, 1, 0, -1],
    );
    // the longer of two spans starting together takes the lower lane; touching spans share a lane
    assert.deepEqual(
      assignLanes(
        [
          { from: 3, to: 4 },
          { from: 3, to: 9 },
          { from: 9, to: 12 },
        ],
        4,
      ),
      [1, 0, 0],
    );
  });

  it('two overlapping codes on one passage: two underline lanes, two stripe columns, two labels with both names', () => {
    const text = 'Interviewer: What made you stay?\nAmara: Knowing the others would notice, and the food we grew.\n';
    const line1 = text.indexOf('Knowing');
    const layout = layoutCodings(text, [seg(2, line1, line1 + 40), seg(1, line1 + 10, line1 + 55)], codes);
    const [trust, food] = layout.segments as [(typeof layout.segments)[0], (typeof layout.segments)[0]];
    assert.equal(trust.code.name, 'Trust');
    assert.deepEqual([trust.underline, food.underline], [0, 1], 'distinct underline lanes');
    assert.deepEqual([trust.column, food.column], [0, 1], 'distinct stripe columns');
    assert.deepEqual([trust.startLine, trust.endLine, food.startLine, food.endLine], [1, 1, 1, 1]);
    const marks = marksForLines(layout, 0, 2);
    assert.equal(marks.length, 1);
    const m = marks[0]!;
    assert.equal(m.line, 1);
    assert.deepEqual(
      m.labels.map((l) => [l.name, l.color]),
      [
        ['Trust', ORANGE],
        ['Food security', BLUE],
      ],
    );
    assert.deepEqual(m.stripes, [ORANGE, BLUE]);
    assert.deepEqual(
      m.labels.map((l) => l.textColor),
      ['#000000', '#000000'],
    );
    // in "both", the overlap is tinted in one code's colour (the lane-0 one), never two translucent layers
    const pieces = tintPieces(layout);
    assert.deepEqual(
      pieces.map((p) => [p.start - line1, p.end - line1, p.color]),
      [
        [0, 40, ORANGE],
        [40, 55, BLUE],
      ],
    );
  });

  it('a segment keeps its stripe column on every line; lines are counted with code points -> UTF-16 past astral characters', () => {
    // line 0 has an emoji (2 UTF-16 units, 1 code point)
    const text = 'We 🌱 grew beans.\n\nIt was about belonging.\nAnd trust, mostly.';
    const cp = [...text];
    const at = (s: string) => [...text.slice(0, text.indexOf(s))].length;
    const long = seg(3, at('grew'), at('mostly')); // lines 0-3
    const short = seg(2, at('belonging'), at('belonging') + 9); // line 2
    const layout = layoutCodings(text, [short, long], codes);
    const l = layout.segments.find((p) => p.code.code_id === 3)!;
    const s = layout.segments.find((p) => p.code.code_id === 2)!;
    assert.equal(text.slice(l.start, l.start + 4), 'grew', 'UTF-16 start after the emoji');
    assert.equal(text.slice(s.start, s.end), 'belonging');
    assert.equal(cp.length, text.length - 1);
    assert.deepEqual([l.startLine, l.endLine, l.column], [0, 3, 0]);
    assert.deepEqual([s.startLine, s.endLine, s.column], [2, 2, 1]);
    const marks = marksForLines(layout, 0, 3, (line) => line === 1);
    assert.deepEqual(
      marks.map((m) => [m.line, m.labels.map((x) => x.name), m.stripes]),
      [
        [0, ['Belonging'], [RED]],
        [1, [], [RED]], // the blank line keeps the stripe, without a label
        [2, ['Belonging', 'Trust'], [RED, ORANGE]],
        [3, ['Belonging'], [RED]],
      ],
    );
    // the window limits the lines
    assert.deepEqual(
      marksForLines(layout, 2, 2).map((m) => m.line),
      [2],
    );
  });

  it('a segment ending at the start of a line does not mark that line; one code twice on a line is one label', () => {
    const text = 'first line\nsecond line\nthird';
    const layout = layoutCodings(text, [seg(1, 0, 11), seg(2, 11, 14), seg(2, 16, 20)], codes);
    const first = layout.segments.find((p) => p.code.code_id === 1)!;
    assert.deepEqual([first.startLine, first.endLine], [0, 0]);
    const marks = marksForLines(layout, 0, 2);
    assert.deepEqual(
      marks.map((m) => [m.line, m.labels.map((l) => l.name)]),
      [
        [0, ['Food security']],
        [1, ['Trust']],
      ],
    );
    // the two Trust segments do not overlap: both on lane 0, but on one line they need two columns
    const trust = layout.segments.filter((p) => p.code.code_id === 2);
    assert.deepEqual(
      trust.map((p) => p.underline),
      [0, 0],
    );
    assert.deepEqual(trust.map((p) => p.column).sort(), [0, 1]);
  });

  it('a third code over the same characters has no underline but keeps its column and label; unknown codes are left out', () => {
    const text = 'Everyone argued about the rota and the water.';
    const layout = layoutCodings(text, [seg(1, 0, 20), seg(2, 0, 30), seg(3, 5, 15), seg(99, 0, 5)], codes);
    assert.equal(layout.segments.length, 3);
    assert.deepEqual(
      layout.segments.map((p) => [p.code.name, p.underline, p.column]),
      [
        ['Trust', 0, 0],
        ['Food security', 1, 1],
        ['Belonging', -1, 2],
      ],
    );
    assert.deepEqual(
      marksForLines(layout, 0, 0)[0]!.labels.map((l) => l.name),
      ['Trust', 'Food security', 'Belonging'],
    );
    // tints never overlap and cover every coded character
    const pieces = tintPieces(layout);
    for (let i = 1; i < pieces.length; i++) assert.ok(pieces[i - 1]!.end <= pieces[i]!.start);
    assert.deepEqual(
      pieces.map((p) => [p.start, p.end, p.code_id]),
      [[0, 30, 2]],
    );
  });

  it('stripes: an SVG bar per column in the code colour (empty columns left blank), stretched to the gutter cell', () => {
    const svg = stripesSvg([BLUE, null, '#e15759']);
    assert.match(svg, /preserveAspectRatio="none"/);
    assert.match(svg, /<rect x="0" y="0" width="3" height="16" fill="#4E79A7"\/>/);
    assert.match(svg, /<rect x="8" y="0" width="3" height="16" fill="#E15759"\/>/);
    assert.doesNotMatch(svg, /x="4"/);
    assert.equal(stripesKey([BLUE, null, 'bogus']), '#4E79A7,-,#808080');
  });
});
