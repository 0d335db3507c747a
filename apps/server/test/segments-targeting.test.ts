import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEGMENT_DELETED_ERROR, selectAudiencePage } from '../src/features/segments/audience';
import { insertRun } from '../src/delivery/runs';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import { runSeqsOfNotification } from '../src/db/run-seq';

// Spec §2 Segments + §3 segment_id: a notification with a segment reaches
// exactly the active subscribers matching its rules when it is SENT, through
// the real engine and the local push service (which decrypts every push).

const DAY = 86_400_000;
const UA = {
  chromeWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  chromeMac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  chromeAndroid: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
  firefoxLinux: 'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0',
};
const IP = { GB: ['81.2.69.142', '81.2.69.143', '81.2.69.144', '81.2.69.145', '81.2.69.146', '81.2.69.147'], US: '8.8.8.8' };

describe('sending to a segment', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.UTC(2026, 4, 1, 8));
  const start = clock.now();
  /** Subscription ids (as the push service knows them) by subscriber id. */
  const subscriptionOf = new Map<string, string>();
  const s: Record<string, string> = {};

  async function subscribe(userAgent: string, address: string): Promise<string> {
    const subscription = h.push.createSubscription({ applicationServerKey: h.site.vapid_public_key });
    const response = await h.t.request('POST', `/api/public/sites/${h.site.id}/subscribers`, {
      body: { subscription: { endpoint: subscription.endpoint, keys: subscription.keys } },
      headers: { 'user-agent': userAgent },
      remoteAddress: address,
    });
    expect(response.status).toBe(201);
    subscriptionOf.set(response.body.data.subscriber.id, subscription.id);
    return response.body.data.subscriber.id;
  }
  const api = (method: string, url: string, body?: unknown) => h.t.request(method, url, { token: h.owner.token, body });
  const setTags = async (id: string, tags: string[]) => expect((await api('PATCH', `/api/subscribers/${id}/tags`, { tags })).status).toBe(200);

  /** Subscriber ids whose browser received the notification (decrypted payload tag `herald-<id>`). */
  function recipients(notificationId: string): string[] {
    const bySubscription = new Map([...subscriptionOf].map(([subscriberId, subscriptionId]) => [subscriptionId, subscriberId]));
    return h.push.messages
      .filter((m) => (m.payload as { tag?: string } | null)?.tag === `herald-${notificationId}`)
      .map((m) => bySubscription.get(m.subscriptionId) ?? `unknown ${m.subscriptionId}`)
      .sort();
  }
  const names = (...letters: string[]) => letters.map((l) => s[l]!).sort();

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
    // Day 0.
    s.A = await subscribe(UA.chromeWindows, IP.GB[0]!); // Chrome, GB, vip — in
    s.B = await subscribe(UA.chromeWindows, IP.US); // US — out (country)
    s.C = await subscribe(UA.firefoxLinux, IP.GB[1]!); // Firefox — out (browser)
    s.D = await subscribe(UA.chromeAndroid, IP.GB[2]!); // no vip tag — out (tags)
    s.E = await subscribe(UA.chromeMac, IP.GB[3]!); // Chrome on a Mac, GB, vip — in
    s.F = await subscribe(UA.chromeWindows, IP.GB[4]!); // unsubscribed — out (inactive)
    // Day 9: too recent for "7+ days ago" until day 16.
    clock.set(start + 9 * DAY);
    s.G = await subscribe(UA.chromeWindows, IP.GB[5]!);
    for (const letter of ['A', 'B', 'C', 'E', 'F', 'G']) await setTags(s[letter]!, ['vip']);
    expect((await api('DELETE', `/api/subscribers/${s.F}`)).status).toBe(200);
    clock.set(start + 10 * DAY);
  });
  afterAll(async () => h.close());

  it('reaches exactly the active subscribers matching every rule', async () => {
    const segment = (await api('POST', `/api/sites/${h.site.id}/segments`, { name: 'UK Chrome VIPs', rules: { browser: 'Chrome', country: 'gb', subscribed_days_ago: 7, tags: ['vip'] } })).body.data
      .segment;
    expect(segment.estimated_count).toBe(2);

    const created = await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput({ segment_id: segment.id }));
    expect(created.status).toBe(201);
    const id = created.body.data.notification.id;
    expect(created.body.data.notification.segment_id).toBe(segment.id);
    expect((await api('POST', `/api/notifications/${id}/send`)).status).toBe(200);
    const done = await h.waitForStatus(id, ['completed', 'failed']);
    expect(done).toMatchObject({ status: 'completed', stats: { total: 2, sent: 2, failed: 0 } });

    expect(recipients(id)).toEqual(names('A', 'E'));
    const deliveries = await h.t.ctx.db.selectFrom('deliveries').innerJoin('subscribers', 'subscribers.seq', 'deliveries.subscriber_seq').select('subscribers.id as subscriber_id').where('run_seq', 'in', runSeqsOfNotification(id)).execute();
    expect(deliveries.map((d) => d.subscriber_id).sort()).toEqual(names('A', 'E'));

    // Without a segment, the same site's notification goes to every active subscriber.
    const all = await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput({ title: 'Everyone' }));
    await api('POST', `/api/notifications/${all.body.data.notification.id}/send`);
    await h.waitForStatus(all.body.data.notification.id, ['completed']);
    expect(recipients(all.body.data.notification.id)).toEqual(names('A', 'B', 'C', 'D', 'E', 'G'));
  });

  it('decides the audience at send time, not when the notification is written', async () => {
    const segment = (await api('POST', `/api/sites/${h.site.id}/segments`, { name: 'Week-old VIPs', rules: { subscribed_days_ago: 7, tags: ['vip'] } })).body.data.segment;
    expect(segment.estimated_count).toBe(4); // A B C E now; G is 1 day old.

    const sendAt = start + 17 * DAY;
    const created = await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput({ title: 'Scheduled', segment_id: segment.id, scheduled_at: new Date(sendAt).toISOString() }));
    expect(created.body.data.notification.status).toBe('scheduled');
    const id = created.body.data.notification.id;

    // Before the send: B loses the tag, D gains it, A unsubscribes; by day 17 G is 8 days old.
    await setTags(s.B!, []);
    await setTags(s.D!, ['vip', 'other']);
    await api('DELETE', `/api/subscribers/${s.A}`);

    clock.set(sendAt + 1000);
    await h.engine.scheduler!.tick();
    const done = await h.waitForStatus(id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(recipients(id)).toEqual(names('C', 'D', 'E', 'G'));
    expect((await api('POST', `/api/segments/${segment.id}/estimate`)).body.data.estimated_count).toBe(4);
  });

  it('refuses to delete a segment that something will still send to, naming it; a finished send does not hold it', async () => {
    const segment = (await api('POST', `/api/sites/${h.site.id}/segments`, { name: 'Held', rules: { browser: 'Firefox' } })).body.data.segment;
    const draft = (await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput({ title: 'Draft for Firefox', segment_id: segment.id }))).body.data.notification;
    const scheduled = (
      await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput({ title: 'Later for Firefox', segment_id: segment.id, scheduled_at: new Date(clock.now() + DAY).toISOString() }))
    ).body.data.notification;

    const refused = await api('DELETE', `/api/segments/${segment.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toBe(
      'This segment is used by 2 notifications ("Draft for Firefox", "Later for Firefox"). Change their target to All Subscribers or another segment first.',
    );
    expect((await api('GET', `/api/segments/${segment.id}`)).status).toBe(200);

    // Retarget the scheduled one (its pending run follows), send the draft and wait for it to finish.
    expect((await api('PATCH', `/api/notifications/${scheduled.id}`, { segment_id: null })).status).toBe(200);
    expect((await api('POST', `/api/notifications/${draft.id}/send`)).status).toBe(200);
    await h.waitForStatus(draft.id, ['completed']);
    expect(recipients(draft.id)).toEqual(names('C'));

    expect((await api('DELETE', `/api/segments/${segment.id}`)).status).toBe(200);

    // A copy of the finished notification still names the deleted segment: it reaches nobody, not everybody.
    const copy = (await api('POST', `/api/notifications/${draft.id}/duplicate`)).body.data.notification;
    expect(copy.segment_id).toBe(segment.id);
    expect((await api('POST', `/api/notifications/${copy.id}/send`)).status).toBe(200);
    const done = await h.waitForStatus(copy.id, ['completed', 'failed']);
    expect(done.stats).toMatchObject({ total: 0, sent: 0 });
    expect(recipients(copy.id)).toEqual([]);
    const copyRun = await h.t.ctx.db.selectFrom('notification_runs').select('last_error').where('notification_id', '=', copy.id).executeTakeFirstOrThrow();
    expect(copyRun.last_error).toBe(SEGMENT_DELETED_ERROR);
    // Re-targeting at a deleted segment is refused.
    const another = (await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput())).body.data.notification;
    const retarget = await api('PATCH', `/api/notifications/${another.id}`, { segment_id: segment.id });
    expect(retarget.status).toBe(400);
    expect(retarget.body.error.message).toBe('Segment not found');
  });

  it("answers a run whose segment is gone, or another site's, with nobody and why", async () => {
    const other = await h.t.createSite(h.owner.token, { name: 'Other shop' });
    const foreign = (await api('POST', `/api/sites/${other.id}/segments`, { name: 'Everyone there', rules: {} })).body.data.segment;
    const notification = (await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput({ title: 'Orphan' }))).body.data.notification;
    for (const segmentId of [crypto.randomUUID(), foreign.id]) {
      const runId = crypto.randomUUID();
      // Due far ahead, so the running scheduler leaves it alone while the audience is asked for directly.
      await insertRun(h.t.ctx.db, {
        id: runId,
        notification_id: notification.id,
        site_id: h.site.id,
        dedupe_key: `test:${runId}`,
        due_at: clock.now() + 365 * DAY,
        segment_id: segmentId,
        subscriber_id: null,
        created_at: clock.now(),
      });
      const run = await h.t.ctx.db.selectFrom('notification_runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow();
      expect(await selectAudiencePage(h.t.ctx.db, run, null, 100)).toEqual({ nobodyBecause: SEGMENT_DELETED_ERROR });
      await h.t.ctx.db.deleteFrom('notification_runs').where('id', '=', runId).execute();
    }
  });

  it('narrows a single-subscriber run by its segment too', async () => {
    const segment = (await api('POST', `/api/sites/${h.site.id}/segments`, { name: 'Mac users', rules: { os: 'macOS' } })).body.data.segment;
    const run = {
      id: crypto.randomUUID(),
      site_id: h.site.id,
      segment_id: segment.id,
      started_at: clock.now(),
      due_at: clock.now(),
      zones: null,
    };
    expect(await selectAudiencePage(h.t.ctx.db, { ...run, subscriber_id: s.E! }, null, 10)).toEqual({ subscribers: [{ id: s.E, seq: expect.any(Number) }] });
    expect(await selectAudiencePage(h.t.ctx.db, { ...run, subscriber_id: s.C! }, null, 10)).toEqual({ subscribers: [] });
  });
});
