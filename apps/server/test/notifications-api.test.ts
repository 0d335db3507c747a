import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scheduler } from '../src/jobs/scheduler';
import { InProcessQueue } from '../src/jobs/in-process-queue';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import { waitFor } from './support/test-app';

const MINUTE = 60_000;

describe('notifications API (spec §7, §4, §5)', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 8, 0));
  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
    await h.t.request('PATCH', `/api/sites/${h.site.id}`, { token: h.owner.token, body: { settings: { timezone: 'Europe/Paris' } } });
  });
  afterAll(async () => h.close());

  const create = (body: Record<string, unknown>) => h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput(body) });

  it('validates with the spec messages', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ title: '' }, /Title is required/],
      [{ title: 'x'.repeat(51) }, /Title must be at most 50 characters/],
      [{ message: '' }, /Message is required/],
      [{ message: 'x'.repeat(151) }, /Message must be at most 150 characters/],
      [{ destination_url: 'shop.example/sale' }, /complete URL starting with https:\/\//],
      [{ destination_url: 'javascript:alert(1)' }, /complete URL/],
      [{ icon_url: 'ftp://x.example/i.png' }, /icon_url/],
      [{ scheduled_at: 'next tuesday' }, /scheduled_at/],
      [{ scheduled_at: '2026-05-01T09:00' }, /Schedule time must be in the future/],
      [{ scheduled_at: '2026-07-15T09:00' }, /up to 30 days ahead/],
      [{ actions: [{ title: 'a', url: 'https://a.example' }, { title: 'b', url: 'https://b.example' }, { title: 'c', url: 'https://c.example' }] }, /At most 2 action buttons/],
      [{ segment_id: 'no-such-segment' }, /Segment not found/],
      [{ type: 'WEEKLY' }, /Type must be ONE_TIME, RECURRING or TRIGGERED/],
    ];
    for (const [body, message] of cases) {
      const response = await create(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.message, JSON.stringify(body)).toMatch(message);
    }
  });

  it('refuses, when saving, a notification too large for one push message (RFC 8291: 3,993 bytes)', async () => {
    const longUrl = (path: string) => `https://push-shop.example/${path}?${'q'.repeat(1900)}`;
    const tooLarge = await create({ destination_url: longUrl('a'), icon_url: longUrl('b'), image_url: longUrl('c') });
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.error.message).toMatch(/too large for web push/);
    const fits = await create({ destination_url: longUrl('a') });
    expect(fits.status).toBe(201);
    const grown = await h.t.request('PATCH', `/api/notifications/${fits.body.data.notification.id}`, { token: h.owner.token, body: { icon_url: longUrl('b'), image_url: longUrl('c') } });
    expect(grown.status).toBe(400);
    expect(grown.body.error.message).toMatch(/too large for web push/);
  });

  it('creates a draft with the submitted payload, lists it with counts, edits and deletes it', async () => {
    const created = await create({ title: 'Draft one', image_url: 'https://push-shop.example/big.png' });
    expect(created.status).toBe(201);
    const n = created.body.data.notification;
    expect(n).toMatchObject({ type: 'ONE_TIME', status: 'draft', title: 'Draft one', image_url: 'https://push-shop.example/big.png', scheduled_at: null, sent_at: null, actions: [] });

    const list = await h.t.request('GET', `/api/sites/${h.site.id}/notifications?status=draft`, { token: h.owner.token });
    expect(list.body.data.notifications.map((x: { id: string }) => x.id)).toContain(n.id);
    expect(list.body.data.counts.draft).toBeGreaterThanOrEqual(1);
    expect((await h.t.request('GET', `/api/sites/${h.site.id}/notifications?status=bogus`, { token: h.owner.token })).status).toBe(400);

    const edited = await h.t.request('PATCH', `/api/notifications/${n.id}`, { token: h.owner.token, body: { title: 'Draft edited', image_url: null } });
    expect(edited.body.data.notification).toMatchObject({ title: 'Draft edited', image_url: null, status: 'draft' });
    expect((await h.t.request('PATCH', `/api/notifications/${n.id}`, { token: h.owner.token, body: { site_id: 'elsewhere' } })).status).toBe(400);

    expect((await h.t.request('DELETE', `/api/notifications/${n.id}`, { token: h.owner.token })).status).toBe(200);
    expect((await h.t.request('GET', `/api/notifications/${n.id}`, { token: h.owner.token })).status).toBe(404);
  });

  it('sends a scheduled notification when it is due, in the site timezone, and not before', async () => {
    const subscriber = await h.subscribe();
    // 10:30 in Paris (UTC+2 in June) is 08:30 UTC, 30 minutes from now.
    const created = await create({ title: 'Scheduled', scheduled_at: '2026-06-01T10:30' });
    const n = created.body.data.notification;
    expect(n.status).toBe('scheduled');
    expect(n.scheduled_at).toBe('2026-06-01T08:30:00.000Z');

    clock.advance(29 * MINUTE);
    await h.engine.scheduler!.tick();
    expect((await h.t.request('GET', `/api/notifications/${n.id}`, { token: h.owner.token })).body.data.notification.status).toBe('scheduled');
    expect(h.push.messages.filter((m) => (m.payload as any).title === 'Scheduled')).toHaveLength(0);

    clock.advance(1 * MINUTE);
    await h.engine.scheduler!.tick();
    const done = await h.waitForStatus(n.id, ['completed']);
    expect(done.sent_at).toBe(new Date(clock.now()).toISOString());
    const received = h.push.messages.filter((m) => (m.payload as any).title === 'Scheduled');
    expect(received.map((m) => m.subscriptionId)).toEqual([subscriber.subscription.id]);
  });

  it('moves, unschedules and cancels a scheduled notification before its time', async () => {
    const moved = (await create({ title: 'Moved', scheduled_at: '2026-06-02T09:00' })).body.data.notification;
    const reschedule = await h.t.request('PATCH', `/api/notifications/${moved.id}`, { token: h.owner.token, body: { scheduled_at: '2026-06-03T09:00' } });
    expect(reschedule.body.data.notification).toMatchObject({ status: 'scheduled', scheduled_at: '2026-06-03T07:00:00.000Z' });
    const unscheduled = await h.t.request('PATCH', `/api/notifications/${moved.id}`, { token: h.owner.token, body: { scheduled_at: null } });
    expect(unscheduled.body.data.notification).toMatchObject({ status: 'draft', scheduled_at: null });

    const cancelled = (await create({ title: 'Cancelled', scheduled_at: '2026-06-02T10:00' })).body.data.notification;
    const cancel = await h.t.request('POST', `/api/notifications/${cancelled.id}/cancel`, { token: h.owner.token });
    expect(cancel.body.data.notification.status).toBe('cancelled');
    expect((await h.t.request('POST', `/api/notifications/${cancelled.id}/cancel`, { token: h.owner.token })).status).toBe(409);
    // A cancelled notification can be duplicated into a new draft and rescheduled.
    const copy = await h.t.request('POST', `/api/notifications/${cancelled.id}/duplicate`, { token: h.owner.token });
    expect(copy.status).toBe(201);
    expect(copy.body.data.notification).toMatchObject({ status: 'draft', title: 'Cancelled', stats: { total: 0, sent: 0 } });

    clock.advance(3 * 24 * 60 * MINUTE);
    await h.engine.scheduler!.tick();
    await new Promise((r) => setTimeout(r, 300));
    const titles = h.push.messages.map((m) => (m.payload as any).title);
    expect(titles).not.toContain('Moved');
    expect(titles).not.toContain('Cancelled');
    expect((await h.t.request('GET', `/api/notifications/${moved.id}`, { token: h.owner.token })).body.data.notification.status).toBe('draft');
  });

  it('finishes a due run it found after a clock jump, once', async () => {
    const n = (await create({ title: 'Jumped', scheduled_at: new Date(clock.now() + 60 * MINUTE).toISOString() })).body.data.notification;
    clock.advance(10 * 24 * 60 * MINUTE);
    await h.engine.scheduler!.tick();
    await h.engine.scheduler!.tick();
    await h.waitForStatus(n.id, ['completed']);
    await waitFor(() => h.push.messages.some((m) => (m.payload as any).title === 'Jumped'));
    const runs = await h.t.ctx.db.selectFrom('notification_runs').select('id').where('notification_id', '=', n.id).execute();
    expect(runs).toHaveLength(1);
  });
});

describe('notification routes belong to their owner', () => {
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness({ engine: false });
  });
  afterAll(async () => h.close());

  it("answers 404 for another user's notification on every route and changes nothing", async () => {
    const intruder = await h.t.createUser();
    const intruderSite = await h.t.createSite(intruder.token, { name: 'Intruder' });
    const draft = (await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ title: 'Mine' }) })).body.data.notification;
    const before = await h.t.ctx.db.selectFrom('notifications').selectAll().orderBy('id').execute();
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/api/notifications/${draft.id}`],
      ['PATCH', `/api/notifications/${draft.id}`, { title: 'Hacked' }],
      ['DELETE', `/api/notifications/${draft.id}`],
      ['POST', `/api/notifications/${draft.id}/send`],
      ['POST', `/api/notifications/${draft.id}/cancel`],
      ['POST', `/api/notifications/${draft.id}/duplicate`],
      ['POST', `/api/notifications/${draft.id}/retry`],
      ['GET', `/api/notifications/${draft.id}/performance`],
      ['GET', `/api/sites/${h.site.id}/notifications`],
      ['POST', `/api/sites/${h.site.id}/notifications`, notificationInput()],
    ];
    for (const [method, url, body] of attempts) {
      const response = await h.t.request(method, url, { token: intruder.token, body });
      expect(response.status, `${method} ${url}`).toBe(404);
    }
    // Their own site's path with my notification's id is still mine: 404 too.
    expect((await h.t.request('GET', `/api/sites/${intruderSite.id}/notifications`, { token: intruder.token })).body.data.notifications).toEqual([]);
    const after = await h.t.ctx.db.selectFrom('notifications').selectAll().orderBy('id').execute();
    expect(after).toEqual(before);
  });
});

describe('two schedulers on one database', () => {
  it('claims a due run once when two schedulers tick at the same moment', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 8, 0));
    const h = await createDeliveryHarness({ clock, engine: false });
    const body = notificationInput({ title: 'Raced', scheduled_at: new Date(clock.now() + 5 * MINUTE).toISOString() });
    const n = (await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body })).body.data.notification;
    clock.advance(5 * MINUTE);
    const queues = [new InProcessQueue(h.t.ctx.log), new InProcessQueue(h.t.ctx.log)];
    const enqueued: string[] = [];
    for (const queue of queues) queue.work({ name: 'fanout-run', payload: { parse: (p: unknown) => p } as any }, async (p: any) => void enqueued.push(p.runId), { concurrency: 1 });
    const schedulers = queues.map((queue) => new Scheduler(h.t.ctx, queue));
    await Promise.all(schedulers.map((s) => s.tick()));
    await Promise.all(queues.map((q) => q.idle()));
    expect(enqueued).toHaveLength(1);
    await Promise.all(queues.map((q) => q.close()));
    const runs = await h.t.ctx.db.selectFrom('notification_runs').select(['status']).where('notification_id', '=', n.id).execute();
    expect(runs).toEqual([{ status: 'sending' }]);
    await h.close();
  });

});
