/**
 * import_analytics (and import_data's analytics_json / analytics_csv) through the one tool pipeline: a small
 * hand-written GA4 export with hand-computed expectations, merging into existing cases, the two
 * ANALYTICS_NOT_IMPORTED errors with nothing written, and a generated export (scripts/generateGa4.ts)
 * checked against the generator's own ground truth.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readAnalyticsExport } from '../../../src/exchange/importers/analytics';
import { generateGa4 } from '../../../scripts/generateGa4';
import { openFixture, snapshot, type Fixture } from '../domain/projectFixture';

/** The rows of the hand-written export; expectations below are computed by hand from them. */
const HAND_LINES = [
  // user 100.1: 5 events, sessions 1604188800 and 1604275200, one event without params
  '{"event_date":"20201101","event_timestamp":"1604188800000000","event_name":"session_start","user_pseudo_id":"100.1","event_params":[{"key":"ga_session_id","value":{"int_value":"1604188800"}}]}',
  '{"event_date":"20201101","event_timestamp":"1604188810500000","event_name":"page_view","user_pseudo_id":"100.1","event_params":[{"key":"page_location","value":{"string_value":"https://x.example/"}},{"key":"ga_session_id","value":{"int_value":"1604188800"}}]}',
  '{"event_date":"20201102","event_timestamp":"1604275200123456","event_name":"page_view","user_pseudo_id":"100.1","event_params":[{"key":"ga_session_id","value":{"string_value":null,"int_value":1604275200,"float_value":null,"double_value":null}}]}',
  '',
  '{"event_date":"20201102","event_timestamp":1604275260999999,"event_name":"purchase","user_pseudo_id":"100.1","event_params":[{"key":"ga_session_id","value":{"int_value":"1604275200"}},{"key":"value","value":{"double_value":24.99}}]}',
  '{"event_date":"20201031","event_timestamp":"1604188700000000","event_name":"user_engagement","user_pseudo_id":"100.1"}',
  // user 200.2: only automatic events; one ga_session_id with a null value
  '{"event_timestamp":"1604361600000000","event_name":"session_start","user_pseudo_id":"200.2","event_params":[{"key":"ga_session_id","value":{"int_value":"1604361600"}}]}',
  '{"event_timestamp":"1604361601000000","event_name":"user_engagement","user_pseudo_id":"200.2","event_params":[{"key":"ga_session_id","value":null}]}',
  '{"event_timestamp":"1604361602000000","event_name":"user_engagement","user_pseudo_id":"200.2","event_params":[{"key":"ga_session_id","value":{"int_value":"1604361600"}}]}',
  // user 300.3: a tie, one event without a timestamp, no sessions
  '{"event_timestamp":"1604448000000000","event_name":"view_item","user_pseudo_id":"300.3"}',
  '{"event_name":"add_to_cart","user_pseudo_id":"300.3"}',
  // noise: not JSON, not an object, no user, an empty user, no event name
  'not json at all',
  '[1,2]',
  '{"event_name":"page_view","event_timestamp":"1604448000000000"}',
  '{"event_name":"page_view","user_pseudo_id":""}',
  '{"user_pseudo_id":"400.4","event_timestamp":"1604448000000000"}',
];

const EXPECTED: Record<string, Record<string, unknown>> = {
  '100.1': {
    event_count: 5,
    session_count: 2,
    first_event: '2020-10-31T23:58:20.000Z',
    last_event: '2020-11-02T00:01:00.999Z',
    top_event: 'page_view',
    event_page_view_count: 2,
    event_purchase_count: 1,
    event_session_start_count: 1,
    event_user_engagement_count: 1,
  },
  '200.2': {
    event_count: 3,
    session_count: 1,
    first_event: '2020-11-03T00:00:00.000Z',
    last_event: '2020-11-03T00:00:02.000Z',
    top_event: 'user_engagement',
    event_session_start_count: 1,
    event_user_engagement_count: 2,
  },
  '300.3': {
    event_count: 2,
    session_count: 0,
    first_event: '2020-11-04T00:00:00.000Z',
    last_event: '2020-11-04T00:00:00.000Z',
    top_event: 'add_to_cart',
    event_add_to_cart_count: 1,
    event_view_item_count: 1,
  },
};

/** Every case with its typed attributes: name -> {attribute: {type, value}}. */
async function casesWithTypes(fx: Fixture): Promise<Map<string, Record<string, { type: string; value: unknown }>>> {
  const list = await fx.ok<{ cases: { case_id: number; name: string }[] }>('list_cases');
  const out = new Map<string, Record<string, { type: string; value: unknown }>>();
  for (const c of list.cases) {
    const d = await fx.ok<{ attributes: { name: string; type: string; value: unknown }[] }>('get_case', { case_id: c.case_id });
    out.set(c.name, Object.fromEntries(d.attributes.map((a) => [a.name, { type: a.type, value: a.value }])));
  }
  return out;
}

describe('exchange/analytics: import_analytics', function () {
  this.timeout(120_000);
  let fx: Fixture;
  let file: string;
  beforeEach(async () => {
    fx = await openFixture();
    file = path.join(fx.dir, 'events.ndjson');
    fs.writeFileSync(file, `${HAND_LINES.join('\n')}\n`);
  });
  afterEach(async () => {
    await fx.close();
  });

  it('aggregates a hand-written export per user_pseudo_id into typed case attributes', async () => {
    const r = await fx.ok('import_analytics', { source_path: file });
    assert.equal(r.imported, true);
    assert.equal(r.profiles, 3);
    assert.equal(r.events, 10);
    assert.equal(r.lines, HAND_LINES.length);
    assert.equal(r.cases_created, 3);
    assert.equal(r.cases_updated, 0);
    assert.deepEqual(r.skipped, { invalid_json_lines: 2, lines_without_user_pseudo_id: 2, lines_without_event_name: 1 });
    const cases = await casesWithTypes(fx);
    assert.deepEqual([...cases.keys()].sort(), ['100.1', '200.2', '300.3']);
    for (const [name, expected] of Object.entries(EXPECTED)) {
      const got = cases.get(name)!;
      assert.deepEqual(Object.fromEntries(Object.entries(got).map(([k, v]) => [k, v.value])), expected, name);
      assert.equal(got.event_count!.type, 'number');
      assert.equal(got.session_count!.type, 'number');
      assert.equal(got.first_event!.type, 'date');
      assert.equal(got.last_event!.type, 'date');
      assert.equal(got.top_event!.type, 'text');
    }
    assert.equal(
      r.attributes_set,
      Object.values(EXPECTED).reduce((n, e) => n + Object.keys(e).length, 0),
    );
  });

  it('merges into existing cases by name: its attributes overwritten, others kept', async () => {
    const c = await fx.ok('create_case', { name: '100.1' });
    await fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name: 'cohort', value: 'pilot' });
    await fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name: 'event_count', value: 'many' });
    const r = await fx.ok('import_analytics', { source_path: file });
    assert.equal(r.cases_created, 2);
    assert.equal(r.cases_updated, 1);
    const cases = await casesWithTypes(fx);
    assert.equal(cases.size, 3);
    assert.deepEqual(cases.get('100.1')!.cohort, { type: 'text', value: 'pilot' });
    assert.deepEqual(cases.get('100.1')!.event_count, { type: 'number', value: 5 }, 'overwritten with its type');
    // importing the same export again changes nothing
    const again = await fx.ok('import_analytics', { source_path: file });
    assert.equal(again.cases_created, 0);
    assert.equal(again.cases_updated, 3);
    assert.equal(again.attributes_set, 0);
  });

  it('ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND for a missing file or a relative path, writing nothing', async () => {
    const before = await snapshot(fx);
    await fx.fails('import_analytics', { source_path: path.join(fx.dir, 'missing.ndjson') }, 'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND');
    await fx.fails('import_analytics', { source_path: 'events.ndjson' }, 'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND');
    await fx.fails('import_analytics', { source_path: fx.dir }, 'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND');
    assert.deepEqual(await snapshot(fx), before);
  });

  it('ANALYTICS_NOT_IMPORTED/NO_PROFILES when no line has a user and an event, writing nothing', async () => {
    const junk = path.join(fx.dir, 'junk.ndjson');
    fs.writeFileSync(junk, HAND_LINES.slice(11).join('\n'));
    const empty = path.join(fx.dir, 'empty.ndjson');
    fs.writeFileSync(empty, '');
    const pretty = path.join(fx.dir, 'pretty.json');
    fs.writeFileSync(pretty, JSON.stringify({ events: [JSON.parse(HAND_LINES[0]!)] }, null, 2));
    const before = await snapshot(fx);
    const out = await fx.fails('import_analytics', { source_path: junk }, 'ANALYTICS_NOT_IMPORTED/NO_PROFILES');
    assert.ok(!out.envelope.success && /5 line\(s\) read/.test(out.envelope.error), !out.envelope.success ? out.envelope.error : '');
    await fx.fails('import_analytics', { source_path: empty }, 'ANALYTICS_NOT_IMPORTED/NO_PROFILES');
    await fx.fails('import_analytics', { source_path: pretty }, 'ANALYTICS_NOT_IMPORTED/NO_PROFILES');
    assert.deepEqual(await snapshot(fx), before);
    assert.equal((await fx.ok('list_cases')).count, 0);
  });

  it('a generated export (scripts/generateGa4.ts) imports exactly as the generator says it was made', async () => {
    const gen = path.join(fx.dir, 'generated.ndjson');
    const truth = await generateGa4(gen, { targetBytes: 1_500_000, seed: 11, noise: true });
    assert.ok(truth.users.size >= 20, `a realistic mix (${truth.users.size} users)`);
    assert.ok(
      [...truth.users.values()].some((u) => u.sessions > 1),
      'some users return',
    );
    const r = await fx.ok('import_analytics', { source_path: gen });
    assert.equal(r.profiles, truth.users.size);
    assert.equal(r.events, truth.events);
    assert.equal(r.lines, truth.lines);
    assert.equal(r.cases_created, truth.users.size);
    assert.equal(r.skipped.invalid_json_lines, truth.noise.invalid_json);
    assert.equal(r.skipped.lines_without_user_pseudo_id, truth.noise.without_user);
    const cases = await casesWithTypes(fx);
    const automatic = new Set(['session_start', 'first_visit', 'first_open', 'user_engagement']);
    for (const [id, u] of truth.users) {
      const got = cases.get(id);
      assert.ok(got, `case ${id}`);
      const values = Object.fromEntries(Object.entries(got).map(([k, v]) => [k, v.value]));
      // top event, computed here independently of the importer
      const ranked = Object.entries(u.counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      const top = (ranked.find(([n]) => !automatic.has(n)) ?? ranked[0])![0];
      const expected: Record<string, unknown> = {
        event_count: u.events,
        session_count: u.sessions,
        first_event: new Date(Math.floor(u.first_us / 1000)).toISOString(),
        last_event: new Date(Math.floor(u.last_us / 1000)).toISOString(),
        top_event: top,
      };
      for (const [name, n] of Object.entries(u.counts)) expected[`event_${name}_count`] = n;
      assert.deepEqual(values, expected, id);
    }
  });

  it('reads line by line and reports progress in bytes', async () => {
    const seen: number[] = [];
    const read = await readAnalyticsExport(file, (p) => {
      assert.equal(p.phase, 'read');
      assert.equal(p.unit, 'bytes');
      seen.push(p.done);
    });
    assert.equal(read.profiles.size, 3);
    assert.equal(seen[seen.length - 1], fs.statSync(file).size);
    assert.deepEqual(read.first_skipped_lines, [12, 13, 14, 15, 16]);
  });
});

describe('exchange/analytics: import_data analytics_json and analytics_csv', function () {
  this.timeout(60_000);
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('analytics_json delegates to import_analytics: the same cases, the same errors', async () => {
    const file = path.join(fx.dir, 'events.ndjson');
    fs.writeFileSync(file, HAND_LINES.join('\n'));
    await fx.ok('import_data', { format: 'analytics_json', source_path: file });
    const cases = await casesWithTypes(fx);
    for (const [name, expected] of Object.entries(EXPECTED)) {
      assert.deepEqual(Object.fromEntries(Object.entries(cases.get(name)!).map(([k, v]) => [k, v.value])), expected, name);
    }
    // import_data checks the path itself first (IMPORT_FAILED); the analytics importer's own code is FILE_NOT_FOUND
    const missing = await fx.call('import_data', { format: 'analytics_json', source_path: path.join(fx.dir, 'nope.ndjson') });
    assert.ok(
      !missing.envelope.success && ['IMPORT_FAILED', 'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND'].includes(missing.envelope.error_code),
      JSON.stringify(missing.envelope),
    );
    const junk = path.join(fx.dir, 'junk.ndjson');
    fs.writeFileSync(junk, 'x\ny\n');
    await fx.fails('import_data', { format: 'analytics_json', source_path: junk }, 'ANALYTICS_NOT_IMPORTED/NO_PROFILES');
  });

  it('analytics_csv: one case per user (user_pseudo_id by default, or name_column), typed attributes', async () => {
    const file = path.join(fx.dir, 'users.csv');
    fs.writeFileSync(
      file,
      'country,user_pseudo_id,sessions,total_events,first_seen,engagement_tier,subscribed\n' +
        'DE,745846450.1644156613,12,340,2022-02-06,power_user,true\n' +
        'BR,1729145159.1604236735,1,7,2022-03-01,casual,false\n' +
        'JP,99.5,,3,2022-03-02T10:00:00Z,casual,FALSE\n',
    );
    await fx.ok('import_data', { format: 'analytics_csv', source_path: file });
    const cases = await casesWithTypes(fx);
    assert.deepEqual([...cases.keys()].sort(), ['1729145159.1604236735', '745846450.1644156613', '99.5']);
    assert.deepEqual(cases.get('745846450.1644156613'), {
      country: { type: 'text', value: 'DE' },
      sessions: { type: 'number', value: 12 },
      total_events: { type: 'number', value: 340 },
      first_seen: { type: 'date', value: '2022-02-06' },
      engagement_tier: { type: 'text', value: 'power_user' },
      subscribed: { type: 'boolean', value: true },
    });
    assert.equal(cases.get('99.5')!.sessions, undefined, 'an empty cell sets nothing');
    assert.deepEqual(cases.get('99.5')!.subscribed, { type: 'boolean', value: false });
    assert.equal((await fx.ok('list_sources')).count, 0, 'no open-ended sources for analytics');

    const other = await openFixture();
    try {
      await other.ok('import_data', { format: 'analytics_csv', source_path: file, name_column: 'country' });
      const byCountry = await other.ok<{ cases: { name: string }[] }>('list_cases');
      assert.deepEqual(byCountry.cases.map((c) => c.name).sort(), ['BR', 'DE', 'JP']);
    } finally {
      await other.close();
    }
  });
});
