import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SegmentRules } from '@herald/contracts';
import { applySegmentRules } from '../src/features/segments/segment-rules';
import { ManualClock } from '../src/platform/clock';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// Segments API (spec §2 Segments, §3 Segment, §5 "Segment name is required",
// §7 Segments): CRUD, validation, every rule alone and combined, estimates.

const DAY = 86_400_000;

const UA = {
  chromeWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  firefoxLinux: 'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0',
  safariIos:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  edgeWindows:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.87',
  chromeAndroid: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
  safariMac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
};
const IP = { GB: '81.2.69.142', US: '8.8.8.8', DE: '5.9.0.1', FR: '90.0.0.1', none: '127.0.0.1' };

function subscription() {
  const ecdh = crypto.createECDH('prime256v1');
  return {
    endpoint: `https://fcm.googleapis.com/fcm/send/${crypto.randomBytes(16).toString('base64url')}`,
    keys: { p256dh: ecdh.generateKeys().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') },
  };
}

describe('segments API', () => {
  let t: TestApp;
  let owner: TestUser;
  let site: { id: string };
  const clock = new ManualClock(Date.UTC(2026, 4, 1, 8));
  const start = clock.now();
  /** Subscriber ids by the letter the tests call them. */
  const sub: Record<string, string> = {};

  async function addSubscriber(siteId: string, userAgent: string, address: string): Promise<string> {
    const response = await t.request('POST', `/api/public/sites/${siteId}/subscribers`, {
      body: { subscription: subscription(), language: 'en-US', timezone: 'UTC' },
      headers: { 'user-agent': userAgent },
      remoteAddress: address,
    });
    expect(response.status).toBe(201);
    return response.body.data.subscriber.id;
  }

  async function setTags(id: string, tags: string[]) {
    const response = await t.request('PATCH', `/api/subscribers/${id}/tags`, { token: owner.token, body: { tags } });
    expect(response.status).toBe(200);
  }

  const create = (body: unknown, siteId = site.id, token = owner.token) => t.request('POST', `/api/sites/${siteId}/segments`, { token, body });
  const estimate = async (rules: unknown): Promise<number> => {
    const created = await create({ name: `probe ${crypto.randomUUID()}`, rules });
    expect(created.status).toBe(201);
    const counted = await t.request('POST', `/api/segments/${created.body.data.segment.id}/estimate`, { token: owner.token });
    expect(counted.status).toBe(200);
    expect(counted.body.data.estimated_count).toBe(created.body.data.segment.estimated_count);
    await t.request('DELETE', `/api/segments/${created.body.data.segment.id}`, { token: owner.token });
    return counted.body.data.estimated_count;
  };
  /** The exact subscribers the filter selects (the same function the sender uses). */
  const matching = async (rules: SegmentRules): Promise<string[]> => {
    const query = t.ctx.db.selectFrom('subscribers').select('subscribers.id').where('subscribers.site_id', '=', site.id).where('subscribers.is_active', '=', 1);
    const rows = await applySegmentRules(query, rules, clock.now()).execute();
    const letters = Object.fromEntries(Object.entries(sub).map(([letter, id]) => [id, letter]));
    return rows.map((r) => letters[r.id] ?? r.id).sort();
  };

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
    site = await t.createSite(owner.token);
    // Day 0: A, B; day 3: C; day 8: D; day 10: E (then unsubscribed), F.
    sub.A = await addSubscriber(site.id, UA.chromeWindows, IP.GB);
    sub.B = await addSubscriber(site.id, UA.firefoxLinux, IP.US);
    clock.set(start + 3 * DAY);
    sub.C = await addSubscriber(site.id, UA.safariIos, IP.DE);
    clock.set(start + 8 * DAY);
    sub.D = await addSubscriber(site.id, UA.edgeWindows, IP.US);
    clock.set(start + 10 * DAY);
    sub.E = await addSubscriber(site.id, UA.chromeAndroid, IP.GB);
    sub.F = await addSubscriber(site.id, UA.safariMac, IP.none);
    await setTags(sub.A, ['vip', 'newsletter']);
    await setTags(sub.B, ['vip']);
    await setTags(sub.D, ['newsletter', 'VIP']);
    await setTags(sub.E, ['vip', 'newsletter']);
    expect((await t.request('DELETE', `/api/subscribers/${sub.E}`, { token: owner.token })).status).toBe(200);
    clock.set(start + 10 * DAY + 60_000);
  });
  afterAll(async () => t.close());

  it('files the test subscribers under the names the rules use', async () => {
    const list = await t.request('GET', `/api/sites/${site.id}/subscribers?limit=200`, { token: owner.token });
    const byId = new Map(list.body.data.subscribers.map((s: any) => [s.id, `${s.browser}/${s.os}/${s.country}`]));
    expect([sub.A, sub.B, sub.C, sub.D, sub.E, sub.F].map((id) => byId.get(id))).toEqual([
      'Chrome/Windows/GB',
      'Firefox/Linux/US',
      'Safari/iOS/DE',
      'Edge/Windows/US',
      'Chrome/Android/GB',
      'Safari/macOS/Unknown',
    ]);
  });

  it('creates, reads, lists, renames, changes the rules of and deletes a segment', async () => {
    const created = await create({ name: '  Chrome fans  ', rules: { browser: 'Chrome' } });
    expect(created.status).toBe(201);
    const segment = created.body.data.segment;
    expect(segment).toEqual({
      id: expect.any(String),
      site_id: site.id,
      name: 'Chrome fans',
      rules: { browser: 'Chrome' },
      estimated_count: 1, // A; E is Chrome too but unsubscribed.
      // A small site: counted exactly (segments-estimate.test.ts has the large one).
      is_estimate: false,
      sample_size: null,
      created_at: new Date(clock.now()).toISOString(),
      updated_at: new Date(clock.now()).toISOString(),
    });

    const got = await t.request('GET', `/api/segments/${segment.id}`, { token: owner.token });
    expect(got.status).toBe(200);
    expect(got.body.data.segment).toEqual(segment);

    const listed = await t.request('GET', `/api/sites/${site.id}/segments`, { token: owner.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.segments).toEqual([segment]);
    clock.advance(1000);
    const newer = (await create({ name: 'Newer' })).body.data.segment;
    const both = await t.request('GET', `/api/sites/${site.id}/segments`, { token: owner.token });
    expect(both.body.data.segments.map((s: any) => s.name)).toEqual(['Newer', 'Chrome fans']);
    expect((await t.request('DELETE', `/api/segments/${newer.id}`, { token: owner.token })).status).toBe(200);

    clock.advance(60_000);
    const renamed = await t.request('PATCH', `/api/segments/${segment.id}`, { token: owner.token, body: { name: 'Chrome users' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.segment).toMatchObject({ name: 'Chrome users', rules: { browser: 'Chrome' }, estimated_count: 1, created_at: segment.created_at });
    expect(renamed.body.data.segment.updated_at).toBe(new Date(clock.now()).toISOString());

    // `rules` replaces the whole rule set.
    const changed = await t.request('PATCH', `/api/segments/${segment.id}`, { token: owner.token, body: { rules: { os: 'Windows' } } });
    expect(changed.status).toBe(200);
    expect(changed.body.data.segment).toMatchObject({ name: 'Chrome users', rules: { os: 'Windows' }, estimated_count: 2 });
    const cleared = await t.request('PATCH', `/api/segments/${segment.id}`, { token: owner.token, body: { rules: {} } });
    expect(cleared.body.data.segment).toMatchObject({ rules: {}, estimated_count: 5 });

    const deleted = await t.request('DELETE', `/api/segments/${segment.id}`, { token: owner.token });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, data: { deleted: true } });
    expect((await t.request('GET', `/api/segments/${segment.id}`, { token: owner.token })).status).toBe(404);
    expect((await t.request('DELETE', `/api/segments/${segment.id}`, { token: owner.token })).status).toBe(404);
    expect((await t.request('GET', `/api/sites/${site.id}/segments`, { token: owner.token })).body.data.segments).toEqual([]);
  });

  it('validates names and rules with clear 400s, and keeps only non-empty rules', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ rules: {} }, /^name: Segment name is required$/],
      [{ name: '   ' }, /^name: Segment name is required$/],
      [{ name: 'x'.repeat(101) }, /Segment name must be at most 100 characters/],
      [{ name: 'A', rules: { browser: 'Opera' } }, /^rules\.browser: Browser must be one of Chrome, Firefox, Safari, Edge$/],
      [{ name: 'A', rules: { os: 'ChromeOS' } }, /^rules\.os: Operating System must be one of Windows, macOS, Linux, Android, iOS$/],
      [{ name: 'A', rules: { country: 'DE, Narnia' } }, /"Narnia" is not a country code/],
      [{ name: 'A', rules: { subscribed_days_ago: 0 } }, /Subscribed Days Ago must be 1 or more/],
      [{ name: 'A', rules: { subscribed_days_ago: 2.5 } }, /Subscribed Days Ago must be a whole number of days/],
      [{ name: 'A', rules: { subscribed_days_ago: 'soon' } }, /Subscribed Days Ago must be a number/],
      [{ name: 'A', rules: { subscribed_days_ago: 99_999 } }, /Subscribed Days Ago must be at most 3650/],
      [{ name: 'A', rules: { tags: 'vip' } }, /Tags must be a list of text/],
      [{ name: 'A', rules: { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) } }, /at most 20 tags/],
      // A misspelt rule is refused, not ignored: ignoring it would widen the audience.
      [{ name: 'A', rules: { browsers: 'Chrome' } }, /Unknown rule "browsers"/],
      [{ name: 'A', rules: 'Chrome' }, /rules must be an object/],
    ];
    for (const [body, message] of cases) {
      const response = await create(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.success).toBe(false);
      expect(response.body.error.message, JSON.stringify(body)).toMatch(message);
    }
    const patch = await create({ name: 'Valid' });
    const id = patch.body.data.segment.id;
    expect((await t.request('PATCH', `/api/segments/${id}`, { token: owner.token, body: { name: '' } })).body.error.message).toMatch(/Segment name is required/);
    expect((await t.request('PATCH', `/api/segments/${id}`, { token: owner.token, body: { rules: { os: 'BeOS' } } })).status).toBe(400);
    expect((await t.request('PATCH', `/api/segments/${id}`, { token: owner.token, body: { colour: 'red' } })).status).toBe(400);

    // Blank rules (as a form would send them) are dropped; names and cases are normalised.
    const blanks = await create({ name: 'Blanks', rules: { browser: '', os: null, country: ' , ', subscribed_days_ago: '', tags: ['', '  '] } });
    expect(blanks.status).toBe(201);
    expect(blanks.body.data.segment.rules).toEqual({});
    const normalised = await create({ name: 'Normalised', rules: { browser: 'firefox', os: 'MACOS', country: 'de, france; uk ,De', subscribed_days_ago: '7', tags: [' vip ', 'vip'] } });
    expect(normalised.body.data.segment.rules).toEqual({ browser: 'Firefox', os: 'macOS', country: 'DE, FR, GB', subscribed_days_ago: 7, tags: ['vip'] });

    // Names are unique per site, whatever their case.
    const duplicate = await create({ name: 'valid ' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.message).toBe('A segment named "valid" already exists for this site');
    expect((await t.request('PATCH', `/api/segments/${blanks.body.data.segment.id}`, { token: owner.token, body: { name: 'VALID' } })).status).toBe(409);
    const otherSite = await t.createSite(owner.token, { name: 'Other' });
    expect((await create({ name: 'Valid' }, otherSite.id)).status).toBe(201);

    for (const s of [patch, blanks, normalised]) await t.request('DELETE', `/api/segments/${s.body.data.segment.id}`, { token: owner.token });
  });

  it('applies each rule alone: browser, OS, country (list, any case), days ago, tags', async () => {
    // Active: A Chrome/Windows/GB day0 {vip,newsletter}; B Firefox/Linux/US day0 {vip};
    // C Safari/iOS/DE day3; D Edge/Windows/US day8 {newsletter,VIP}; F Safari/macOS/none day10.
    // E (Chrome/Android/GB {vip,newsletter}) is inactive and never counts.
    const expectations: Array<[SegmentRules, string[]]> = [
      [{}, ['A', 'B', 'C', 'D', 'F']],
      [{ browser: 'Chrome' }, ['A']],
      [{ browser: 'Firefox' }, ['B']],
      [{ browser: 'Safari' }, ['C', 'F']],
      [{ browser: 'Edge' }, ['D']],
      [{ os: 'Windows' }, ['A', 'D']],
      [{ os: 'macOS' }, ['F']],
      [{ os: 'Linux' }, ['B']],
      [{ os: 'Android' }, []],
      [{ os: 'iOS' }, ['C']],
      [{ country: 'US' }, ['B', 'D']],
      [{ country: 'DE, GB' }, ['A', 'C']],
      [{ subscribed_days_ago: 1 }, ['A', 'B', 'C', 'D']],
      [{ subscribed_days_ago: 7 }, ['A', 'B', 'C']],
      [{ subscribed_days_ago: 10 }, ['A', 'B']],
      [{ subscribed_days_ago: 11 }, []],
      [{ tags: ['vip'] }, ['A', 'B']],
      [{ tags: ['newsletter'] }, ['A', 'D']],
      [{ tags: ['vip', 'newsletter'] }, ['A']],
      [{ tags: ['VIP'] }, ['D']],
    ];
    for (const [rules, expected] of expectations) {
      expect(await matching(rules), JSON.stringify(rules)).toEqual(expected);
      expect(await estimate(rules), JSON.stringify(rules)).toBe(expected.length);
    }
    // Country text through the API: any case, comma-separated, names too.
    expect(await estimate({ country: 'us' })).toBe(2);
    expect(await estimate({ country: 'gb, De' })).toBe(2);
    expect(await estimate({ country: 'germany, United States' })).toBe(3);
    expect(await estimate({ country: 'FR' })).toBe(0);
  });

  it('combines rules with AND', async () => {
    const expectations: Array<[SegmentRules, string[]]> = [
      [{ browser: 'Chrome', os: 'Windows' }, ['A']],
      [{ browser: 'Chrome', os: 'Linux' }, []],
      [{ os: 'Windows', country: 'US' }, ['D']],
      [{ os: 'Windows', tags: ['newsletter'] }, ['A', 'D']],
      [{ os: 'Windows', tags: ['newsletter'], subscribed_days_ago: 5 }, ['A']],
      [{ browser: 'Safari', subscribed_days_ago: 2 }, ['C']],
      [{ country: 'US, GB', tags: ['vip'], subscribed_days_ago: 10 }, ['A', 'B']],
      [{ browser: 'Firefox', os: 'Linux', country: 'US', subscribed_days_ago: 10, tags: ['vip'] }, ['B']],
      [{ browser: 'Firefox', os: 'Linux', country: 'GB', subscribed_days_ago: 10, tags: ['vip'] }, []],
    ];
    for (const [rules, expected] of expectations) {
      expect(await matching(rules), JSON.stringify(rules)).toEqual(expected);
      expect(await estimate(rules), JSON.stringify(rules)).toBe(expected.length);
    }
  });

  it('counts "subscribed N days ago" from now: a subscriber joins the segment when N days have passed', async () => {
    const created = await create({ name: 'Week-old', rules: { subscribed_days_ago: 7 } });
    const id = created.body.data.segment.id;
    const count = async () => (await t.request('POST', `/api/segments/${id}/estimate`, { token: owner.token })).body.data.estimated_count;
    const saved = clock.now();
    try {
      // D subscribed on day 8: in at exactly day 15, not a millisecond before.
      clock.set(start + 15 * DAY - 1);
      expect(await count()).toBe(3);
      clock.set(start + 15 * DAY);
      expect(await count()).toBe(4);
      // F (day 10, second subscriber that minute) joins on day 17.
      clock.set(start + 17 * DAY);
      expect(await count()).toBe(5);
      const listed = await t.request('GET', `/api/sites/${site.id}/segments`, { token: owner.token });
      expect(listed.body.data.segments.find((s: any) => s.id === id).estimated_count).toBe(5);
    } finally {
      clock.set(saved);
      await t.request('DELETE', `/api/segments/${id}`, { token: owner.token });
    }
  });

  it('counts only active subscribers, and follows tag changes and unsubscribes', async () => {
    const created = await create({ name: 'VIPs', rules: { tags: ['vip'] } });
    const id = created.body.data.segment.id;
    expect(created.body.data.segment.estimated_count).toBe(2);
    const count = async () => (await t.request('POST', `/api/segments/${id}/estimate`, { token: owner.token })).body.data.estimated_count;
    await setTags(sub.C!, ['vip']);
    expect(await count()).toBe(3);
    await t.request('DELETE', `/api/subscribers/${sub.C}`, { token: owner.token });
    expect(await count()).toBe(2);
    await t.request('DELETE', `/api/segments/${id}`, { token: owner.token });
  });

  it('answers 404 for unknown segment and site ids', async () => {
    const missing = crypto.randomUUID();
    expect((await t.request('GET', `/api/segments/${missing}`, { token: owner.token })).status).toBe(404);
    expect((await t.request('PATCH', `/api/segments/${missing}`, { token: owner.token, body: { name: 'x' } })).status).toBe(404);
    expect((await t.request('POST', `/api/segments/${missing}/estimate`, { token: owner.token })).status).toBe(404);
    expect((await t.request('GET', `/api/sites/${missing}/segments`, { token: owner.token })).status).toBe(404);
    expect((await create({ name: 'x' }, missing)).status).toBe(404);
    expect((await t.request('GET', `/api/sites/${site.id}/segments`)).status).toBe(401);
  });
});

describe('segments tenancy', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it("answers 404 on every id-bearing route for another user's site or segment and changes nothing", async () => {
    const alice = await t.createUser();
    const mallory = await t.createUser();
    const site = await t.createSite(alice.token);
    const created = await t.request('POST', `/api/sites/${site.id}/segments`, { token: alice.token, body: { name: 'Alice VIPs', rules: { tags: ['vip'] } } });
    const segment = created.body.data.segment;
    const before = await t.ctx.db.selectFrom('segments').selectAll().orderBy('id').execute();

    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/api/sites/${site.id}/segments`],
      ['POST', `/api/sites/${site.id}/segments`, { name: 'Mine now' }],
      ['GET', `/api/segments/${segment.id}`],
      ['PATCH', `/api/segments/${segment.id}`, { name: 'Renamed', rules: {} }],
      ['DELETE', `/api/segments/${segment.id}`],
      ['POST', `/api/segments/${segment.id}/estimate`],
    ];
    for (const [method, url, body] of attempts) {
      const response = await t.request(method, url, { token: mallory.token, body });
      expect(response.status, `${method} ${url}`).toBe(404);
      expect(response.body.success).toBe(false);
    }
    expect(await t.ctx.db.selectFrom('segments').selectAll().orderBy('id').execute()).toEqual(before);

    // Nor can another user's notification target it (spec §3 segment_id; checkSegment).
    const mallorySite = await t.createSite(mallory.token);
    const notification = {
      title: 'Hi',
      message: 'There',
      destination_url: 'https://example.com/',
      segment_id: segment.id,
    };
    const stolen = await t.request('POST', `/api/sites/${mallorySite.id}/notifications`, { token: mallory.token, body: notification });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error.message).toBe('Segment not found');
    // …nor another site of the same user.
    const aliceOther = await t.createSite(alice.token, { name: 'Second' });
    expect((await t.request('POST', `/api/sites/${aliceOther.id}/notifications`, { token: alice.token, body: notification })).status).toBe(400);
    const own = await t.request('POST', `/api/sites/${site.id}/notifications`, { token: alice.token, body: notification });
    expect(own.status).toBe(201);
    expect(own.body.data.notification.segment_id).toBe(segment.id);
    // PATCH goes through the same check.
    const draft = await t.request('POST', `/api/sites/${aliceOther.id}/notifications`, { token: alice.token, body: { ...notification, segment_id: null } });
    expect((await t.request('PATCH', `/api/notifications/${draft.body.data.notification.id}`, { token: alice.token, body: { segment_id: segment.id } })).status).toBe(400);
    expect(await t.ctx.db.selectFrom('notifications').select('id').where('segment_id', '=', segment.id).execute()).toHaveLength(1);
  });
});
