import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from '../support/delivery-harness';
import { runSeqsOfNotification } from '../../src/db/run-seq';

// Issue 14 §3: a site caps pushes per subscriber in a rolling window (all
// kinds count); a subscriber at the cap is skipped and counted as "skipped:
// frequency cap", never silently dropped; an exempt notification goes
// through; two sends racing to a subscriber one below the cap send one.
// docs/delivery.md, "Frequency cap".
describe('frequency cap', () => {
  const HOUR = 3_600_000;
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 8));
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
  });
  afterAll(async () => h.close());

  const setCap = (frequencyCap: unknown) => h.t.request('PATCH', `/api/sites/${h.site.id}`, { token: h.owner.token, body: { settings: { frequencyCap } } });

  async function create(overrides: Record<string, unknown> = {}) {
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput(overrides) });
    expect(created.status).toBe(201);
    return created.body.data.notification.id as string;
  }

  async function send(id: string) {
    expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token })).status).toBe(200);
    return h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed'], 30_000);
  }

  const performance = async (id: string) => (await h.t.request('GET', `/api/notifications/${id}/performance`, { token: h.owner.token })).body.data;
  const received = (subscriptionId: string) => h.push.messages.filter((m) => m.subscriptionId === subscriptionId).length;

  it('refuses a cap out of range with a message naming the field, and reads back what was saved', async () => {
    for (const [cap, message] of [
      [{ max: 0, hours: 24 }, 'frequencyCap.max must be at least 1'],
      [{ max: 3, hours: 0 }, 'frequencyCap.hours must be at least 1'],
      [{ max: 3, hours: 169 }, 'frequencyCap.hours must be at most 168 (a week)'],
      [{ max: 2.5, hours: 24 }, 'frequencyCap.max must be a whole number'],
      [{ max: 3 }, 'frequencyCap.hours must be a number'],
    ] as const) {
      const response = await setCap(cap);
      expect(response.status, JSON.stringify(cap)).toBe(400);
      expect(response.body.error.message).toContain(message);
    }
    const saved = await setCap({ max: 2, hours: 24 });
    expect(saved.status).toBe(200);
    expect(saved.body.data.site.settings.frequencyCap).toEqual({ max: 2, hours: 24 });
  });

  it('skips subscribers who had the cap, counts them as skipped for the cap, lets an exempt one through, and frees them once the window passes', async () => {
    const a = await h.subscribe();
    const b = await h.subscribe();
    // Both get two pushes within the window.
    await send(await create({ title: 'One' }));
    clock.advance(HOUR);
    await send(await create({ title: 'Two' }));
    expect([received(a.subscription.id), received(b.subscription.id)]).toEqual([2, 2]);

    clock.advance(HOUR);
    const third = await create({ title: 'Three' });
    const done = await send(third);
    // Nobody got it, and it says why: not "completed" as if it reached anyone.
    expect(done.counts).toMatchObject({ targeted: 2, sent: 0, skipped: 2, failed: 0 });
    expect([received(a.subscription.id), received(b.subscription.id)]).toEqual([2, 2]);
    expect((await performance(third)).skipped).toEqual({ inactive: 0, frequency_cap: 2, quiet_hours_deferred: 0 });
    const rows = await h.t.ctx.db.selectFrom('deliveries').select(['status', 'reason', 'error']).where('run_seq', 'in', runSeqsOfNotification(third)).execute();
    expect(rows).toEqual([
      { status: 'skipped', reason: 'frequency_cap', error: "The subscriber had already had the site's frequency cap of pushes" },
      { status: 'skipped', reason: 'frequency_cap', error: "The subscriber had already had the site's frequency cap of pushes" },
    ]);

    // An order update the subscriber asked for is exempt.
    const exempt = await create({ title: 'Your order shipped', frequency_cap_exempt: true });
    expect((await send(exempt)).counts).toMatchObject({ sent: 2, skipped: 0 });

    // The exempt push counts too (it was a push): one hour later both are still at the cap.
    clock.advance(HOUR);
    expect((await send(await create({ title: 'Still capped' }))).counts).toMatchObject({ sent: 0, skipped: 2 });
    // 24 hours after the last three, the window has room again.
    clock.advance(23 * HOUR + 1);
    const later = await create({ title: 'Next day' });
    const laterDone = await send(later);
    expect(laterDone.counts).toMatchObject({ sent: 2, skipped: 0 });
  });

  it('two sends racing to subscribers one below the cap deliver one of them to each, never both', async () => {
    await setCap({ max: 1, hours: 1 });
    clock.advance(2 * HOUR);
    const before = h.push.messages.length;
    const [x, y] = [await create({ title: 'Race X' }), await create({ title: 'Race Y' })];
    await Promise.all([h.t.request('POST', `/api/notifications/${x}/send`, { token: h.owner.token }), h.t.request('POST', `/api/notifications/${y}/send`, { token: h.owner.token })]);
    const [doneX, doneY] = await Promise.all([h.waitForStatus(x, ['completed', 'completed_with_errors', 'failed'], 30_000), h.waitForStatus(y, ['completed', 'completed_with_errors', 'failed'], 30_000)]);
    const subscribers = doneX.counts.targeted as number;
    // Each subscriber got exactly one of the two: the cap is 1.
    expect(doneX.counts.sent + doneY.counts.sent).toBe(subscribers);
    expect(doneX.counts.skipped + doneY.counts.skipped).toBe(subscribers);
    const bySubscription = new Map<string, number>();
    for (const message of h.push.messages.slice(before)) bySubscription.set(message.subscriptionId, (bySubscription.get(message.subscriptionId) ?? 0) + 1);
    expect([...bySubscription.values()].every((count) => count === 1)).toBe(true);
    expect(bySubscription.size).toBe(subscribers);
  });

  it('turning the cap off sends to everyone again', async () => {
    expect((await setCap(null)).body.data.site.settings.frequencyCap).toBeNull();
    const id = await create({ title: 'Uncapped' });
    const done = await send(id);
    expect(done.counts.skipped).toBe(0);
    expect(done.counts.sent).toBe(done.counts.targeted);
  });
});
