import { roleNeededMessage } from '@herald/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { addMember, dumpDatabase, identityHashFor } from './security/support/fixtures';
import { foldBeacons } from './support/beacon-counts';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import type { ReceivedPush, TestSubscription } from './support/push-service';
import { waitFor, type TestUser } from './support/test-app';
import { runSeqsOfNotification } from '../src/db/run-seq';
import { subscriberSeqOf } from '../src/db/subscriber-seq';

// "Move in and out freely", privacy: everything Herald holds about one
// subscriber as JSON (GET /subscribers/{id}/export), erasing a subscriber
// completely (DELETE /subscribers/{id}?erase=true, and by external id with a
// site API key: DELETE /v1/sites/{siteId}/subscribers?external_id=…).
// Counters and hourly totals are never decremented (docs/product.md,
// "Subscribers"; docs/delivery.md, "Outcomes").

const MINUTE = 60_000;
const ANDROID = 'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36';

type Browser = { subscriberId: string; subscription: TestSubscription };

describe('subscriber privacy: data export and complete erasure', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.UTC(2026, 6, 1, 9));
  let alice: Browser;
  let alicePhone: Browser;
  let bob: Browser;
  let apiKey: string;
  let editor: { token: string };
  let stranger: TestUser;
  let campaignId: string;
  let saleId: string;
  let triggeredId: string;
  let aliceEventId: string;
  let personEventId: string;
  let address = 0;

  const api = (method: string, url: string, token = h.owner.token) => h.t.request(method, url, { token });
  const v1 = (method: string, url: string, body?: unknown, key = apiKey) => h.t.request(method, url, { headers: { authorization: `Bearer ${key}` }, ...(body !== undefined ? { body } : {}) });
  const messagesTo = (who: Browser) => h.push.messages.filter((message: ReceivedPush) => message.subscriptionId === who.subscription.id);
  const requestsTo = (who: Browser) => h.push.requests.filter((request) => request.subscriptionId === who.subscription.id);
  const tokenOf = (message: ReceivedPush) => (message.payload as { token: string }).token;
  const saleOn = (who: Browser) => messagesTo(who).find((message) => (message.payload as { title: string }).title === 'Summer sale')!;
  const beacon = (type: 'delivered' | 'clicked', token: string) => h.t.request('POST', '/api/public/events', { body: { type, token }, headers: { origin: 'https://push-shop.example' } });

  async function identify(siteId: string, who: Browser, externalId: string) {
    const { secret } = (await api('GET', `/api/sites/${siteId}/identity-secret`)).body.data;
    address += 1;
    const response = await h.t.request('POST', `/api/public/sites/${siteId}/identify`, {
      body: { endpoint: who.subscription.endpoint, external_id: externalId, identity_hash: identityHashFor(secret, externalId) },
      remoteAddress: `203.0.113.${address}`,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  }

  async function hourlyTotals(siteId: string) {
    const rows = await h.t.ctx.db.selectFrom('stats_hourly').selectAll().where('site_id', '=', siteId).execute();
    const sum = (key: 'sent' | 'delivered' | 'clicked' | 'subscribed' | 'unsubscribed') => rows.reduce((total, row) => total + Number(row[key]), 0);
    return { sent: sum('sent'), delivered: sum('delivered'), clicked: sum('clicked'), subscribed: sum('subscribed'), unsubscribed: sum('unsubscribed') };
  }

  const notification = async (id: string) => (await api('GET', `/api/notifications/${id}`)).body.data.notification;
  const activeCount = async () => (await api('GET', `/api/sites/${h.site.id}`)).body.data.site.subscriber_count;

  /** The tables a refused erase could touch (the engine's own bookkeeping, e.g. rate_limits, moves on by itself meanwhile). */
  async function audienceTables() {
    const dump = await dumpDatabase(h.t.ctx.db);
    const tables = ['subscribers', 'subscriber_tags', 'site_events', 'deliveries', 'welcome_campaign_enrollments', 'test_device_links', 'audit_log'];
    return Object.fromEntries(tables.map((table) => [table, dump[table]]));
  }

  /** Every row of every table, as text: to prove nothing of a subscriber is left. */
  async function everything(except: string[] = []): Promise<string> {
    const dump = await dumpDatabase(h.t.ctx.db);
    return Object.entries(dump)
      .filter(([table]) => !except.includes(table))
      .map(([table, rows]) => `${table}: ${rows.join('\n')}`)
      .join('\n');
  }

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
    apiKey = (await h.t.request('POST', `/api/sites/${h.site.id}/api-keys`, { token: h.owner.token, body: { name: 'Shop backend' } })).body.data.key;
    editor = await addMember(h.t, { site: h.site, user: h.owner }, 'editor');
    stranger = await h.t.createUser();

    // Welcome steps: sends made for each new subscriber alone, the first at once, the second an hour later (still due).
    const step = (sequence_order: number, delay_minutes: number, title: string) => ({ sequence_order, delay_minutes, notification: { title, message: 'Hi', destination_url: 'https://push-shop.example/hi' } });
    const campaign = await h.t.request('POST', `/api/sites/${h.site.id}/welcome-campaigns`, {
      token: h.owner.token,
      body: { name: 'Welcome', is_active: true, steps: [step(1, 0, 'Welcome aboard'), step(2, 60, 'Still there?')] },
    });
    expect(campaign.status, JSON.stringify(campaign.body)).toBe(201);
    campaignId = campaign.body.data.campaign.id;

    alice = await h.subscribe();
    alicePhone = await h.subscribe({ userAgent: ANDROID });
    bob = await h.subscribe();
    await h.engine.scheduler!.tick();
    await h.push.waitForAccepted(3);
    await identify(h.site.id, alice, 'customer-42');
    await identify(h.site.id, alicePhone, 'customer-42');
    expect((await h.t.request('PATCH', `/api/subscribers/${alice.subscriberId}/tags`, { token: h.owner.token, body: { tags: ['vip'] } })).status).toBe(200);
    expect((await h.t.request('PATCH', `/api/subscribers/${alice.subscriberId}/test-device`, { token: h.owner.token, body: { enabled: true, name: 'Alice laptop' } })).status).toBe(200);

    // A triggered notification Alice's event arms for her alone, half an hour later.
    const triggered = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: notificationInput({ type: 'TRIGGERED', title: 'Your cart misses you', trigger: { event: 'cart_abandoned', delay_minutes: 30 } }),
    });
    triggeredId = triggered.body.data.notification.id;
    const aliceEvent = await v1('POST', `/api/v1/sites/${h.site.id}/events`, { event: 'cart_abandoned', subscriber_id: alice.subscriberId, data: { items: 2 } });
    expect(aliceEvent.body.data.event).toMatchObject({ triggered: 1 });
    aliceEventId = aliceEvent.body.data.event.id;
    // An event about the person (both of her browsers), and one about Bob.
    personEventId = (await v1('POST', `/api/v1/sites/${h.site.id}/events`, { event: 'newsletter_read', external_id: 'customer-42' })).body.data.event.id;
    expect((await v1('POST', `/api/v1/sites/${h.site.id}/events`, { event: 'newsletter_read', subscriber_id: bob.subscriberId })).status).toBe(202);

    // A send to everyone: Alice's push service fails (500), so her delivery waits for a retry (the clock stands still).
    h.push.setAnswer({ status: 500 }, alice.subscription.id);
    const sale = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ title: 'Summer sale' }) });
    saleId = sale.body.data.notification.id;
    expect((await h.t.request('POST', `/api/notifications/${saleId}/send`, { token: h.owner.token })).status).toBe(200);
    await h.push.waitForAccepted(5);
    await waitFor(async () => {
      const row = await h.t.ctx.db.selectFrom('deliveries').select(['attempts', 'next_attempt_at']).where('run_seq', 'in', runSeqsOfNotification(saleId)).where('subscriber_seq', '=', subscriberSeqOf(alice.subscriberId)).executeTakeFirst();
      return row !== undefined && row.attempts >= 1 && row.next_attempt_at !== null;
    });
    await waitFor(async () => {
      const counts = (await notification(saleId)).counts;
      return counts.sent === 2 && counts.pending === 1;
    });
    // Alice's phone shows the sale and she clicks it.
    const phoneMessage = saleOn(alicePhone);
    expect((await beacon('delivered', tokenOf(phoneMessage))).body.data).toEqual({ counted: true });
    expect((await beacon('clicked', tokenOf(phoneMessage))).body.data).toEqual({ counted: true });
    await foldBeacons(h.t.ctx);
  });
  afterAll(async () => h?.close());

  it('GET /subscribers/{id}/export answers everything held about one subscriber, as a file, to admins only, and logs it', async () => {
    const response = await api('GET', `/api/subscribers/${alice.subscriberId}/export`);
    expect(response.status).toBe(200);
    expect(response.headers['content-disposition']).toBe(`attachment; filename="herald-subscriber-${alice.subscriberId}.json"`);
    expect(response.headers['cache-control']).toBe('no-store');
    const data = response.body.data;
    expect(data.site).toEqual({ id: h.site.id, name: 'Push Shop', url: 'https://push-shop.example' });
    expect(data.subscriber).toMatchObject({
      id: alice.subscriberId,
      endpoint: alice.subscription.endpoint,
      p256dh: alice.subscription.keys.p256dh,
      auth: alice.subscription.keys.auth,
      browser: 'Firefox',
      os: 'Linux',
      language: 'fr-FR',
      timezone: 'Europe/Paris',
      external_id: 'customer-42',
      external_id_verified: true,
      is_active: true,
      test_device: true,
      test_device_name: 'Alice laptop',
      subscribed_at: expect.any(String),
      unsubscribed_at: null,
    });
    // The internal hash is not the subscriber's data.
    const stored = await h.t.ctx.db.selectFrom('subscribers').select('endpoint_hash').where('id', '=', alice.subscriberId).executeTakeFirstOrThrow();
    expect(JSON.stringify(response.body)).not.toContain(stored.endpoint_hash);
    expect(Object.keys(data.subscriber)).not.toContain('endpoint_hash');
    expect(data.tags).toEqual(['vip']);
    expect(data.events.map((event: { id: string }) => event.id).sort()).toEqual([aliceEventId, personEventId].sort());
    expect(data.events.find((event: { id: string }) => event.id === aliceEventId)).toMatchObject({ event: 'cart_abandoned', source: 'api', data: { items: 2 } });
    expect(data.deliveries).toEqual([
      {
        notification_id: saleId,
        notification_title: 'Summer sale',
        run_id: expect.any(String),
        outcome: 'pending',
        reason: 'server_error',
        attempts: 1,
        created_at: expect.any(String),
        sent_at: null,
        delivered_at: null,
        clicked_at: null,
      },
      {
        notification_id: expect.any(String),
        notification_title: 'Welcome aboard',
        run_id: expect.any(String),
        outcome: 'sent',
        reason: null,
        attempts: 1,
        created_at: expect.any(String),
        sent_at: expect.any(String),
        delivered_at: null,
        clicked_at: null,
      },
    ]);
    // The welcome steps (the first done, the second due in an hour) and the triggered send her event armed.
    expect(data.personal_sends.map((send: { status: string }) => send.status).sort()).toEqual(['completed', 'pending', 'pending']);
    expect(data.personal_sends.map((send: { notification_id: string }) => send.notification_id)).toContain(triggeredId);
    expect(data.welcome_campaigns).toEqual([{ campaign_id: campaignId, enrolled_at: expect.any(String) }]);

    const refused = await api('GET', `/api/subscribers/${alice.subscriberId}/export`, editor.token);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe(roleNeededMessage('admin'));
    const foreign = await api('GET', `/api/subscribers/${alice.subscriberId}/export`, stranger.token);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.message).toBe('Subscriber not found');

    const entries = (await api('GET', `/api/sites/${h.site.id}/audit-log?action=export_run`)).body.data.entries;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ subject: { type: 'subscriber', id: alice.subscriberId }, detail: { export: 'subscriber_data' } });
  });

  it('erase=true deletes the subscriber and everything keyed by it; counters keep their totals and the send it held up finishes', async () => {
    const saleBefore = await notification(saleId);
    expect(saleBefore.status).toBe('sending');
    expect(saleBefore.counts).toMatchObject({ targeted: 3, sent: 2, pending: 1, skipped: 0, delivered: 1, clicked: 1 });
    const totalsBefore = await hourlyTotals(h.site.id);
    expect(totalsBefore).toEqual({ sent: 5, delivered: 1, clicked: 1, subscribed: 3, unsubscribed: 0 });
    expect(await activeCount()).toBe(3);

    // An editor may not, and the refusal changes nothing.
    const before = await audienceTables();
    const refused = await api('DELETE', `/api/subscribers/${alice.subscriberId}?erase=true`, editor.token);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe(roleNeededMessage('admin'));
    expect((await api('DELETE', `/api/subscribers/${alice.subscriberId}?erase=true`, stranger.token)).status).toBe(404);
    expect(await audienceTables()).toEqual(before);

    // A finished fan-out keeps the last subscriber id it reached as its cursor: the highest id of the
    // audience, here Alice's one time in three. Made certain, so the test does not depend on the ids drawn.
    await h.t.ctx.db.updateTable('notification_runs').set({ fanout_cursor: alice.subscriberId }).where('notification_id', '=', saleId).where('fanout_done', '=', 1).execute();

    const erased = await api('DELETE', `/api/subscribers/${alice.subscriberId}?erase=true`);
    expect(erased.status).toBe(200);
    expect(erased.body).toEqual({ success: true, data: { erased: { id: alice.subscriberId, deliveries: 2, events: 1 } } });

    // Nothing of her is left: not her id (but in the audit log, which says she was erased), her endpoint or her keys.
    const left = await everything(['audit_log']);
    expect(left.split('\n').filter((line) => line.includes(alice.subscriberId))).toEqual([]);
    const all = await everything();
    for (const secret of [alice.subscription.endpoint, alice.subscription.keys.p256dh, alice.subscription.keys.auth]) expect(all).not.toContain(secret);
    // The event about the person stays: her phone is still customer-42.
    expect(await h.t.ctx.db.selectFrom('site_events').select('id').where('id', '=', personEventId).executeTakeFirst()).toBeDefined();

    // Totals are never taken back. Her pending delivery will never go: skipped. The send is finished.
    const sale = await notification(saleId);
    expect(sale.status).toBe('completed');
    expect(sale.counts).toMatchObject({ targeted: 3, sent: 2, failed: 0, skipped: 1, pending: 0, delivered: 1, clicked: 1 });
    expect(await hourlyTotals(h.site.id)).toEqual({ ...totalsBefore, unsubscribed: 1 });
    expect(await activeCount()).toBe(2);
    expect((await api('GET', `/api/sites/${h.site.id}/subscribers`)).body.data.total).toBe(2);
    expect((await api('GET', `/api/sites/${h.site.id}/test-devices`)).body.data.devices).toEqual([]);

    const audit = (await api('GET', `/api/sites/${h.site.id}/audit-log?action=deleted`)).body.data.entries;
    expect(audit[0]).toMatchObject({ actor: { type: 'user', id: h.owner.id }, subject: { type: 'subscriber', id: alice.subscriberId, label: null }, detail: { erased: true, deliveries: 2, events: 1 } });

    // Her triggered send and her welcome step are gone with her: nothing reaches her browser later, the others get theirs.
    h.push.setAnswer({ status: 201 }, alice.subscription.id);
    const requestsBefore = requestsTo(alice).length;
    clock.advance(2 * 60 * MINUTE);
    await h.engine.scheduler!.tick();
    await waitFor(async () => messagesTo(bob).some((message) => (message.payload as { title: string }).title === 'Still there?'), { timeoutMs: 10_000 });
    await waitFor(async () => !(await h.t.ctx.db.selectFrom('notification_runs').select('id').where('status', 'in', ['pending', 'sending']).where('due_at', '<=', clock.now()).executeTakeFirst()), {
      timeoutMs: 10_000,
    });
    expect(requestsTo(alice)).toHaveLength(requestsBefore);
    expect(messagesTo(alice).map((message) => (message.payload as { title: string }).title)).toEqual(['Welcome aboard']);

    // She is gone for every route; the same browser subscribing again is a new subscriber.
    expect((await api('GET', `/api/subscribers/${alice.subscriberId}/export`)).status).toBe(404);
    expect((await api('DELETE', `/api/subscribers/${alice.subscriberId}?erase=true`)).status).toBe(404);
    expect((await api('DELETE', `/api/subscribers/${alice.subscriberId}`)).status).toBe(404);
    const again = await h.t.request('POST', `/api/public/sites/${h.site.id}/subscribers`, {
      body: { subscription: { endpoint: alice.subscription.endpoint, keys: alice.subscription.keys } },
      remoteAddress: '198.51.100.200',
    });
    expect(again.status).toBe(201);
    expect(again.body.data.subscriber.id).not.toBe(alice.subscriberId);
    expect((await api('DELETE', `/api/subscribers/${again.body.data.subscriber.id}?erase=true`)).status).toBe(200);
  });

  it('without erase (or erase=false) DELETE keeps today’s behaviour: the subscriber stays, inactive, with its history', async () => {
    const removed = await api('DELETE', `/api/subscribers/${bob.subscriberId}?erase=false`);
    expect(removed.status).toBe(200);
    expect(removed.body.data.subscriber).toMatchObject({ id: bob.subscriberId, is_active: false });
    expect(await h.t.ctx.db.selectFrom('deliveries').select('id').where('subscriber_seq', '=', subscriberSeqOf(bob.subscriberId)).execute()).not.toHaveLength(0);
    expect(await h.t.ctx.db.selectFrom('site_events').select('id').where('subscriber_id', '=', bob.subscriberId).execute()).toHaveLength(1);
    expect((await api('DELETE', `/api/subscribers/${bob.subscriberId}?erase=maybe`)).status).toBe(400);
  });

  it('DELETE /v1/sites/{siteId}/subscribers?external_id erases every subscriber of that person on this site, and the events addressed to them', async () => {
    // The same person on another site of the same owner is that site's business.
    const otherSite = await h.t.createSite(h.owner.token, { name: 'Other Shop', url: 'https://other-shop.example' });
    const created = h.push.createSubscription({ applicationServerKey: otherSite.vapid_public_key });
    const elsewhere = await h.t.request('POST', `/api/public/sites/${otherSite.id}/subscribers`, { body: { subscription: { endpoint: created.endpoint, keys: created.keys } }, remoteAddress: '198.51.100.201' });
    const elsewhereBrowser = { subscriberId: elsewhere.body.data.subscriber.id as string, subscription: created };
    await identify(otherSite.id, elsewhereBrowser, 'customer-42');
    const otherKey = (await h.t.request('POST', `/api/sites/${otherSite.id}/api-keys`, { token: h.owner.token, body: { name: 'Other backend' } })).body.data.key;

    const url = `/api/v1/sites/${h.site.id}/subscribers?external_id=customer-42`;
    const before = await audienceTables();
    expect((await v1('DELETE', url, undefined, otherKey)).status).toBe(401);
    expect((await h.t.request('DELETE', url, { token: h.owner.token })).status).toBe(401);
    expect((await h.t.request('DELETE', url)).status).toBe(401);
    expect(await audienceTables()).toEqual(before);
    expect((await v1('DELETE', `/api/v1/sites/${h.site.id}/subscribers`)).status).toBe(400);
    expect((await v1('DELETE', `/api/v1/sites/${h.site.id}/subscribers?external_id=`)).status).toBe(400);

    const sale = await notification(saleId);
    const totals = await hourlyTotals(h.site.id);
    const erased = await v1('DELETE', url);
    expect(erased.status).toBe(200);
    expect(erased.body).toEqual({ success: true, data: { erased: 1 } });

    const left = await everything(['audit_log']);
    expect(left.split('\n').filter((line) => line.includes(alicePhone.subscriberId))).toEqual([]);
    expect(left).not.toContain(alicePhone.subscription.endpoint);
    expect(await h.t.ctx.db.selectFrom('site_events').select('id').where('site_id', '=', h.site.id).where('external_id', '=', 'customer-42').execute()).toEqual([]);
    // The other site keeps its subscriber, and Bob is untouched.
    expect(await h.t.ctx.db.selectFrom('subscribers').select('id').where('id', 'in', [elsewhereBrowser.subscriberId, bob.subscriberId]).execute()).toHaveLength(2);
    // Her delivered and clicked sale still count.
    expect((await notification(saleId)).counts).toEqual(sale.counts);
    expect(await hourlyTotals(h.site.id)).toEqual({ ...totals, unsubscribed: totals.unsubscribed + 1 });
    // A late beacon from her phone counts nothing.
    expect((await beacon('clicked', tokenOf(saleOn(alicePhone)))).body.data).toEqual({ counted: false });

    const audit = (await api('GET', `/api/sites/${h.site.id}/audit-log?action=deleted`)).body.data.entries;
    expect(audit[0]).toMatchObject({ actor: { type: 'api_key' }, subject: { type: 'subscriber', id: alicePhone.subscriberId }, detail: { erased: true } });
    expect(JSON.stringify(audit)).not.toContain('customer-42');

    // Asked again: nobody is left to erase, and that is not an error.
    expect((await v1('DELETE', url)).body).toEqual({ success: true, data: { erased: 0 } });
  });
});
