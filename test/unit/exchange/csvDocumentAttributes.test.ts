/**
 * CSV survey imports (src/exchange/importers/csv.ts) and document attributes: where a row's open-ended answers
 * become sources, each answer's source carries the row's other columns as typed document attributes (numbers
 * as number, ISO 8601 dates as date, true/false as boolean, short text as text), the same as the row's case.
 * On a fixture the test writes and on QualCoder's own survey file from ../shared/corpus/surveys.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { requireCorpus } from '../../helpers/serverProcess';
import { openFixture, storedEvents, type Fixture } from '../domain/projectFixture';

type Row = Record<string, any>;

/** list_sources as name -> {attributes, attribute_types}. */
async function sourceAttributes(fx: Fixture): Promise<Map<string, { attributes: Row; attribute_types: Row }>> {
  const sources = (await fx.ok('list_sources')).sources as Row[];
  return new Map(sources.map((s) => [s.name as string, { attributes: s.attributes, attribute_types: s.attribute_types }]));
}

describe('csv survey import: answers as sources with document attributes', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it("gives every answer source its row's typed columns (empty cells set nothing); rows without answers make no source", async () => {
    const long = (s: string) => `${s} ${'and it went on for a while, as answers to open questions do. '.repeat(2)}`.trim();
    const csv = [
      'participant;Age;Interviewed;Consent;Gender;Zip;Story',
      `P1;34;2024-05-01;true;f;007;"${long('We grew beans; the rain came late.')}"`,
      `P2;;2024-05-03T09:30:00Z;FALSE;m;010;"${long('Markets, mostly.')}"`,
      'P3;51;2024-06-10;true;;020;',
    ].join('\r\n');
    const file = path.join(fx.dir, 'wave 1.csv');
    fs.writeFileSync(file, `\ufeff${csv}\r\n`);
    const r = await fx.ok('import_data', { format: 'csv', source_path: file });
    assert.equal(r.created.cases, 3);
    assert.equal(r.created.sources, 2, 'P3 gave no answer');
    assert.equal(r.source_attributes_set, 9, 'P1: 5 attributes, P2: 4 (Age empty)');
    const byName = await sourceAttributes(fx);
    assert.deepEqual(byName.get('P1 - Story'), {
      attributes: { Age: 34, Consent: true, Gender: 'f', Interviewed: '2024-05-01', Zip: '007' },
      attribute_types: { Age: 'number', Consent: 'boolean', Gender: 'text', Interviewed: 'date', Zip: 'text' },
    });
    assert.deepEqual(byName.get('P2 - Story'), {
      attributes: { Consent: false, Gender: 'm', Interviewed: '2024-05-03T09:30:00Z', Zip: '010' },
      attribute_types: { Consent: 'boolean', Gender: 'text', Interviewed: 'date', Zip: 'text' },
    });
    // the case keeps the same typed values
    const cases = (await fx.ok('list_cases')).cases as Row[];
    assert.deepEqual(cases.find((c) => c.name === 'P3')!.attributes, { Age: 51, Consent: true, Interviewed: '2024-06-10', Zip: '020' });
    // one source.attributes_set event per answer source, none for single attributes
    const events = storedEvents(fx.handle);
    assert.deepEqual(
      events.filter((e) => e.event_type === 'source.attributes_set').map((e) => [e.payload.source_name, (e.payload.attributes as Row[]).length]),
      [
        ['P1 - Story', 5],
        ['P2 - Story', 4],
      ],
    );
    assert.equal(events.filter((e) => e.event_type === 'source.attribute_set').length, 0);
    // importing the same file again changes no attribute
    const again = await fx.ok('import_data', { format: 'csv', source_path: file });
    assert.equal(again.source_attributes_set, 0);
    assert.deepEqual(again.reused.sources, 2);
  });

  it("survey456 (QualCoder's own survey file): each free-text answer carries Age, Gender and Interest", async function () {
    const dir = requireCorpus(this, 'surveys');
    const r = await fx.ok('import_data', { format: 'csv', source_path: path.join(dir, 'qualcoder_survey456.csv') });
    assert.equal(r.created.sources, 3);
    const byName = await sourceAttributes(fx);
    assert.deepEqual(byName.get('ID4 - freetext')!.attributes, { Age: 24, Gender: 'f', Interest: 'shopping' });
    assert.deepEqual(byName.get('ID4 - freetext')!.attribute_types, { Age: 'number', Gender: 'text', Interest: 'text' });
    assert.deepEqual(byName.get('ID5 - freetext')!.attributes, { Gender: 'm', Interest: 'golf' }, 'the empty Age cell sets nothing');
    assert.deepEqual(byName.get('ID6 - freetext')!.attributes, { Age: 67, Gender: 'm', Interest: 'gardening' });
  });

  it('cases123 (attributes only, no answers): no sources, so no document attributes', async function () {
    const dir = requireCorpus(this, 'surveys');
    const r = await fx.ok('import_data', { format: 'csv', source_path: path.join(dir, 'qualcoder_cases123.csv') });
    assert.equal(r.created.cases, 3);
    assert.equal(r.created.sources, 0);
    assert.equal(r.source_attributes_set, 0);
    assert.deepEqual(fx.handle.repo.listSourceAttributes(), []);
  });
});
