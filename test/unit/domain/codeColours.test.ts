/**
 * src/domain/codeColours.ts through the pipeline on a real sql.js project: the 20-colour palette, a free colour
 * for every new code (create_code, import_data, suggest_new_code), freed colours reused, and a chosen colour
 * another code already has reported in the result (create_code, set_code_color).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import JSZip from 'jszip';
import { CODE_PALETTE } from '../../../src/domain/codeColours';
import { ALICE, openFixture, type Fixture } from './projectFixture';

/** Tableau 20 as Tableau publishes it (ggthemes' and ColorSchemes.jl's copies), typed by hand in its own order: dark/light pairs. */
const TABLEAU_20 = [
  '#4E79A7',
  '#A0CBE8',
  '#F28E2B',
  '#FFBE7D',
  '#59A14F',
  '#8CD17D',
  '#B6992D',
  '#F1CE63',
  '#499894',
  '#86BCB6',
  '#E15759',
  '#FF9D9A',
  '#79706E',
  '#BAB0AC',
  '#D37295',
  '#FABFD2',
  '#B07AA1',
  '#D4A6C8',
  '#9D7660',
  '#D7B5A6',
];

// The test's own colour arithmetic (WCAG 2.x relative luminance and contrast; CIE 1976 L*a*b*, D65).
const linear = (hex: string): number[] =>
  [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
const luminance = (hex: string): number => {
  const [r, g, b] = linear(hex) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const contrast = (a: string, b: string): number => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
};
const lab = (hex: string): number[] => {
  const [r, g, b] = linear(hex) as [number, number, number];
  const xyz = [(0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b, (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883];
  const [fx, fy, fz] = xyz.map((t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116)) as [number, number, number];
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
};
const deltaE = (a: string, b: string): number => {
  const [p, q] = [lab(a), lab(b)];
  return Math.hypot(p[0]! - q[0]!, p[1]! - q[1]!, p[2]! - q[2]!);
};

describe('domain/codeColours: distinct colours for codes', () => {
  let fx: Fixture;

  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  const colourOf = async (code_id: number): Promise<string> => (await fx.ok('get_code', { code_id })).color;

  it('the palette is Tableau 20: 20 colours told apart (ΔE ≥ 10) and visible on light and dark editors', () => {
    assert.equal(CODE_PALETTE.length, 20);
    assert.deepEqual([...CODE_PALETTE].sort(), [...TABLEAU_20].sort());
    assert.deepEqual(CODE_PALETTE.slice(0, 3), ['#4E79A7', '#F28E2B', '#E15759'], 'the saturated colours come first, in Tableau 10 order');
    for (let i = 0; i < CODE_PALETTE.length; i++) {
      const c = CODE_PALETTE[i]!;
      assert.ok(contrast(c, '#FFFFFF') >= 1.5, `${c} against a light editor: ${contrast(c, '#FFFFFF').toFixed(2)}`);
      assert.ok(contrast(c, '#1E1E1E') >= 3, `${c} against a dark editor: ${contrast(c, '#1E1E1E').toFixed(2)}`);
      for (let j = i + 1; j < CODE_PALETTE.length; j++) {
        const d = CODE_PALETTE[j]!;
        assert.ok(deltaE(c, d) >= 10, `${c} and ${d} differ by ΔE ${deltaE(c, d).toFixed(1)}`);
      }
    }
  });

  it('20 codes created without a colour get 20 different colours; the 21st the least used (the first)', async () => {
    const ids: number[] = [];
    for (let i = 1; i <= 20; i++) ids.push((await fx.ok('create_code', { name: `Code ${i}` })).code_id);
    const colours = await Promise.all(ids.map(colourOf));
    assert.equal(new Set(colours).size, 20);
    assert.deepEqual([...colours].sort(), [...TABLEAU_20].sort());
    assert.equal(colours[0], '#4E79A7');
    const extra = await fx.ok('create_code', { name: 'Code 21' });
    assert.equal(extra.color, '#4E79A7');
    assert.equal(extra.colour_note, undefined, 'a colour the codebook chose is not reported');
    const again = await fx.ok('create_code', { name: 'Code 22' });
    assert.equal(again.color, '#F28E2B', 'then the next least used');
  });

  it('deleting a code frees its colour for the next new code', async () => {
    const ids: number[] = [];
    for (let i = 1; i <= 6; i++) ids.push((await fx.ok('create_code', { name: `Code ${i}` })).code_id);
    const freed = await colourOf(ids[2]!);
    assert.equal(freed, '#E15759');
    await fx.ok('delete_code', { code_id: ids[2] });
    assert.equal((await fx.ok('create_code', { name: 'Newcomer' })).color, '#E15759');
    assert.equal((await fx.ok('create_code', { name: 'Later' })).color, CODE_PALETTE[6]);
  });

  it("a code with a colour nearly the same as a palette colour occupies it (Tableau 10's brown and Tableau 20's)", async () => {
    await fx.ok('create_code', { name: 'Old brown', color: '#9C755F' });
    for (let i = 0; i < 8; i++) await fx.ok('create_code', { name: `Code ${i}` });
    assert.equal((await fx.ok('create_code', { name: 'Ninth' })).color, '#79706E', '#9D7660 is skipped: it looks like #9C755F');
  });

  it('a chosen colour another code has: the code is created as asked and the result says so, with the free colours', async () => {
    const food = await fx.ok('create_code', { name: 'Food security', color: '#1F77B4' });
    assert.equal(food.colour_note, undefined, 'no other code has it');
    await fx.ok('create_code', { name: 'Water', color: '#1f77b4' });
    await fx.ok('create_code', { name: 'Soil', color: '#1F77B4' });
    const auto = await fx.ok('create_code', { name: 'Auto' });
    assert.equal(auto.color, '#4E79A7');
    const out = await fx.ok('create_code', { name: 'Land', color: '#1f77b4', memo: 'land access' });
    assert.equal(out.color, '#1F77B4');
    assert.equal(out.name, 'Land');
    assert.equal(out.colour_note, "#1F77B4 is also the colour of 'Food security' (and 2 more); free palette colours: " + CODE_PALETTE.slice(1).join(', '));
    assert.deepEqual(
      out.other_codes_with_colour.map((c: any) => c.name),
      ['Food security', 'Water', 'Soil'],
    );
    assert.equal(out.free_colours.length, 19);
    assert.ok(!out.free_colours.includes('#4E79A7'));
    assert.equal((await fx.ok('list_codes')).count, 5);
  });

  it('set_code_color to a used colour is made and reported; to a free one, no note', async () => {
    const a = (await fx.ok('create_code', { name: 'Belonging' })).code_id;
    const b = (await fx.ok('create_code', { name: 'Conflict' })).code_id;
    const same = await fx.ok('set_code_color', { code_id: b, color: '#4e79a7' });
    assert.deepEqual([same.old_color, same.new_color], ['#F28E2B', '#4E79A7']);
    assert.match(same.colour_note, /^#4E79A7 is also the colour of 'Belonging'; free palette colours: #F28E2B, #E15759/);
    assert.equal(same.free_colours[0], '#F28E2B', "Conflict's old colour is free again");
    const free = await fx.ok('set_code_color', { code_id: b, color: '#E15759' });
    assert.equal(free.colour_note, undefined);
    assert.equal('free_colours' in free, false);
    const own = await fx.ok('set_code_color', { code_id: a, color: '#4E79A7' });
    assert.equal(own.colour_note, undefined, 'its own colour is no clash');
  });

  it('import_data takes colours no code uses for codes the file brings without one', async () => {
    await fx.ok('create_code', { name: 'Existing one' });
    await fx.ok('create_code', { name: 'Existing two', color: '#E15759' });
    const file = path.join(fx.dir, 'codes.txt');
    fs.writeFileSync(file, 'Trust\nConflict\nSharing\n');
    const r = await fx.ok('import_data', { format: 'code_list', source_path: file });
    assert.equal(r.created.codes, 3);
    const codes = (await fx.ok('list_codes')).codes as { name: string; color: string }[];
    const byName = Object.fromEntries(codes.map((c) => [c.name, c.color]));
    assert.deepEqual([byName.Trust, byName.Conflict, byName.Sharing], ['#F28E2B', '#499894', '#59A14F']);
  });

  it('a REFI-QDA import: codes with a colour keep it (and occupy it), codes without one take free colours', async () => {
    await fx.ok('create_code', { name: 'Existing' });
    const g = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const xml =
      '<?xml version="1.0" encoding="utf-8"?><Project xmlns="urn:QDA-XML:project:1.0" name="fixture" origin="fixture"><CodeBook><Codes>' +
      `<Code guid="${g(1)}" name="Coloured" isCodable="true" color="#F28E2B"/>` +
      `<Code guid="${g(2)}" name="Plain one" isCodable="true"/>` +
      `<Code guid="${g(3)}" name="Plain two" isCodable="true"/>` +
      '</Codes></CodeBook></Project>';
    const zip = new JSZip();
    zip.file('project.qde', xml);
    const file = path.join(fx.dir, 'codes.qdpx');
    fs.writeFileSync(file, await zip.generateAsync({ type: 'nodebuffer' }));
    const r = await fx.ok('import_data', { format: 'refi_qda', source_path: file });
    assert.equal(r.created.codes, 3);
    const codes = (await fx.ok('list_codes')).codes as { name: string; color: string }[];
    const byName = Object.fromEntries(codes.map((c) => [c.name, c.color]));
    assert.deepEqual([byName.Existing, byName.Coloured, byName['Plain one'], byName['Plain two']], ['#4E79A7', '#F28E2B', '#E15759', '#499894']);
  });

  it("an agent's suggested code without a colour gets a free one", async () => {
    await fx.ok('create_code', { name: 'Belonging' });
    const s = await fx.ok('suggest_new_code', { name: 'Shared tools', rationale: 'lending' });
    assert.equal(s.color, '#F28E2B');
    const done = await fx.ok('approve_suggestion', { suggestion_id: s.suggestion_id }, { ...ALICE, session_id: 'sess-bob', user: 'bob' });
    assert.equal(done.color, '#F28E2B');
  });
});
