import { afterEach, describe, expect, it } from 'vitest';
import { abDraw, abFanOutFor, abSampleSize } from '../src/delivery/ab-split';
import type { RunRow } from '../src/db/schema';
import { featureDueWorkSources, startEngine } from '../src/engine';
import { abVerdict, twoProportionZ } from '../src/features/notifications/ab-test-stats';
import { Scheduler } from '../src/jobs/scheduler';
import { ManualClock } from '../src/platform/clock';
import { createPushClient } from '../src/roles';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import { waitFor } from './support/test-app';

// Issue 14 §2: A/B tests (docs/product.md, "A/B tests"; docs/delivery.md,
// "A/B tests"). A sample splits as asked, the rest gets the winner once even
// when two schedulers race, the decision lives in the database, every variant
// can go to everyone, the owner can pick by hand, and bad input is a 400.
// Time is a ManualClock; schedulers are ticked by hand.

const MINUTE = 60_000;

const variant = (letter: string) => ({ title: `Sale ${letter}`, message: `Offer ${letter}`, destination_url: `https://push-shop.example/${letter.toLowerCase()}`, image_url: null });
const twoVariants = [variant('A'), variant('B')];

describe('A/B significance (two-proportion z-test at 95 %)', () => {
  it('computes z for known numbers and calls only a real difference significant', () => {
    // 100 of 1,000 against 70 of 1,000: pooled 0.085, z = 0.03 / √(0.085 × 0.915 × 0.002) = 2.405.
    expect(twoProportionZ({ delivered: 1000, clicked: 100 }, { delivered: 1000, clicked: 70 })).toBeCloseTo(2.405, 3);
    // 100 of 1,000 against 90 of 1,000: z = 0.763, not significant.
    expect(twoProportionZ({ delivered: 1000, clicked: 100 }, { delivered: 1000, clicked: 90 })).toBeCloseTo(0.7626, 3);
    expect(abVerdict([{ index: 0, delivered: 1000, clicked: 70 }, { index: 1, delivered: 1000, clicked: 100 }])).toEqual({ leader: 1, runnerUp: 0, significant: true });
    expect(abVerdict([{ index: 0, delivered: 1000, clicked: 90 }, { index: 1, delivered: 1000, clicked: 100 }])).toEqual({ leader: 1, runnerUp: 0, significant: false });
    // Nobody clicked: a tie, variant A; nothing to test.
    expect(abVerdict([{ index: 0, delivered: 10, clicked: 0 }, { index: 1, delivered: 10, clicked: 0 }])).toEqual({ leader: 0, runnerUp: 1, significant: false });
    // Ties go to the lower index; a variant delivered to nobody comes last.
    expect(abVerdict([{ index: 0, delivered: 0, clicked: 0 }, { index: 1, delivered: 10, clicked: 2 }, { index: 2, delivered: 20, clicked: 4 }]).leader).toBe(1);
    expect(twoProportionZ({ delivered: 0, clicked: 0 }, { delivered: 10, clicked: 1 })).toBeNull();
  });

  it('draws the same number for the same subscriber, and sizes the sample as round(N × percent)', () => {
    expect(abDraw('n1', 's1')).toBe(abDraw('n1', 's1'));
    expect(abDraw('n1', 's1')).not.toBe(abDraw('n2', 's1'));
    expect(abSampleSize(50, 20, 2)).toBe(10);
    expect(abSampleSize(1003, 20, 3)).toBe(201);
    expect(abSampleSize(7, 10, 2)).toBe(2); // at least one per variant
    expect(abSampleSize(1, 10, 2)).toBe(1);
  });
});

describe('A/B tests', () => {
  let h: DeliveryHarness;
  let clock: ManualClock;
  const rivals: Scheduler[] = [];

  async function start() {
    clock = new ManualClock(Date.UTC(2026, 5, 1, 8));
    h = await createDeliveryHarness({ clock });
  }
  afterEach(async () => {
    for (const rival of rivals.splice(0)) await rival.stop();
    await h?.close();
  });

  const create = (body: Record<string, unknown>) => h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput(body) });
  const send = (id: string) => h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token });
  const performance = async (id: string) => (await h.t.request('GET', `/api/notifications/${id}/performance`, { token: h.owner.token })).body.data;
  const runsOf = (id: string) => h.t.ctx.db.selectFrom('notification_runs').select(['id', 'dedupe_key', 'status']).where('notification_id', '=', id).orderBy('created_at').execute();
  const settled = async (id: string) => waitFor(async () => (await runsOf(id)).every((run) => !['pending', 'sending'].includes(run.status)), { timeoutMs: 20_000 });
  const click = (token: string) => h.t.request('POST', '/api/public/events', { body: { type: 'clicked', token }, headers: { origin: 'https://push-shop.example' } });
  const deliver = (token: string) => h.t.request('POST', '/api/public/events', { body: { type: 'delivered', token }, headers: { origin: 'https://push-shop.example' } });
  /** Each browser's pushes (payloads), by subscription id. */
  function received() {
    const by = new Map<string, Array<{ title: string; body: string; url: string; token: string }>>();
    for (const m of h.push.messages) by.set(m.subscriptionId, [...(by.get(m.subscriptionId) ?? []), m.payload as never]);
    return by;
  }
  async function subscribeMany(n: number) {
    const subscribers = [];
    for (let i = 0; i < n; i++) subscribers.push(await h.subscribe());
    return subscribers;
  }
  function rival() {
    const scheduler = new Scheduler(h.t.ctx, h.engine.queue, featureDueWorkSources(h.t.ctx, h.engine.queue));
    rivals.push(scheduler);
    return scheduler;
  }

  it('refuses 1 or 5 variants, a sample or a wait out of range, a test without variants, and a test on a recurring or triggered notification', async () => {
    await start();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ variants: [variant('A')] }, 'An A/B test needs at least 2 variants'],
      [{ variants: ['A', 'B', 'C', 'D', 'E'].map(variant) }, 'An A/B test has at most 4 variants'],
      [{ variants: [variant('A'), { ...variant('B'), title: '' }] }, 'Each variant needs a title'],
      [{ variants: twoVariants, ab_test: { sample_percent: 0, decide_after_minutes: 60, metric: 'click_rate' } }, 'ab_test.sample_percent must be between 1 and 50'],
      [{ variants: twoVariants, ab_test: { sample_percent: 51, decide_after_minutes: 60, metric: 'click_rate' } }, 'ab_test.sample_percent must be between 1 and 50'],
      [{ variants: twoVariants, ab_test: { sample_percent: 20, decide_after_minutes: 0, metric: 'click_rate' } }, 'ab_test.decide_after_minutes must be between 1 and 1440 (24 hours)'],
      [{ variants: twoVariants, ab_test: { sample_percent: 20, decide_after_minutes: 1441, metric: 'click_rate' } }, 'ab_test.decide_after_minutes must be between 1 and 1440 (24 hours)'],
      [{ variants: twoVariants, ab_test: { sample_percent: 20, decide_after_minutes: 60, metric: 'opens' } }, 'ab_test.metric must be "click_rate"'],
      [{ ab_test: { sample_percent: 20, decide_after_minutes: 60, metric: 'click_rate' } }, 'ab_test needs variants'],
      [
        { type: 'RECURRING', recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: '2026-06-02T09:00' }, variants: twoVariants },
        'A/B tests are for one-time notifications',
      ],
      [{ type: 'TRIGGERED', trigger: { event: 'cart', delay_minutes: 0 }, variants: twoVariants }, 'A/B tests are for one-time notifications'],
      [{ variants: twoVariants, delivery: { mode: 'subscriber_local_time', local_time: '09:00' } }, 'An A/B test is sent to the whole audience at once'],
    ];
    for (const [body, message] of cases) {
      const response = await create(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.message, JSON.stringify(body)).toContain(message);
    }
    // The winner route checks its body too.
    const created = await create({ variants: twoVariants, ab_test: { sample_percent: 20, decide_after_minutes: 60, metric: 'click_rate' } });
    const id = created.body.data.notification.id;
    expect((await h.t.request('POST', `/api/notifications/${id}/ab-test/winner`, { token: h.owner.token, body: { variant_index: -1 } })).status).toBe(400);
    const early = await h.t.request('POST', `/api/notifications/${id}/ab-test/winner`, { token: h.owner.token, body: { variant_index: 1 } });
    expect(early.status).toBe(409);
    expect(early.body.error.message).toContain('The sample has not been sent yet');
    const third = await h.t.request('POST', `/api/notifications/${id}/ab-test/winner`, { token: h.owner.token, body: { variant_index: 2 } });
    expect(third.status).toBe(400);
    expect(third.body.error.message).toContain('variant_index must be below 2');
    // Nor can a test be given a local time afterwards, or a local-time notification variants.
    const localTime = await h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body: { delivery: { mode: 'subscriber_local_time', local_time: '09:00' } } });
    expect(localTime.status).toBe(400);
    expect(localTime.body.error.message).toContain('An A/B test is sent to the whole audience at once');
    const local = (await create({ delivery: { mode: 'subscriber_local_time', local_time: '09:00' } })).body.data.notification.id;
    const withVariants = await h.t.request('PATCH', `/api/notifications/${local}`, { token: h.owner.token, body: { variants: twoVariants } });
    expect(withVariants.status).toBe(400);
  });

  it('is not held by the site’s quiet hours: a sample split by zone would not be random, so the send goes at once', async () => {
    await start();
    await subscribeMany(20);
    const quiet = await h.t.request('PATCH', `/api/sites/${h.site.id}`, { token: h.owner.token, body: { settings: { quietHours: { start: '00:00', end: '23:59' } } } });
    expect(quiet.status).toBe(200);
    // An ordinary send is held (the control), the A/B send is not.
    const plain = (await create({})).body.data.notification.id;
    await send(plain);
    await waitFor(async () => (await runsOf(plain)).some((run) => run.status === 'pending'), { timeoutMs: 10_000 });
    const created = await create({ variants: twoVariants, ab_test: null });
    const id = created.body.data.notification.id;
    await send(id);
    await h.waitForStatus(id, ['completed']);
    expect((await performance(id)).variants.map((v: { reach: number }) => v.reach)).toEqual([10, 10]);
    expect(await runsOf(id)).toHaveLength(1);
  });

  it('sends a 20 % sample split evenly, then after the wait the best click rate to the rest, once, with two schedulers racing', async () => {
    await start();
    const subscribers = await subscribeMany(50);
    const created = await create({ variants: twoVariants, ab_test: { sample_percent: 20, decide_after_minutes: 60, metric: 'click_rate' } });
    expect(created.status).toBe(201);
    const notification = created.body.data.notification;
    // Variant A is the notification's own content.
    expect(notification).toMatchObject({ title: 'Sale A', message: 'Offer A', variants: twoVariants, ab_test: { sample_percent: 20, decide_after_minutes: 60, metric: 'click_rate', decide: 'auto' } });
    const id = notification.id;
    expect((await performance(id)).ab_test.status).toBe('waiting');

    expect((await send(id)).status).toBe(200);
    await h.waitForStatus(id, ['completed']);
    await settled(id);

    // round(50 × 20 %) = 10, five per variant, each push carrying its variant.
    let pushes = received();
    expect(pushes.size).toBe(10);
    const byTitle = new Map<string, string[]>();
    for (const [, messages] of pushes) {
      expect(messages).toHaveLength(1);
      const [m] = messages;
      expect(['Sale A', 'Sale B']).toContain(m!.title);
      expect(m!.body).toBe(m!.title === 'Sale A' ? 'Offer A' : 'Offer B');
      expect(m!.url).toBe(m!.title === 'Sale A' ? 'https://push-shop.example/a' : 'https://push-shop.example/b');
      byTitle.set(m!.title, [...(byTitle.get(m!.title) ?? []), m!.token]);
    }
    expect(byTitle.get('Sale A')).toHaveLength(5);
    expect(byTitle.get('Sale B')).toHaveLength(5);

    // B is clicked 3 times of 5, A once of 5 (all five of each delivered).
    for (const token of [...byTitle.get('Sale A')!, ...byTitle.get('Sale B')!]) await deliver(token);
    for (const token of byTitle.get('Sale B')!.slice(0, 3)) await click(token);
    await click(byTitle.get('Sale A')![0]!);

    let report = await performance(id);
    expect(report.variants).toEqual([
      { index: 0, title: 'Sale A', reach: 5, delivered: 5, clicked: 1, click_rate: 20 },
      { index: 1, title: 'Sale B', reach: 5, delivered: 5, clicked: 3, click_rate: 60 },
    ]);
    expect(report.ab_test).toMatchObject({ status: 'testing', winner_index: null, decided_at: null, leader_index: 1, significant: false, decides_at: expect.any(String) });

    // Before the wait: nothing more goes out, whoever ticks.
    clock.advance(59 * MINUTE);
    await Promise.all([h.engine.scheduler!.tick(), rival().tick()]);
    expect((await runsOf(id)).map((run) => run.dedupe_key)).toEqual([`once:${id}`]);

    // After it: two schedulers (one of them new, as after a restart: the state is in the database) decide at once.
    clock.advance(MINUTE);
    const other = rival();
    await Promise.all([h.engine.scheduler!.tick(), other.tick(), other.tick(), h.engine.scheduler!.tick()]);
    await settled(id);
    const runs = await runsOf(id);
    expect(runs.map((run) => run.dedupe_key)).toEqual([`once:${id}`, `ab-rest:${id}`]);
    expect(runs.every((run) => run.status === 'completed')).toBe(true);
    expect((await h.waitForStatus(id, ['completed'])).counts).toMatchObject({ targeted: 50, sent: 50 });

    // Everyone got exactly one push; the 40 of the rest got the winner, B.
    pushes = received();
    expect(pushes.size).toBe(50);
    for (const { subscription } of subscribers) expect(pushes.get(subscription.id)).toHaveLength(1);
    const titles = [...pushes.values()].map((messages) => messages[0]!.title);
    expect(titles.filter((t) => t === 'Sale B')).toHaveLength(45);
    expect(titles.filter((t) => t === 'Sale A')).toHaveLength(5);

    report = await performance(id);
    expect(report.ab_test).toMatchObject({ status: 'decided', winner_index: 1, decided_by: 'auto', decided_at: new Date(clock.now()).toISOString(), significant: false });
    expect(report.variants[1]).toMatchObject({ reach: 45, delivered: 5, clicked: 3 });
    const stored = await h.t.ctx.db.selectFrom('ab_tests').selectAll().where('notification_id', '=', id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ status: 'decided', winner_index: 1, decided_by: 'auto', significant: 0 });

    // A later tick, however late, decides nothing again.
    clock.advance(24 * 60 * MINUTE);
    await Promise.all([h.engine.scheduler!.tick(), rival().tick()]);
    expect(await runsOf(id)).toHaveLength(2);
    expect(h.push.messages).toHaveLength(50);
  });

  it('decides after a restart: the test waits in the database, and a new process sends the winner to the rest once', async () => {
    await start();
    await subscribeMany(12);
    const created = await create({ variants: twoVariants, ab_test: { sample_percent: 25, decide_after_minutes: 30, metric: 'click_rate' } });
    const id = created.body.data.notification.id;
    await send(id);
    await h.waitForStatus(id, ['completed']);
    await settled(id);
    expect(h.push.messages).toHaveLength(3);
    // Nobody clicked: a tie, so variant A wins (docs/product.md, "A/B tests").
    // The process stops before the decision is due, and a new one starts later.
    await h.engine.close();
    clock.advance(45 * MINUTE);
    const restarted = startEngine(h.t.ctx, { scheduler: true, worker: true, pushClient: createPushClient(h.t.config, h.t.ctx.metrics) });
    h.engine = restarted;
    await restarted.scheduler!.tick();
    await settled(id);
    expect((await runsOf(id)).map((run) => [run.dedupe_key, run.status])).toEqual([
      [`once:${id}`, 'completed'],
      [`ab-rest:${id}`, 'completed'],
    ]);
    const titles = [...received().values()].map((messages) => messages[0]!.title);
    expect(titles).toHaveLength(12);
    expect([...received().values()].every((messages) => messages.length === 1)).toBe(true);
    expect(titles.filter((t) => t === 'Sale A')).toHaveLength(2 + 9);
    expect((await performance(id)).ab_test).toMatchObject({ status: 'decided', winner_index: 0, decided_by: 'auto', significant: false });
  });

  it('draws the same sample when a fan-out is resumed from its stored progress', async () => {
    await start();
    const subscribers = await subscribeMany(30);
    const ids = subscribers.map((s) => s.subscriberId).sort();
    // A page of the audience: each subscriber with its number (migration 0036).
    const seqOf = new Map((await h.t.ctx.db.selectFrom('subscribers').select(['id', 'seq']).where('id', 'in', ids).execute()).map((row) => [row.id, Number(row.seq)]));
    const members = ids.map((subscriberId) => ({ id: subscriberId, seq: seqOf.get(subscriberId)! }));
    const created = await create({ variants: [variant('A'), variant('B'), variant('C')], ab_test: { sample_percent: 40, decide_after_minutes: 30, metric: 'click_rate' } });
    const id = created.body.data.notification.id;
    const run = { id: 'run-x', notification_id: id, site_id: h.site.id, dedupe_key: `once:${id}`, segment_id: null, subscriber_id: null, zones: null, total_count: 0 } as unknown as RunRow;
    const db = h.t.ctx.db;
    // A fan-out does the first page, stores its progress, then picks the second page.
    const first = (await abFanOutFor(h.t.ctx, run))!;
    const page1 = await first.pick(members.slice(0, 10));
    await db.transaction().execute((trx) => page1.commit(trx));
    const page2 = await first.pick(members.slice(10));
    // It dies before the second page is stored; another fan-out resumes from the database.
    const resumed = (await abFanOutFor(h.t.ctx, run))!;
    const page2Again = await resumed.pick(members.slice(10));
    expect(page2Again.subscribers).toEqual(page2.subscribers);
    expect([...page2Again.variantOf]).toEqual([...page2.variantOf]);
    // round(30 × 40 %) = 12, four per variant.
    const all = [...page1.subscribers, ...page2.subscribers];
    expect(all).toHaveLength(12);
    const perVariant = [0, 1, 2].map((v) => [...page1.variantOf.values(), ...page2.variantOf.values()].filter((x) => x === v).length);
    expect(perVariant).toEqual([4, 4, 4]);
    expect(await db.selectFrom('ab_tests').select(['sample_audience', 'sample_seen', 'sample_picked']).where('notification_id', '=', id).executeTakeFirstOrThrow()).toEqual({
      sample_audience: 30,
      sample_seen: 10,
      sample_picked: page1.subscribers.length,
    });
  });

  it('sends every variant to the whole audience, split evenly, when there is no sample', async () => {
    await start();
    await subscribeMany(30);
    const created = await create({ variants: [variant('A'), variant('B'), variant('C')], ab_test: null });
    const id = created.body.data.notification.id;
    expect(created.body.data.notification.ab_test).toBeNull();
    await send(id);
    await h.waitForStatus(id, ['completed']);
    const pushes = received();
    expect(pushes.size).toBe(30);
    const titles = [...pushes.values()].map((messages) => messages[0]!.title);
    for (const title of ['Sale A', 'Sale B', 'Sale C']) expect(titles.filter((t) => t === title)).toHaveLength(10);
    const report = await performance(id);
    expect(report.variants.map((v: { reach: number }) => v.reach)).toEqual([10, 10, 10]);
    expect(report.ab_test).toMatchObject({ status: 'all_variants', sample_percent: null, winner_index: null });
    // Nothing is left to decide.
    clock.advance(25 * 60 * MINUTE);
    await h.engine.scheduler!.tick();
    expect(await runsOf(id)).toHaveLength(1);
    // A duplicate keeps the variants (not the figures).
    const copy = await h.t.request('POST', `/api/notifications/${id}/duplicate`, { token: h.owner.token });
    expect(copy.status).toBe(201);
    expect(copy.body.data.notification).toMatchObject({ status: 'draft', variants: [variant('A'), variant('B'), variant('C')], ab_test: null });
    expect((await performance(copy.body.data.notification.id)).variants.map((v: { reach: number }) => v.reach)).toEqual([0, 0, 0]);
  });

  it('lets the owner pick the winner by hand, once; a manual test is never decided by the clock', async () => {
    await start();
    await subscribeMany(20);
    const created = await create({ variants: twoVariants, ab_test: { sample_percent: 50, decide_after_minutes: 1, metric: 'click_rate', decide: 'manual' } });
    const id = created.body.data.notification.id;
    await send(id);
    await h.waitForStatus(id, ['completed']);
    await settled(id);
    expect(h.push.messages).toHaveLength(10);
    clock.advance(2 * 60 * MINUTE);
    await h.engine.scheduler!.tick();
    expect(await runsOf(id)).toHaveLength(1);
    expect((await performance(id)).ab_test).toMatchObject({ status: 'testing', decide: 'manual', decides_at: null });
    // Every B clicked, no A: 0 of 5 against 5 of 5 is significant (z = 3.16).
    const sample = h.push.messages.map((m) => m.payload as { title: string; token: string });
    for (const p of sample) await deliver(p.token);
    for (const p of sample.filter((p) => p.title === 'Sale B')) await click(p.token);
    expect((await performance(id)).ab_test).toMatchObject({ leader_index: 1, significant: true });

    const [picked, again] = await Promise.all([
      h.t.request('POST', `/api/notifications/${id}/ab-test/winner`, { token: h.owner.token, body: { variant_index: 0 } }),
      h.t.request('POST', `/api/notifications/${id}/ab-test/winner`, { token: h.owner.token, body: { variant_index: 1 } }),
    ]);
    const statuses = [picked.status, again.status].sort();
    expect(statuses).toEqual([200, 409]);
    const winner = picked.status === 200 ? 0 : 1;
    const answer = picked.status === 200 ? picked : again;
    expect(answer.body.data.ab_test).toMatchObject({ status: 'decided', winner_index: winner, decided_by: 'manual' });
    await h.engine.scheduler!.tick();
    await settled(id);
    const titles = [...received().values()].map((messages) => messages[0]!.title);
    expect(titles).toHaveLength(20);
    expect(titles.filter((t) => t === `Sale ${winner === 0 ? 'A' : 'B'}`)).toHaveLength(15);
    // Recorded: the winner's lead was significant only if the owner picked B, the variant ahead.
    expect((await performance(id)).ab_test).toMatchObject({ significant: winner === 1, leader_index: winner });
    const late = await h.t.request('POST', `/api/notifications/${id}/ab-test/winner`, { token: h.owner.token, body: { variant_index: 1 - winner } });
    expect(late.status).toBe(409);
    expect(late.body.error.message).toContain('already decided');
    const audit = await h.t.request('GET', `/api/sites/${h.site.id}/audit-log`, { token: h.owner.token });
    expect(JSON.stringify(audit.body.data)).toContain('ab_test_winner');
  });

  it('edits the variants of a draft, keeps variant A in step with the content, and removes them with variants: null', async () => {
    await start();
    const created = await create({ variants: twoVariants, ab_test: { sample_percent: 20, decide_after_minutes: 30, metric: 'click_rate' } });
    const id = created.body.data.notification.id;
    const patch = (body: unknown) => h.t.request('PATCH', `/api/notifications/${id}`, { token: h.owner.token, body });
    const three = [variant('X'), variant('Y'), variant('Z')];
    let response = await patch({ variants: three });
    expect(response.status).toBe(200);
    expect(response.body.data.notification).toMatchObject({ title: 'Sale X', variants: three, ab_test: { sample_percent: 20, decide_after_minutes: 30 } });
    response = await patch({ title: 'Sale X2' });
    expect(response.body.data.notification.variants[0].title).toBe('Sale X2');
    response = await patch({ ab_test: null });
    expect(response.body.data.notification).toMatchObject({ ab_test: null, variants: [{ title: 'Sale X2' }, variant('Y'), variant('Z')] });
    response = await patch({ type: 'RECURRING', variants: three });
    expect(response.status).toBe(400);
    response = await patch({ variants: null });
    expect(response.body.data.notification).toMatchObject({ variants: null, ab_test: null, title: 'Sale X2' });
  });
});
