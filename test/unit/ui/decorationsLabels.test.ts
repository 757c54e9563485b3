/**
 * The labels at the end of a coded line (src/ui/decorations/codingLayout.ts compactLabels, labelText): with three
 * or more codes a line named every code and the row ran past the editor's right edge, cut (the editor does not
 * wrap a line again for injected text). Now: one or two names and a "+N" chip whose hover names them all. The
 * expected names and counts are written by hand.
 */
import * as assert from 'node:assert/strict';
import { compactLabels, CROWDED_NAMES_BUDGET, LABEL_MAX, labelText, type LineLabel } from '../../../src/ui/decorations/codingLayout';

const label = (code_id: number, name: string): LineLabel => ({ code_id, name, color: '#4E79A7', textColor: '#FFFFFF' });
const shownNames = (labels: LineLabel[]) => compactLabels(labels).shown.map((s) => s.text);
const moreIds = (labels: LineLabel[]) => compactLabels(labels).more.map((l) => l.code_id);

describe('Labels at the end of a coded line', () => {
  it('one or two codes: every name, no chip (names up to 40 characters)', () => {
    const two = [label(1, 'Food security'), label(2, 'Trust in institutions')];
    assert.deepEqual(shownNames(two), ['Food security', 'Trust in institutions']);
    assert.deepEqual(moreIds(two), []);
    const long = 'Intergenerational transmission of gardening knowledge';
    assert.equal(LABEL_MAX, 40);
    assert.deepEqual(shownNames([label(1, long)]), ['Intergenerational transmission of garde…']);
  });

  it('three codes whose first two names fit 26 characters together: both names and "+1"', () => {
    const three = [label(1, 'Grief and loss'), label(2, 'Gardening'), label(3, 'Seed saving and heritage')];
    assert.equal(CROWDED_NAMES_BUDGET, 26);
    assert.deepEqual(shownNames(three), ['Grief and loss', 'Gardening']); // 14 + 9 = 23 characters
    assert.deepEqual(moreIds(three), [3]);
  });

  it('three codes with long names (the sample line of interview-03-mei): the first name and "+2"', () => {
    const three = [label(1, 'Grief and loss'), label(2, 'Food and cultural identity'), label(3, 'Seed saving and heritage')];
    assert.deepEqual(shownNames(three), ['Grief and loss']);
    assert.deepEqual(moreIds(three), [2, 3]);
  });

  it('a first name longer than the budget is cut to it; five codes: "+4"', () => {
    const five = [label(1, 'Cross-cultural and cross-generational exchange'), label(2, 'A'), label(3, 'B'), label(4, 'C'), label(5, 'D')];
    assert.deepEqual(shownNames(five), ['Cross-cultural and cross-…']);
    assert.equal(shownNames(five)[0]!.length, 26, '25 characters and the ellipsis');
    assert.deepEqual(moreIds(five), [2, 3, 4, 5]);
  });

  it('labelText never splits a surrogate pair and drops a trailing space before the ellipsis', () => {
    assert.equal(labelText('Zoë 🌱🌱🌱', 6), 'Zoë…'); // 5 units would end inside the first 🌱; the space goes
    assert.equal(labelText('Zoë 🌱🌱🌱', 7), 'Zoë 🌱…'); // 6 units end after it
    assert.equal(labelText('short', 7), 'short');
  });
});
