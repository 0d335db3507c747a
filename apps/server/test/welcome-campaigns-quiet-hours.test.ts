import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, type DeliveryHarness } from './support/delivery-harness';
import { waitFor } from './support/test-app';

// A welcome step held for the site's quiet hours keeps the gap to the next
// step: each step is due its delay after the one before (docs/delivery.md,
// "Quiet hours"), so a held step moves the steps after it by the same wait.
const MINUTE = 60_000;

const step = (sequence_order: number, delay_minutes: number, title: string) => ({
  sequence_order,
  delay_minutes,
  notification: { title, message: `${title} message`, destination_url: `https://push-shop.example/${sequence_order}`, icon_url: null, image_url: null },
});

describe('welcome campaigns and quiet hours', () => {
  let h: DeliveryHarness;
  // 08:00 UTC = 10:00 in Europe/Paris (the harness subscribes browsers in that zone).
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 8));

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
  });
  afterAll(async () => h?.close());

  const titlesOf = (subscriptionId: string) => h.push.messages.filter((m) => m.subscriptionId === subscriptionId).map((m) => (m.payload as { title: string }).title);
  const runsSending = async () => (await h.t.ctx.db.selectFrom('notification_runs').select('id').where('status', '=', 'sending').executeTakeFirst()) !== undefined;
  const stepWaiting = async () =>
    (await h.t.ctx.db.selectFrom('notification_runs').select('id').where('status', '=', 'pending').where('due_at', '<=', clock.now()).executeTakeFirst()) !== undefined;
  async function tickAndSettle() {
    for (let pass = 0; pass < 25; pass++) {
      await h.engine.scheduler!.tick();
      await waitFor(async () => !(await runsSending()), { timeoutMs: 15_000 });
      if (!(await stepWaiting())) return;
    }
    throw new Error('drip steps kept waiting');
  }
  async function advance(minutes: number) {
    clock.advance(minutes * MINUTE);
    await tickAndSettle();
  }

  it('a step held by quiet hours: the next step still comes its delay after it, not right behind it', async () => {
    const quiet = await h.t.request('PATCH', `/api/sites/${h.site.id}`, { token: h.owner.token, body: { settings: { quietHours: { start: '09:00', end: '12:00' } } } });
    expect(quiet.status, JSON.stringify(quiet.body)).toBe(200);
    const campaign = await h.t.request('POST', `/api/sites/${h.site.id}/welcome-campaigns`, { token: h.owner.token, body: { name: 'Quiet', is_active: true, steps: [step(1, 0, 'Hello'), step(2, 60, 'One hour later')] } });
    expect(campaign.status).toBe(201);

    // Subscribes at 10:00 Paris time, inside the quiet window: step 1 waits until 12:00.
    const newcomer = await h.subscribe();
    await tickAndSettle();
    expect(titlesOf(newcomer.subscription.id)).toEqual([]);

    // 12:00 Paris: step 1 goes.
    await advance(120);
    expect(titlesOf(newcomer.subscription.id)[0]).toBe('Hello');
    // Step 2 is "due its delay (60 minutes) after the previous step": not in the same minute as step 1.
    expect(titlesOf(newcomer.subscription.id)).toEqual(['Hello']);
    await advance(60);
    expect(titlesOf(newcomer.subscription.id)).toEqual(['Hello', 'One hour later']);
  });
});
