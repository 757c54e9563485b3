// The Codes tree's index without VS Code (src/ui/codebook/codebookIndex.ts): children by parent, category
// paths, damaged hierarchies kept visible, the filter's matches with their ancestors, and one pass per refresh.
import * as assert from 'node:assert/strict';
import type { CategoryWithCount, CodeWithCounts } from '../../../src/domain/ports';
import { buildIndex, foldForMatch, matching, reindex, type CodebookIndex, type CodesNode } from '../../../src/ui/codebook/codebookIndex';

function category(category_id: number, name: string, parent_id: number | null): CategoryWithCount {
  return { category_id, name, parent_id, memo: null, code_count: 0 } as CategoryWithCount;
}
function code(code_id: number, name: string, category_id: number | null): CodeWithCounts {
  return { code_id, name, category_id, color: '#4E79A7', memo: null, segment_count: 0, av_segment_count: 0 } as CodeWithCounts;
}
const label = (n: CodesNode) => (n.kind === 'category' ? `[${n.category.name}]` : n.code.name);
const childrenOf = (ix: CodebookIndex, parent: number | null) => (ix.children.get(parent) ?? []).map(label);

describe('Codes tree index', () => {
  const categories = [category(1, 'Social', null), category(2, 'Family', 1), category(3, 'Kin / extended', 2), category(4, 'Places', null)];
  const codes = [code(10, 'Trust', 1), code(11, 'Weather', null), code(12, 'Cousins', 3), code(13, 'Garden', 4), code(14, 'Zoë', 2)];

  it('lists children by parent, categories before codes, in the given order', () => {
    const ix = buildIndex(codes, categories);
    assert.deepEqual(childrenOf(ix, null), ['[Social]', '[Places]', 'Weather']);
    assert.deepEqual(childrenOf(ix, 1), ['[Family]', 'Trust']);
    assert.deepEqual(childrenOf(ix, 2), ['[Kin / extended]', 'Zoë']);
    assert.deepEqual(childrenOf(ix, 3), ['Cousins']);
  });

  it('gives every category its path from the top level', () => {
    const ix = buildIndex(codes, categories);
    assert.deepEqual(
      [...ix.paths.entries()].sort((a, b) => a[0] - b[0]),
      [
        [1, 'Social'],
        [2, 'Social / Family'],
        [3, 'Social / Family / Kin / extended'],
        [4, 'Places'],
      ],
    );
  });

  it('keeps codes and categories with a missing parent, or in a parent cycle, at the top level', () => {
    const ix = buildIndex([code(1, 'Orphan code', 99)], [category(5, 'A', 6), category(6, 'B', 5), category(7, 'Lost', 42)]);
    assert.deepEqual(childrenOf(ix, null).sort(), ['Orphan code', '[A]', '[B]', '[Lost]']);
    assert.equal(ix.paths.get(7), 'Lost');
  });

  it('the filter shows matching codes with their ancestors, folding case and accents; a category match shows its codes', () => {
    const ix = buildIndex(codes, categories);
    const shown = (q: string) => [...matching(ix, q)].map(label).sort();
    assert.deepEqual(shown('TRUS'), ['Trust', '[Social]']);
    assert.deepEqual(shown('zoe'), ['Zoë', '[Family]', '[Social]']);
    assert.deepEqual(shown('cous'), ['Cousins', '[Family]', '[Kin / extended]', '[Social]']);
    assert.deepEqual(shown('places'), ['Garden', '[Places]']);
    assert.deepEqual(shown('family'), ['Cousins', 'Zoë', '[Family]', '[Kin / extended]', '[Social]']);
    assert.deepEqual(shown('nothing like it'), []);
  });

  it('folds text for matching: lower case, accents removed', () => {
    assert.equal(foldForMatch('Zoë ÉTÉ'), 'zoe ete');
  });

  it('indexes 2,000 codes in 100 nested categories: each under exactly one parent, with its path', () => {
    const cats: CategoryWithCount[] = [];
    for (let i = 1; i <= 100; i++) cats.push(category(i, `Category ${i}`, i > 10 ? ((i - 1) % 10) + 1 : null));
    const many: CodeWithCounts[] = [];
    for (let i = 1; i <= 2000; i++) many.push(code(1000 + i, `Code ${i}`, i % 7 === 0 ? null : (i % 100) + 1));
    const ix = buildIndex(many, cats);
    const counted = [...ix.children.values()].reduce((n, list) => n + list.length, 0);
    assert.equal(counted, 2100, 'every code and category sits under exactly one parent');
    assert.equal(ix.codes.size, 2000);
    assert.equal(ix.paths.get(55), 'Category 5 / Category 55');
  });

  describe('reindex: what a codebook change makes the view redraw', () => {
    const redrawn = (r: ReturnType<typeof reindex>['redraw']) => (r === 'all' ? 'all' : r.map(label).sort());
    const fresh = () =>
      buildIndex(
        codes.map((c) => ({ ...c })),
        categories.map((c) => ({ ...c })),
      );

    it('nothing when nothing changed, and the same node objects', () => {
      const before = fresh();
      const trust = before.codes.get(10);
      const { index, redraw } = reindex(
        before,
        codes.map((c) => ({ ...c })),
        categories.map((c) => ({ ...c })),
      );
      assert.deepEqual(redrawn(redraw), []);
      assert.equal(index.codes.get(10), trust, 'the node object is kept for VS Code');
    });

    it('a code added to a nested category redraws that category only: it keeps its node, what is under it is new', () => {
      const before = fresh();
      const kin = before.categories.get(3);
      const cousins = before.codes.get(12);
      const trust = before.codes.get(10);
      const { redraw, index } = reindex(before, [...codes, code(15, 'Aunts', 3)], categories);
      assert.deepEqual(redrawn(redraw), ['[Kin / extended]']);
      assert.deepEqual(childrenOf(index, 3), ['Cousins', 'Aunts']);
      assert.equal(index.categories.get(3), kin, 'the redrawn category is the node VS Code knows');
      assert.notEqual(index.codes.get(12), cousins, 'a code under it is a new node (VS Code forgets the old ones by object)');
      assert.equal(index.children.get(3)?.[0], index.codes.get(12), 'children and the code map agree');
      assert.equal(index.codes.get(10), trust, 'elsewhere the nodes stay');
    });

    it('a whole redraw answers new node objects everywhere', () => {
      const before = fresh();
      const { redraw, index } = reindex(before, [...codes, code(16, 'Top', null)], categories);
      assert.equal(redraw, 'all');
      assert.notEqual(index.categories.get(1), before.categories.get(1));
    });

    it('a renamed code redraws its row; a code moved between categories redraws both categories', () => {
      assert.deepEqual(
        redrawn(
          reindex(
            fresh(),
            codes.map((c) => (c.code_id === 14 ? { ...c, name: 'Zoe' } : c)),
            categories,
          ).redraw,
        ),
        ['Zoe'],
      );
      assert.deepEqual(
        redrawn(
          reindex(
            fresh(),
            codes.map((c) => (c.code_id === 13 ? { ...c, category_id: 2 } : c)),
            categories,
          ).redraw,
        ),
        ['[Family]', '[Places]'],
      );
    });

    it('a count change inside a redrawn category is not sent twice', () => {
      const moved = codes.map((c) => (c.code_id === 12 ? { ...c, category_id: 2, segment_count: 4 } : c));
      // Cousins leaves Kin / extended (inside Family) for Family: Family is redrawn with everything under it
      assert.deepEqual(redrawn(reindex(fresh(), moved, categories).redraw), ['[Family]']);
    });

    it('a change at the top level redraws everything', () => {
      assert.equal(reindex(fresh(), [...codes, code(16, 'Top', null)], categories).redraw, 'all');
      assert.equal(
        reindex(
          fresh(),
          codes,
          categories.filter((c) => c.category_id !== 4),
        ).redraw,
        'all',
      );
    });

    it('a category deleted inside another redraws its parent', () => {
      const { redraw } = reindex(
        fresh(),
        codes.filter((c) => c.category_id !== 3),
        categories.filter((c) => c.category_id !== 3),
      );
      assert.deepEqual(redrawn(redraw), ['[Family]']);
    });
  });
});
