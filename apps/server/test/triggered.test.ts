import crypto from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import type { ReceivedPush, TestSubscription } from './support/push-service';
import { waitFor } from './support/test-app';

// Issue 4 §2: triggered notifications. An armed (scheduled) TRIGGERED
// notification fires for ONE subscriber when an event with its name arrives
// from the browser SDK or the site's backend, after its delay.

const MINUTE = 60_000;
/** Each test starts a day later, so delays of one test never fall into the next. */
const DAY_GAP = 24 * 60 * MINUTE;

const payloadOf = (message: ReceivedPush) => message.payload as { title: string };

describe('triggered notifications', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.UTC(2026, 4, 4, 10));
  let alice: { subscriberId: string; subscription: TestSubscription };
  let alicePhone: { subscriberId: string; subscription: TestSubscription };
  let bob: { subscriberId: string; subscription: TestSubscription };
  let apiKey: string;
  let addressCounter = 0;

  const received = (who: { subscription: TestSubscription }, title: string) =>
    h.push.messages.filter((message) => message.subscriptionId === who.subscription.id && payloadOf(message).title === title);

  function track(who: { subscription: TestSubscription }, body: Record<string, unknown>) {
    addressCounter += 1;
    return h.t.request('POST', `/api/public/sites/${h.site.id}/track`, {
      body: { endpoint: who.subscription.endpoint, ...body },
      headers: { origin: 'https://push-shop.example' },
      remoteAddress: `203.0.113.${addressCounter % 250}`,
    });
  }

  function sendEvent(body: Record<string, unknown>, key = apiKey, headers: Record<string, string> = {}) {
    return h.t.request('POST', `/api/v1/sites/${h.site.id}/events`, { body, headers: { authorization: `Bearer ${key}`, ...headers } });
  }

  async function createTriggered(title: string, event: string, delayMinutes: number): Promise<string> {
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: notificationInput({ type: 'TRIGGERED', title, trigger: { event, delay_minutes: delayMinutes } }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.data.notification.id;
  }

  /** Ticks the scheduler and waits until every run of the notification has finished. */
  async function tickAndSettle(notificationId: string): Promise<void> {
    await h.engine.scheduler!.tick();
    await waitFor(
      async () => {
        const open = await h.t.ctx.db
          .selectFrom('notification_runs')
          .select('id')
          .where('notification_id', '=', notificationId)
          .where('status', '=', 'sending')
          .execute();
        return open.length === 0;
      },
      { timeoutMs: 10_000 },
    );
  }

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
    alice = await h.subscribe();
    alicePhone = await h.subscribe({ userAgent: 'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 Chrome/126.0 Mobile Safari/537.36' });
    bob = await h.subscribe();
    const key = await h.t.request('POST', `/api/sites/${h.site.id}/api-keys`, { token: h.owner.token, body: { name: 'Shop backend' } });
    apiKey = key.body.data.key;
    const { secret } = (await h.t.request('GET', `/api/sites/${h.site.id}/identity-secret`, { token: h.owner.token })).body.data;
    const identity_hash = crypto.createHmac('sha256', secret).update('customer-42').digest('hex');
    for (const who of [alice, alicePhone]) {
      const identified = await h.t.request('POST', `/api/public/sites/${h.site.id}/identify`, {
        body: { endpoint: who.subscription.endpoint, external_id: 'customer-42', identity_hash },
      });
      expect(identified.status).toBe(200);
    }
  });
  afterAll(async () => h.close());
  beforeEach(() => {
    clock.advance(DAY_GAP);
  });

  it('is created armed, with its trigger in the response', async () => {
    const id = await createTriggered('Armed', 'signup', 0);
    const response = await h.t.request('GET', `/api/notifications/${id}`, { token: h.owner.token });
    expect(response.body.data.notification).toMatchObject({ type: 'TRIGGERED', status: 'scheduled', trigger: { event: 'signup', delay_minutes: 0 }, recurringSchedule: null });
    const list = await h.t.request('GET', `/api/sites/${h.site.id}/notifications?type=TRIGGERED`, { token: h.owner.token });
    expect(list.body.data.notifications.find((n: { id: string }) => n.id === id)?.trigger).toEqual({ event: 'signup', delay_minutes: 0 });
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('a browser track fires after the delay, not before, for that subscriber only', async () => {
    const id = await createTriggered('Your cart misses you', 'cart_abandoned', 30);
    const tracked = await track(alice, { event: 'cart_abandoned', data: { items: 2, total: 49.5 } });
    expect(tracked.status).toBe(202);
    expect(tracked.headers['access-control-allow-origin']).toBe('*');
    expect(tracked.body.data.event).toMatchObject({ event: 'cart_abandoned', duplicate: false, subscribers: 1, triggered: 1 });

    clock.advance(30 * MINUTE - 1);
    await tickAndSettle(id);
    expect(received(alice, 'Your cart misses you')).toHaveLength(0);

    clock.advance(1);
    await tickAndSettle(id);
    expect(received(alice, 'Your cart misses you')).toHaveLength(1);
    expect(received(alicePhone, 'Your cart misses you')).toHaveLength(0);
    expect(received(bob, 'Your cart misses you')).toHaveLength(0);

    const performance = await h.t.request('GET', `/api/notifications/${id}/performance`, { token: h.owner.token });
    expect(performance.body.data).toMatchObject({ sent: 1, runs: [{ status: 'completed', stats: { total: 1, sent: 1 } }] });
    // Still armed: the next event fires again.
    expect((await h.t.request('GET', `/api/notifications/${id}`, { token: h.owner.token })).body.data.notification.status).toBe('scheduled');
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('a backend event by external_id fires for every browser of that person, after the delay; by subscriber_id for that one', async () => {
    const id = await createTriggered('Order shipped', 'order_shipped', 10);
    const byExternalId = await sendEvent({ event: 'order_shipped', external_id: 'customer-42', data: { order: 1001 } });
    expect(byExternalId.status).toBe(202);
    expect(byExternalId.body.data.event).toMatchObject({ duplicate: false, subscribers: 2, triggered: 2 });
    const bySubscriberId = await sendEvent({ event: 'order_shipped', subscriber_id: bob.subscriberId });
    expect(bySubscriberId.body.data.event).toMatchObject({ subscribers: 1, triggered: 1 });

    clock.advance(10 * MINUTE - 1);
    await tickAndSettle(id);
    expect(h.push.messages.filter((message) => payloadOf(message).title === 'Order shipped')).toHaveLength(0);
    clock.advance(1);
    await tickAndSettle(id);
    for (const who of [alice, alicePhone, bob]) expect(received(who, 'Order shipped')).toHaveLength(1);
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('the same idempotency key twice sends once, from the browser, the backend, or both', async () => {
    const id = await createTriggered('Thanks for your order', 'purchase', 0);
    const first = await track(alice, { event: 'purchase', idempotency_key: 'order-1001' });
    const again = await track(alice, { event: 'purchase', idempotency_key: 'order-1001' });
    expect(first.body.data.event).toMatchObject({ duplicate: false, triggered: 1 });
    expect(again.body.data.event).toMatchObject({ id: first.body.data.event.id, duplicate: true, triggered: 0 });
    // The backend reports the same order for the same person: Alice's browser is not sent it again, her phone is.
    const fromBackend = await sendEvent({ event: 'purchase', external_id: 'customer-42', idempotency_key: 'order-1001' });
    expect(fromBackend.body.data.event).toMatchObject({ duplicate: false, subscribers: 2, triggered: 1 });
    const backendAgain = await sendEvent({ event: 'purchase', external_id: 'customer-42', idempotency_key: 'order-1001' });
    expect(backendAgain.body.data.event).toMatchObject({ duplicate: true, triggered: 0 });
    // Another subscriber's identical key is another event: one browser's key never suppresses another's send.
    const bobsOrder = await track(bob, { event: 'purchase', idempotency_key: 'order-1001' });
    expect(bobsOrder.body.data.event).toMatchObject({ duplicate: false, triggered: 1 });
    // Without a key, every call is a new event.
    await track(alice, { event: 'purchase' });

    await tickAndSettle(id);
    expect(received(alice, 'Thanks for your order')).toHaveLength(2);
    expect(received(alicePhone, 'Thanks for your order')).toHaveLength(1);
    expect(received(bob, 'Thanks for your order')).toHaveLength(1);
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('an idempotency key is one event per event name: the same order number as the key of two events fires both', async () => {
    const placed = await createTriggered('Order placed', 'order_placed', 0);
    const shipped = await createTriggered('Order sent', 'order_sent', 0);
    const first = await sendEvent({ event: 'order_placed', subscriber_id: bob.subscriberId, idempotency_key: 'order-2002' });
    const second = await sendEvent({ event: 'order_sent', subscriber_id: bob.subscriberId, idempotency_key: 'order-2002' });
    expect(first.body.data.event).toMatchObject({ event: 'order_placed', duplicate: false, triggered: 1 });
    expect(second.body.data.event).toMatchObject({ event: 'order_sent', duplicate: false, triggered: 1 });
    expect((await sendEvent({ event: 'order_sent', subscriber_id: bob.subscriberId, idempotency_key: 'order-2002' })).body.data.event).toMatchObject({
      id: second.body.data.event.id,
      duplicate: true,
    });
    await tickAndSettle(placed);
    await tickAndSettle(shipped);
    expect(received(bob, 'Order placed')).toHaveLength(1);
    expect(received(bob, 'Order sent')).toHaveLength(1);
    for (const id of [placed, shipped]) await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('cannot be deleted while one of its firings is being sent (that send would be cut off); once it has finished, it can', async () => {
    const id = await createTriggered('Deleted later', 'wishlist_sale', 15);
    expect((await track(alice, { event: 'wishlist_sale' })).body.data.event.triggered).toBe(1);
    // The firing as a worker holds it mid-send.
    const inFlight = await h.t.ctx.db.updateTable('notification_runs').set({ status: 'sending' }).where('notification_id', '=', id).executeTakeFirst();
    expect(Number(inFlight.numUpdatedRows)).toBe(1);
    const blocked = await h.t.request('DELETE', `/api/notifications/${id}`, { token: h.owner.token });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error.message).toBe('This notification is being sent to a subscriber right now; cancel it to stop new sends, and delete it once that one has finished');
    expect((await h.t.request('GET', `/api/notifications/${id}`, { token: h.owner.token })).status).toBe(200);

    await h.t.ctx.db.updateTable('notification_runs').set({ status: 'completed', finished_at: clock.now() }).where('notification_id', '=', id).execute();
    expect((await h.t.request('DELETE', `/api/notifications/${id}`, { token: h.owner.token })).status).toBe(200);
    expect((await h.t.request('GET', `/api/notifications/${id}`, { token: h.owner.token })).status).toBe(404);
  });

  it('takes the idempotency key from the Idempotency-Key header too: a retry with the header alone sends once; a header and a body key that differ answer 400', async () => {
    const id = await createTriggered('Your parcel is on its way', 'order_shipped', 0);
    const first = await sendEvent({ event: 'order_shipped', subscriber_id: bob.subscriberId }, apiKey, { 'idempotency-key': 'ship-77' });
    const retried = await sendEvent({ event: 'order_shipped', subscriber_id: bob.subscriberId }, apiKey, { 'Idempotency-Key': ' ship-77 ' });
    expect(first.status).toBe(202);
    expect(first.body.data.event).toMatchObject({ duplicate: false, triggered: 1 });
    expect(retried.body.data.event).toMatchObject({ id: first.body.data.event.id, duplicate: true, triggered: 0 });
    // The header and the body name the same key: a retry that moved it from one to the other is still the same event.
    const inBody = await sendEvent({ event: 'order_shipped', subscriber_id: bob.subscriberId, idempotency_key: 'ship-77' });
    expect(inBody.body.data.event).toMatchObject({ id: first.body.data.event.id, duplicate: true });
    const both = await sendEvent({ event: 'order_shipped', subscriber_id: bob.subscriberId, idempotency_key: 'ship-77' }, apiKey, { 'idempotency-key': 'ship-77' });
    expect(both.body.data.event).toMatchObject({ id: first.body.data.event.id, duplicate: true });
    const stored = await h.t.ctx.db.selectFrom('site_events').select('idempotency_key').where('id', '=', first.body.data.event.id).executeTakeFirstOrThrow();
    expect(stored.idempotency_key).toBe('ship-77');

    const eventsBefore = await h.t.ctx.db.selectFrom('site_events').select('id').execute();
    const differ = await sendEvent({ event: 'order_shipped', subscriber_id: bob.subscriberId, idempotency_key: 'ship-78' }, apiKey, { 'idempotency-key': 'ship-77' });
    expect(differ.status).toBe(400);
    expect(differ.body).toEqual({
      success: false,
      error: { message: 'The Idempotency-Key header and idempotency_key in the body differ: send one of them, or the same key in both', code: 'idempotency_key_mismatch' },
    });
    const empty = await sendEvent({ event: 'order_shipped', subscriber_id: bob.subscriberId }, apiKey, { 'idempotency-key': '  ' });
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toContain('the Idempotency-Key header must not be empty');
    const tooLong = await sendEvent({ event: 'order_shipped', subscriber_id: bob.subscriberId }, apiKey, { 'idempotency-key': 'k'.repeat(201) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toContain('the Idempotency-Key header must be at most 200 characters');
    expect(await h.t.ctx.db.selectFrom('site_events').select('id').execute()).toHaveLength(eventsBefore.length);

    await tickAndSettle(id);
    expect(received(bob, 'Your parcel is on its way')).toHaveLength(1);
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('counts its firings in fire_count: 0 while it waits for its event, then one per firing, on GET and in the list', async () => {
    const id = await createTriggered('Price drop', 'price_dropped', 0);
    const fireCount = async () => {
      const one = await h.t.request('GET', `/api/notifications/${id}`, { token: h.owner.token });
      const list = await h.t.request('GET', `/api/sites/${h.site.id}/notifications?type=TRIGGERED`, { token: h.owner.token });
      return { get: one.body.data.notification.fire_count, list: list.body.data.notifications.find((n: { id: string }) => n.id === id)?.fire_count };
    };
    // "Waiting for event": armed, never fired.
    expect(await fireCount()).toEqual({ get: 0, list: 0 });

    expect((await track(alice, { event: 'price_dropped' })).body.data.event.triggered).toBe(1);
    await tickAndSettle(id);
    expect(await fireCount()).toEqual({ get: 1, list: 1 });

    const second = await sendEvent({ event: 'price_dropped', subscriber_id: bob.subscriberId, idempotency_key: 'drop-7' });
    expect(second.body.data.event).toMatchObject({ duplicate: false, triggered: 1 });
    // The same event again is a duplicate: not a firing.
    expect((await sendEvent({ event: 'price_dropped', subscriber_id: bob.subscriberId, idempotency_key: 'drop-7' })).body.data.event).toMatchObject({ duplicate: true, triggered: 0 });
    await tickAndSettle(id);
    expect(received(alice, 'Price drop')).toHaveLength(1);
    expect(received(bob, 'Price drop')).toHaveLength(1);
    expect(await fireCount()).toEqual({ get: 2, list: 2 });
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('an event nobody listens for, or whose name differs in case, sends nothing', async () => {
    const id = await createTriggered('Welcome back', 'returned', 0);
    const unknown = await track(alice, { event: 'never_configured' });
    expect(unknown.status).toBe(202);
    expect(unknown.body.data.event).toMatchObject({ triggered: 0 });
    expect((await sendEvent({ event: 'Returned', subscriber_id: alice.subscriberId })).body.data.event).toMatchObject({ triggered: 0 });
    await tickAndSettle(id);
    expect(received(alice, 'Welcome back')).toHaveLength(0);
    expect(await h.t.ctx.db.selectFrom('notification_runs').select('id').where('notification_id', '=', id).execute()).toEqual([]);
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('a disarmed (cancelled) notification sends nothing, including sends still waiting for their delay', async () => {
    const id = await createTriggered('Come back', 'visited', 15);
    expect((await track(alice, { event: 'visited' })).body.data.event.triggered).toBe(1);
    const cancelled = await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
    expect(cancelled.body.data.notification).toMatchObject({ status: 'cancelled', trigger: { event: 'visited', delay_minutes: 15 } });
    expect((await track(alice, { event: 'visited' })).body.data.event.triggered).toBe(0);
    clock.advance(15 * MINUTE);
    await tickAndSettle(id);
    expect(received(alice, 'Come back')).toHaveLength(0);
    const runs = await h.t.ctx.db.selectFrom('notification_runs').select('status').where('notification_id', '=', id).execute();
    expect(runs).toEqual([{ status: 'cancelled' }]);
  });

  it('an unsubscribed subscriber gets nothing: refused at once, or skipped when it left during the delay', async () => {
    const carol = await h.subscribe();
    const dave = await h.subscribe();
    const id = await createTriggered('Still there?', 'browsed', 5);
    expect((await track(carol, { event: 'browsed' })).body.data.event.triggered).toBe(1);
    // Carol unsubscribes before the delay is over.
    const left = await h.t.request('POST', `/api/public/sites/${h.site.id}/subscribers/unsubscribe`, { body: { endpoint: carol.subscription.endpoint } });
    expect(left.status).toBe(200);
    // Dave left before the event: the browser and the backend are told he is not a subscriber.
    await h.t.request('POST', `/api/public/sites/${h.site.id}/subscribers/unsubscribe`, { body: { endpoint: dave.subscription.endpoint } });
    const daveTrack = await track(dave, { event: 'browsed' });
    expect(daveTrack.status).toBe(404);
    expect(daveTrack.body.error.message).toBe('Subscriber not found');
    expect((await sendEvent({ event: 'browsed', subscriber_id: dave.subscriberId })).status).toBe(404);

    clock.advance(5 * MINUTE);
    await tickAndSettle(id);
    expect(received(carol, 'Still there?')).toHaveLength(0);
    expect(received(dave, 'Still there?')).toHaveLength(0);
    await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('fires every armed notification listening for the event; edits change what it listens for', async () => {
    const first = await createTriggered('First reaction', 'review_posted', 0);
    const second = await createTriggered('Second reaction', 'review_posted', 0);
    const edited = await h.t.request('PATCH', `/api/notifications/${second}`, {
      token: h.owner.token,
      body: notificationInput({ type: 'TRIGGERED', title: 'Second reaction', trigger: { event: 'review_liked', delay_minutes: 0 } }),
    });
    expect(edited.status).toBe(200);
    expect(edited.body.data.notification.trigger).toEqual({ event: 'review_liked', delay_minutes: 0 });
    expect((await track(bob, { event: 'review_posted' })).body.data.event.triggered).toBe(1);
    expect((await track(bob, { event: 'review_liked' })).body.data.event.triggered).toBe(1);
    await tickAndSettle(first);
    await tickAndSettle(second);
    expect(received(bob, 'First reaction')).toHaveLength(1);
    expect(received(bob, 'Second reaction')).toHaveLength(1);
    for (const id of [first, second]) await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
  });

  it('refuses invalid triggers with clear messages', async () => {
    const post = (body: unknown) => h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body });
    const cases: Array<[unknown, RegExp]> = [
      [notificationInput({ type: 'TRIGGERED' }), /Event name is required/],
      [notificationInput({ type: 'TRIGGERED', trigger: { event: 'cart abandoned', delay_minutes: 0 } }), /letters, digits/],
      [notificationInput({ type: 'TRIGGERED', trigger: { event: 'x'.repeat(65), delay_minutes: 0 } }), /at most 64/],
      [notificationInput({ type: 'TRIGGERED', trigger: { event: 'ok', delay_minutes: -1 } }), /Delay must be 0 or more/],
      [notificationInput({ type: 'TRIGGERED', trigger: { event: 'ok', delay_minutes: 60 * 24 * 31 } }), /at most 30 days/],
      [notificationInput({ type: 'TRIGGERED', trigger: { event: 'ok', delay_minutes: 0 }, scheduled_at: '2026-06-01T09:00' }), /scheduled_at is for one-time/],
      [notificationInput({ type: 'ONE_TIME', trigger: { event: 'ok', delay_minutes: 0 } }), /only for TRIGGERED/],
    ];
    for (const [body, message] of cases) {
      const response = await post(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.message).toMatch(message);
    }
    expect((await track(alice, { event: 'has space' })).status).toBe(400);
    expect((await sendEvent({ event: '', external_id: 'customer-42' })).status).toBe(400);
  });
});
