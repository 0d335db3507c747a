import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import type { ReceivedPush, TestSubscription } from './support/push-service';
import { sessionsWaitingOnLocks } from './support/lock-waits';
import { waitFor } from './support/test-app';

const MINUTE = 60_000;
const DAY_GAP = 24 * 60 * MINUTE;
const payloadOf = (message: ReceivedPush) => message.payload as { title: string };

// A triggered notification's figures and its cancel against what runs at the
// same moment: an event firing it while the owner cancels it, and the erasure
// of a subscriber it fired for. On PostgreSQL the race is played out on two
// connections; on SQLite (one writer at a time) the event comes first.
describe('triggered notifications racing a cancel and an erasure', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.UTC(2026, 4, 4, 10));
  let alice: { subscriberId: string; subscription: TestSubscription };
  let bob: { subscriberId: string; subscription: TestSubscription };
  let apiKey: string;

  const received = (who: { subscription: TestSubscription }, title: string) =>
    h.push.messages.filter((message) => message.subscriptionId === who.subscription.id && payloadOf(message).title === title);

  function sendEvent(body: Record<string, unknown>) {
    return h.t.request('POST', `/api/v1/sites/${h.site.id}/events`, { body, headers: { authorization: `Bearer ${apiKey}` } });
  }

  async function createTriggered(title: string, event: string, delayMinutes: number): Promise<string> {
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, {
      token: h.owner.token,
      body: notificationInput({ type: 'TRIGGERED', title, trigger: { event, delay_minutes: delayMinutes } }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.data.notification.id;
  }

  async function tickAndSettle(notificationId: string): Promise<void> {
    await h.engine.scheduler!.tick();
    await waitFor(
      async () => {
        const open = await h.t.ctx.db.selectFrom('notification_runs').select('id').where('notification_id', '=', notificationId).where('status', '=', 'sending').execute();
        return open.length === 0;
      },
      { timeoutMs: 10_000 },
    );
  }

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
    alice = await h.subscribe();
    bob = await h.subscribe();
    const key = await h.t.request('POST', `/api/sites/${h.site.id}/api-keys`, { token: h.owner.token, body: { name: 'Shop backend' } });
    apiKey = key.body.data.key;
  });
  afterAll(async () => h.close());
  beforeEach(() => {
    clock.advance(DAY_GAP);
  });

  it('an event received while its triggered notification is being cancelled sends nothing after the cancel', async () => {
    const title = 'Cancelled while firing';
    const id = await createTriggered(title, 'race_event', 5);
    const original = h.t.ctx.onSiteEvent;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    // The event's transaction has found the armed trigger and created its run, and has not committed yet.
    h.t.ctx.onSiteEvent = async (trx, event) => {
      const fired = await original(trx, event);
      reached();
      await gate;
      return fired;
    };
    try {
      const eventDone = sendEvent({ event: 'race_event', subscriber_id: alice.subscriberId });
      await atGate;
      let cancelled;
      if (h.t.ctx.dbKind === 'postgres') {
        // The cancel waits for the event's transaction (before, it went ahead, missed the uncommitted run, and the push was sent).
        const cancelling = h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
        await waitFor(async () => ((await sessionsWaitingOnLocks(h.t.ctx.db)) > 0 ? true : undefined), { timeoutMs: 10_000 });
        release();
        cancelled = await cancelling;
      } else {
        release();
        await eventDone;
        cancelled = await h.t.request('POST', `/api/notifications/${id}/cancel`, { token: h.owner.token });
      }
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      expect(cancelled.body.data.notification.status).toBe('cancelled');
      expect((await eventDone).status).toBe(202);
    } finally {
      h.t.ctx.onSiteEvent = original;
    }
    const runs = await h.t.ctx.db.selectFrom('notification_runs').select(['status']).where('notification_id', '=', id).execute();
    expect(runs.map((run) => run.status)).toEqual(['cancelled']);
    clock.advance(5 * MINUTE);
    await tickAndSettle(id);
    expect(received(alice, title)).toHaveLength(0);
  });

  // Before, the erasure deleted the run made for the subscriber without adding it to removed_run_count, so it said 1.
  it('erasing a subscriber keeps the fire_count of a triggered notification that fired for them', async () => {
    const title = 'Fired then erased';
    const id = await createTriggered(title, 'erase_event', 0);
    for (const who of [alice, bob]) {
      const event = await sendEvent({ event: 'erase_event', subscriber_id: who.subscriberId });
      expect(event.body.data.event).toMatchObject({ triggered: 1 });
    }
    await tickAndSettle(id);
    expect(received(bob, title)).toHaveLength(1);
    const before = (await h.t.request('GET', `/api/notifications/${id}`, { token: h.owner.token })).body.data.notification;
    expect(before.fire_count).toBe(2);

    const erased = await h.t.request('DELETE', `/api/subscribers/${bob.subscriberId}?erase=true`, { token: h.owner.token });
    expect(erased.status, JSON.stringify(erased.body)).toBe(200);
    const after = (await h.t.request('GET', `/api/notifications/${id}`, { token: h.owner.token })).body.data.notification;
    // Counters keep their figures after an erase, "fired N times" too.
    expect({ fire_count: after.fire_count, sent: after.stats?.sent ?? after.sent_count }).toEqual({ fire_count: 2, sent: before.stats?.sent ?? before.sent_count });
  });
});
