/**
 * Generator of realistic GA4 analytics exports for tests and benchmarks (no real analytics data is available
 * here; see shared/corpus/ga4/README.md).
 *
 *   npx tsx scripts/generateGa4.ts --out events.ndjson [--size-mb 200] [--seed 1] [--noise]
 *
 * Writes newline-delimited JSON in the row shape of Google's "[GA4] BigQuery Export schema" as
 * shared/notes/corpus.md describes it: one event per line; INT64 values as strings (`event_timestamp` in
 * microseconds, `int_value`, `event_bundle_sequence_id`); `event_params` as `{key, value: {string_value |
 * int_value | double_value}}` with null members sometimes present and sometimes omitted; `user_pseudo_id` like
 * `745846450.1644156613`; `device`, `geo`, `traffic_source`, `privacy_info`, `user_ltv`, `ecommerce` and
 * `items` objects; `platform` WEB/ANDROID/IOS.
 *
 * The traffic is an online shop's, day by day from 2020-11-01: each day brings 60-140 sessions, half of them
 * of new users, the rest of returning ones (a few heavy users return often). A session has `ga_session_id` =
 * its start in unix seconds and `ga_session_number`, starts with `session_start` (and `first_visit` for a new
 * user), then page views, scrolls, engagement, item views, and sometimes add_to_cart, begin_checkout, purchase
 * and search. A day's events are written in timestamp order, so users interleave as in a real export.
 * Generation stops after the session that reaches the size target. Everything follows from the seed
 * (mulberry32), so a seed and a size give the same file byte for byte.
 *
 * `--noise` adds the lines a real pipeline meets now and then: blank lines, a truncated line, a line without
 * `user_pseudo_id`, and a JSON array line, so importers can show they skip them.
 *
 * {@link generateGa4} returns the ground truth (per user: events, distinct sessions, first and last timestamp,
 * counts per event name) so tests can check an import against it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { mulberry32 as rng } from '../src/core/random';

/** Options of {@link generateGa4}. */
export interface Ga4Options {
  /** stop once the file holds at least this many bytes (default 1 MiB) */
  targetBytes?: number;
  /** PRNG seed (default 1) */
  seed?: number;
  /** add blank, truncated, id-less and non-object lines (default false) */
  noise?: boolean;
}

/** What the generator wrote for one user. */
export interface Ga4UserTruth {
  events: number;
  sessions: number;
  /** microseconds */
  first_us: number;
  last_us: number;
  counts: Record<string, number>;
}

/** What {@link generateGa4} wrote. */
export interface Ga4Truth {
  bytes: number;
  /** lines written (events plus noise lines) */
  lines: number;
  events: number;
  /** noise lines by kind */
  noise: { blank: number; invalid_json: number; without_user: number };
  users: Map<string, Ga4UserTruth>;
}

const PAGES = [
  ['/', 'Home'],
  ['/new', 'New arrivals'],
  ['/sale', 'Sale'],
  ['/apparel/mens', "Men's apparel"],
  ['/apparel/womens', "Women's apparel"],
  ['/drinkware', 'Drinkware'],
  ['/bags', 'Bags'],
  ['/stationery', 'Stationery'],
  ['/basket', 'Shopping basket'],
  ['/checkout', 'Checkout'],
  ['/help/shipping', 'Shipping information'],
  ['/store-locator', 'Store locator'],
] as const;
const ITEMS = [
  ['GGOEGAAX0037', 'Café Mug', 'Drinkware', 14.0],
  ['GGOEGXXX0906', 'Organic Tote Bag', 'Bags', 9.99],
  ['GGOEAFKQ0207', 'Zip Hoodie "Été"', 'Apparel', 55.0],
  ['GGOEGOCD0789', 'Notebook – recycled', 'Stationery', 6.5],
  ['GGOEAKDH0194', 'Water Bottle 🌊', 'Drinkware', 22.0],
] as const;
const GEO = [
  ['Europe', 'Western Europe', 'Germany', 'Bavaria', 'Munich'],
  ['Europe', 'Northern Europe', 'United Kingdom', 'England', 'London'],
  ['Americas', 'Northern America', 'United States', 'California', 'San Jose'],
  ['Americas', 'South America', 'Brazil', 'São Paulo', 'São Paulo'],
  ['Asia', 'Eastern Asia', 'Japan', 'Tokyo', 'Tokyo'],
  ['Europe', 'Southern Europe', 'Spain', 'Catalonia', 'Barcelona'],
] as const;
const DEVICES = [
  { category: 'desktop', os: 'Windows', osv: 'Windows 10', browser: 'Chrome', bv: '87.0', platform: 'WEB' },
  { category: 'desktop', os: 'Macintosh', osv: 'Macintosh Intel 10.15', browser: 'Safari', bv: '14.0', platform: 'WEB' },
  { category: 'mobile', os: 'Android', osv: 'Android 10', browser: 'Chrome', bv: '86.0', platform: 'ANDROID' },
  { category: 'mobile', os: 'iOS', osv: 'iOS 14.2', browser: 'Safari', bv: '14.0', platform: 'IOS' },
  { category: 'tablet', os: 'iOS', osv: 'iPadOS 14.1', browser: 'Safari', bv: '14.0', platform: 'WEB' },
] as const;
const TRAFFIC = [
  ['(direct)', '(none)', '(direct)'],
  ['google', 'organic', 'google'],
  ['(referral)', 'referral', 'newsletter.example.org'],
  ['winter_sale', 'cpc', 'google'],
] as const;

interface User {
  id: string;
  first_touch_us: number;
  sessions: number;
  device: (typeof DEVICES)[number];
  geo: (typeof GEO)[number];
  traffic: (typeof TRAFFIC)[number];
  /** how likely the user comes back on a given pick (heavy users more) */
  weight: number;
  /** the user's latest event so far, in microseconds */
  last_us: number;
}

const DAY_US = 86_400_000_000;
const START_US = Date.UTC(2020, 10, 1) * 1000;

/**
 * Writes a GA4 export to `outPath` (see the file comment) and returns its ground truth.
 * Deterministic for a given seed and target size.
 */
export async function generateGa4(outPath: string, opts: Ga4Options = {}): Promise<Ga4Truth> {
  const target = opts.targetBytes ?? 1024 * 1024;
  const rand = rng(opts.seed ?? 1);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const truth: Ga4Truth = { bytes: 0, lines: 0, events: 0, noise: { blank: 0, invalid_json: 0, without_user: 0 }, users: new Map() };
  const users: User[] = [];
  fs.mkdirSync(path.dirname(outPath), { recursive: true });
  const out = fs.createWriteStream(outPath);
  let bundle = 1000;

  const write = async (chunk: string) => {
    truth.bytes += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  };
  const param = (key: string, value: { s?: string; i?: number; d?: number }) => {
    const v: Record<string, unknown> = {};
    const explicitNulls = rand() < 0.3;
    if (value.s !== undefined) v.string_value = value.s;
    else if (explicitNulls) v.string_value = null;
    if (value.i !== undefined) v.int_value = String(value.i);
    else if (explicitNulls) v.int_value = null;
    if (explicitNulls) v.float_value = null;
    if (value.d !== undefined) v.double_value = value.d;
    else if (explicitNulls) v.double_value = null;
    return { key, value: v };
  };

  for (let day = 0; truth.bytes < target; day++) {
    const dayStart = START_US + day * DAY_US;
    const date = new Date(dayStart / 1000).toISOString().slice(0, 10).replace(/-/g, '');
    const rows: { ts: number; line: string }[] = [];
    let pendingBytes = 0;
    const sessionsToday = int(60, 140);
    for (let s = 0; s < sessionsToday && truth.bytes + pendingBytes < target; s++) {
      let user: User;
      let isNew = false;
      if (users.length === 0 || rand() < 0.5) {
        const firstTouch = dayStart + Math.floor(rand() * DAY_US * 0.95);
        user = {
          id: `${int(100_000_000, 2_147_483_647)}.${Math.floor(firstTouch / 1_000_000)}`,
          first_touch_us: firstTouch,
          sessions: 0,
          device: pick(DEVICES),
          geo: pick(GEO),
          traffic: pick(TRAFFIC),
          weight: rand() < 0.1 ? 8 : 1,
          last_us: 0,
        };
        users.push(user);
        isNew = true;
      } else {
        // returning: recent users and heavy users more often
        let u = users[users.length - 1 - Math.floor(Math.pow(rand(), 2) * users.length)] as User;
        for (let k = 0; k < 3 && rand() > u.weight / 8; k++) u = users[users.length - 1 - Math.floor(Math.pow(rand(), 2) * users.length)] as User;
        user = u;
      }
      user.sessions++;
      // a returning user's session starts at least 30 minutes after their last event
      let ts = isNew ? user.first_touch_us : Math.max(dayStart + Math.floor(rand() * DAY_US * 0.95), user.last_us + 1_800_000_000);
      const sessionId = Math.floor(ts / 1_000_000);
      const events: { name: string; params: ReturnType<typeof param>[]; item?: (typeof ITEMS)[number] }[] = [];
      if (isNew) events.push({ name: 'first_visit', params: [] });
      events.push({ name: 'session_start', params: [] });
      const views = int(1, 8);
      for (let v = 0; v < views; v++) {
        const [loc, title] = pick(PAGES);
        const pageParams = [param('page_location', { s: `https://shop.example.com${loc}` }), param('page_title', { s: title })];
        if (v > 0) pageParams.push(param('page_referrer', { s: `https://shop.example.com${pick(PAGES)[0]}` }));
        events.push({ name: 'page_view', params: pageParams });
        if (rand() < 0.35) events.push({ name: 'scroll', params: [param('percent_scrolled', { i: 90 }), ...pageParams.slice(0, 1)] });
        if (rand() < 0.3) events.push({ name: 'view_item', params: pageParams.slice(0, 1), item: pick(ITEMS) });
        if (rand() < 0.08)
          events.push({ name: 'view_search_results', params: [param('search_term', { s: pick(['mug', 'hoodie', 'tote bag', 'café', 'bottle']) })] });
        if (rand() < 0.06) events.push({ name: 'add_to_cart', params: pageParams.slice(0, 1), item: pick(ITEMS) });
        if (rand() < 0.1) events.push({ name: 'click', params: [param('link_url', { s: 'https://help.example.com/faq' }), param('outbound', { s: 'true' })] });
      }
      if (events.some((e) => e.name === 'add_to_cart') && rand() < 0.5) {
        events.push({ name: 'begin_checkout', params: [] });
        if (rand() < 0.5)
          events.push({
            name: 'purchase',
            params: [param('transaction_id', { s: String(int(10_000, 99_999)) }), param('value', { d: 24.99 })],
            item: pick(ITEMS),
          });
      }
      if (rand() < 0.7) events.push({ name: 'user_engagement', params: [param('engagement_time_msec', { i: int(500, 90_000) })] });

      let t = truth.users.get(user.id);
      if (!t) truth.users.set(user.id, (t = { events: 0, sessions: 0, first_us: Number.POSITIVE_INFINITY, last_us: Number.NEGATIVE_INFINITY, counts: {} }));
      t.sessions++;
      for (const e of events) {
        ts += int(0, 40_000_000);
        const params = [
          param('ga_session_id', { i: sessionId }),
          param('ga_session_number', { i: user.sessions }),
          param('engaged_session_event', { i: 1 }),
          ...e.params,
        ];
        if (rand() < 0.5) params.push(param('session_engaged', { s: '1' }));
        const item = e.item;
        const row = {
          event_date: date,
          event_timestamp: String(ts),
          event_name: e.name,
          event_params: params,
          event_previous_timestamp: null,
          event_value_in_usd: e.name === 'purchase' && item ? item[3] : null,
          event_bundle_sequence_id: String(bundle++),
          event_server_timestamp_offset: null,
          user_id: null,
          user_pseudo_id: user.id,
          privacy_info: { analytics_storage: null, ads_storage: null, uses_transient_token: 'No' },
          user_properties: [],
          user_first_touch_timestamp: String(user.first_touch_us),
          user_ltv: { revenue: 0, currency: 'USD' },
          device: {
            category: user.device.category,
            mobile_brand_name: user.device.category === 'desktop' ? null : user.device.os === 'iOS' ? 'Apple' : 'Google',
            mobile_model_name: null,
            mobile_marketing_name: null,
            mobile_os_hardware_model: null,
            operating_system: user.device.os,
            operating_system_version: user.device.osv,
            vendor_id: null,
            advertising_id: null,
            language: pick(['en-us', 'de-de', 'en-gb', 'pt-br', 'ja-jp', 'es-es']),
            is_limited_ad_tracking: 'No',
            time_zone_offset_seconds: null,
            browser: null,
            browser_version: null,
            web_info: { browser: user.device.browser, browser_version: user.device.bv, hostname: 'shop.example.com' },
          },
          geo: { continent: user.geo[0], sub_continent: user.geo[1], country: user.geo[2], region: user.geo[3], city: user.geo[4], metro: '(not set)' },
          app_info: null,
          traffic_source: { name: user.traffic[0], medium: user.traffic[1], source: user.traffic[2] },
          stream_id: '2100450278',
          platform: user.device.platform,
          event_dimensions: null,
          ecommerce: item
            ? {
                total_item_quantity: '1',
                purchase_revenue_in_usd: e.name === 'purchase' ? item[3] : null,
                unique_items: '1',
                transaction_id: e.name === 'purchase' ? String(bundle) : null,
              }
            : null,
          items: item ? [{ item_id: item[0], item_name: item[1], item_category: item[2], price_in_usd: item[3], quantity: '1' }] : [],
        };
        const line = JSON.stringify(row);
        rows.push({ ts, line });
        pendingBytes += line.length + 1;
        t.events++;
        t.counts[e.name] = (t.counts[e.name] ?? 0) + 1;
        if (ts < t.first_us) t.first_us = ts;
        if (ts > t.last_us) t.last_us = ts;
        truth.events++;
      }
      user.last_us = ts;
    }
    rows.sort((a, b) => a.ts - b.ts);
    let chunk = '';
    for (const r of rows) {
      chunk += `${r.line}\n`;
      truth.lines++;
    }
    if (opts.noise) {
      chunk += '\n{"event_date":"' + date + '","event_timestamp":"' + String(dayStart) + '","event_na\n';
      chunk +=
        JSON.stringify({ event_date: date, event_timestamp: String(dayStart + 1), event_name: 'page_view', event_params: [], user_pseudo_id: null }) + '\n';
      chunk += '[1,2,3]\n';
      truth.lines += 4;
      truth.noise.blank++;
      truth.noise.invalid_json += 2;
      truth.noise.without_user++;
    }
    await write(chunk);
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  return truth;
}

function argValue(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  const outPath = argValue(argv, '--out');
  if (!outPath) {
    process.stderr.write('usage: npx tsx scripts/generateGa4.ts --out FILE [--size-mb N] [--seed N] [--noise]\n');
    process.exit(2);
  }
  const sizeMb = Number(argValue(argv, '--size-mb') ?? '1');
  const seed = Number(argValue(argv, '--seed') ?? '1');
  void generateGa4(path.resolve(outPath), { targetBytes: Math.round(sizeMb * 1024 * 1024), seed, noise: argv.includes('--noise') }).then((t) => {
    process.stdout.write(`${outPath}: ${(t.bytes / 1048576).toFixed(1)} MB, ${t.events} events, ${t.users.size} users, ${t.lines} lines\n`);
  });
}
