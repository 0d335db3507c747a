import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDueRuns } from '../src/delivery/runs';
import { featureDueWorkSources } from '../src/engine';
import { Scheduler } from '../src/jobs/scheduler';
import { ManualClock } from '../src/platform/clock';
import { createDeliveryHarness, type DeliveryHarness } from './support/delivery-harness';
import { waitFor } from './support/test-app';

// Issue 4 §3: a welcome campaign sends its steps to each NEW subscriber, step 1
// at once and each later step its delay after the one before, exactly once;
// deactivating, deleting and unsubscribing stop what is still to come, and
// edits apply to subscribers who subscribe afterwards. Time is a ManualClock;
// the scheduler is ticked by hand after each move of the clock.

const MINUTE = 60_000;

/** The part of the decrypted push payload these tests read. */
interface Payload {
  title: string;
  url: string;
  image: string | null;
  actions: unknown;
}

const step = (sequence_order: number, delay_minutes: number, title: string, overrides: Record<string, unknown> = {}) => ({
  sequence_order,
  delay_minutes,
  notification: { title, message: `${title} message`, destination_url: `https://push-shop.example/${sequence_order}`, icon_url: null, image_url: null, ...overrides },
});

describe('welcome campaign delivery', () => {
  let h: DeliveryHarness;
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 8));

  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
  });
  afterAll(async () => h.close());

  async function createCampaign(body: Record<string, unknown>) {
    const response = await h.t.request('POST', `/api/sites/${h.site.id}/welcome-campaigns`, { token: h.owner.token, body: { is_active: true, ...body } });
    expect(response.status).toBe(201);
    return response.body.data.campaign;
  }

  const patch = (id: string, body: unknown) => h.t.request('PATCH', `/api/welcome-campaigns/${id}`, { token: h.owner.token, body });

  /** Titles the push service received for one browser, in arrival order. */
  const titlesOf = (subscriptionId: string) => h.push.messages.filter((m) => m.subscriptionId === subscriptionId).map((m) => (m.payload as Payload).title);

  const runsSending = async () => (await h.t.ctx.db.selectFrom('notification_runs').select('id').where('status', '=', 'sending').executeTakeFirst()) !== undefined;
  /** A due step that waited for the step before it to be sent (notification_runs.after_run_id). */
  const stepWaiting = async () =>
    (await h.t.ctx.db.selectFrom('notification_runs').select('id').where('status', '=', 'pending').where('due_at', '<=', clock.now()).executeTakeFirst()) !== undefined;

  /** A scheduler pass, then waits until nothing is being sent; repeats while a due step waited for the one before. */
  async function tickAndSettle(scheduler: Scheduler = h.engine.scheduler!) {
    for (let pass = 0; pass < 25; pass++) {
      await scheduler.tick();
      await waitFor(async () => !(await runsSending()), { timeoutMs: 15_000 });
      if (!(await stepWaiting())) return;
    }
    throw new Error('drip steps kept waiting');
  }

  async function advance(minutes: number) {
    clock.advance(minutes * MINUTE);
    await tickAndSettle();
  }

  async function dripRunsOf(subscriberId: string) {
    return h.t.ctx.db.selectFrom('notification_runs').select(['status', 'due_at', 'dedupe_key', 'last_error']).where('subscriber_id', '=', subscriberId).orderBy('due_at').execute();
  }

  it('sends step 1 at once, step 2 only after its delay, step 3 its own delay after step 2, once each, with the UTM parameters', async () => {
    // Someone who subscribed before the campaign existed is not enrolled.
    const earlier = await h.subscribe();
    const campaign = await createCampaign({
      name: 'Onboarding',
      utm_params: { utm_source: 'herald', utm_medium: 'push', utm_campaign: 'welcome' },
      steps: [
        step(1, 0, 'Welcome!', { destination_url: 'https://push-shop.example/welcome?ref=push', actions: [{ title: 'Browse', url: 'https://push-shop.example/new' }] }),
        step(2, 60, 'Our best sellers', { image_url: 'https://push-shop.example/best.png' }),
        step(3, 1440, 'A gift for you'),
      ],
    });

    const subscribedAt = clock.now();
    const newcomer = await h.subscribe();
    // Step 1 without moving the clock: the enrolment wakes the scheduler.
    await waitFor(() => titlesOf(newcomer.subscription.id).length === 1, { timeoutMs: 10_000 });
    await tickAndSettle();
    expect(titlesOf(newcomer.subscription.id)).toEqual(['Welcome!']);
    const first = h.push.messages.find((m) => m.subscriptionId === newcomer.subscription.id)!.payload as Payload;
    // The service worker gets the destination with the campaign's UTM parameters added (the step's own query kept).
    expect(first.url).toBe('https://push-shop.example/welcome?ref=push&utm_source=herald&utm_medium=push&utm_campaign=welcome');
    expect(first.actions).toEqual([{ action: 'action-1', title: 'Browse', url: 'https://push-shop.example/new?utm_source=herald&utm_medium=push&utm_campaign=welcome' }]);

    // The runs are in the database: each step due its own delay after the previous one, aimed at this subscriber only.
    const runs = await dripRunsOf(newcomer.subscriberId);
    expect(runs.map((r) => r.due_at - subscribedAt)).toEqual([0, 60 * MINUTE, (60 + 1440) * MINUTE]);
    expect(runs.every((r) => r.dedupe_key.startsWith('drip:'))).toBe(true);

    await advance(59);
    expect(titlesOf(newcomer.subscription.id)).toEqual(['Welcome!']);
    await advance(1);
    expect(titlesOf(newcomer.subscription.id)).toEqual(['Welcome!', 'Our best sellers']);
    expect(h.push.messages.filter((m) => m.subscriptionId === newcomer.subscription.id)[1]!.payload).toMatchObject({
      url: 'https://push-shop.example/2?utm_source=herald&utm_medium=push&utm_campaign=welcome',
      image: 'https://push-shop.example/best.png',
    });

    // Step 3 counts from step 2, not from the subscription.
    await advance(1439);
    expect(titlesOf(newcomer.subscription.id)).toEqual(['Welcome!', 'Our best sellers']);
    await advance(1);
    expect(titlesOf(newcomer.subscription.id)).toEqual(['Welcome!', 'Our best sellers', 'A gift for you']);

    // Nothing more, ever; and nothing for the earlier subscriber.
    await advance(60 * 24 * 7);
    expect(titlesOf(newcomer.subscription.id)).toHaveLength(3);
    expect(titlesOf(earlier.subscription.id)).toEqual([]);
    expect((await dripRunsOf(newcomer.subscriberId)).map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);

    // Stats across the steps; the step notifications stay out of the notifications list.
    const fetched = await h.t.request('GET', `/api/welcome-campaigns/${campaign.id}`, { token: h.owner.token });
    expect(fetched.body.data.campaign.stats).toMatchObject({ enrolled: 1, sent: 3, failed: 0 });
    expect(fetched.body.data.campaign.steps.map((s: { stats: { sent: number } }) => s.stats.sent)).toEqual([1, 1, 1]);
    const list = await h.t.request('GET', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token });
    expect(list.body.data.notifications).toEqual([]);

    // A browser coming back with a known endpoint is not a new subscriber: no second enrolment.
    const again = await h.t.request('POST', `/api/public/sites/${h.site.id}/subscribers`, {
      body: { subscription: { endpoint: newcomer.subscription.endpoint, keys: newcomer.subscription.keys } },
      remoteAddress: '203.0.113.9',
    });
    expect(again.status).toBe(200);
    await advance(1);
    expect(titlesOf(newcomer.subscription.id)).toHaveLength(3);

    await patch(campaign.id, { is_active: false });
  });

  it('deactivating stops the future steps of everyone enrolled; reactivating does not bring them back', async () => {
    const campaign = await createCampaign({ name: 'Stoppable', steps: [step(1, 0, 'Hi'), step(2, 10, 'Later'), step(3, 10, 'Even later')] });
    const a = await h.subscribe();
    const b = await h.subscribe();
    await tickAndSettle();
    expect(titlesOf(a.subscription.id)).toEqual(['Hi']);
    expect(titlesOf(b.subscription.id)).toEqual(['Hi']);

    await advance(10);
    expect(titlesOf(a.subscription.id)).toEqual(['Hi', 'Later']);
    expect((await patch(campaign.id, { is_active: false })).status).toBe(200);
    expect((await dripRunsOf(a.subscriberId)).map((r) => r.status)).toEqual(['completed', 'completed', 'cancelled']);

    await advance(60);
    expect((await patch(campaign.id, { is_active: true })).status).toBe(200);
    await advance(60);
    expect(titlesOf(a.subscription.id)).toEqual(['Hi', 'Later']);
    expect(titlesOf(b.subscription.id)).toEqual(['Hi', 'Later']);
    await patch(campaign.id, { is_active: false });
  });

  it('activating another campaign stops the previous one; new subscribers get only the active one', async () => {
    const old = await createCampaign({ name: 'Old', steps: [step(1, 0, 'Old hello'), step(2, 30, 'Old follow-up')] });
    const enrolledInOld = await h.subscribe();
    await tickAndSettle();
    const fresh = await createCampaign({ name: 'Fresh', steps: [step(1, 0, 'Fresh hello')] });
    expect((await h.t.request('GET', `/api/welcome-campaigns/${old.id}`, { token: h.owner.token })).body.data.campaign.is_active).toBe(false);
    const enrolledInFresh = await h.subscribe();
    await advance(30);
    expect(titlesOf(enrolledInOld.subscription.id)).toEqual(['Old hello']);
    expect(titlesOf(enrolledInFresh.subscription.id)).toEqual(['Fresh hello']);
    await patch(fresh.id, { is_active: false });
  });

  it('an edit applies to subscribers who subscribe afterwards; those enrolled keep their steps', async () => {
    const campaign = await createCampaign({ name: 'Versioned', steps: [step(1, 0, 'v1 welcome'), step(2, 60, 'v1 follow-up')] });
    const before = await h.subscribe();
    await tickAndSettle();

    await advance(5);
    const edited = await patch(campaign.id, { steps: [step(1, 0, 'v2 welcome'), step(2, 15, 'v2 tips'), step(3, 15, 'v2 offer')] });
    expect(edited.status).toBe(200);
    const after = await h.subscribe();
    await tickAndSettle();
    expect(titlesOf(after.subscription.id)).toEqual(['v2 welcome']);

    await advance(30);
    expect(titlesOf(after.subscription.id)).toEqual(['v2 welcome', 'v2 tips', 'v2 offer']);
    expect(titlesOf(before.subscription.id)).toEqual(['v1 welcome']);
    await advance(25);
    expect(titlesOf(before.subscription.id)).toEqual(['v1 welcome', 'v1 follow-up']);
    await advance(60 * 24);
    expect(titlesOf(before.subscription.id)).toHaveLength(2);
    expect(titlesOf(after.subscription.id)).toHaveLength(3);

    const stats = (await h.t.request('GET', `/api/welcome-campaigns/${campaign.id}`, { token: h.owner.token })).body.data.campaign.stats;
    expect(stats).toMatchObject({ enrolled: 2, sent: 5 });
    await patch(campaign.id, { is_active: false });
  });

  it('an unsubscribed subscriber gets nothing more: their due steps are cancelled', async () => {
    await createCampaign({ name: 'Leaving', steps: [step(1, 0, 'Hello'), step(2, 20, 'Are you there?'), step(3, 20, 'Last call')] });
    const leaving = await h.subscribe();
    const staying = await h.subscribe();
    await tickAndSettle();
    expect(titlesOf(leaving.subscription.id)).toEqual(['Hello']);

    const removed = await h.t.request('DELETE', `/api/subscribers/${leaving.subscriberId}`, { token: h.owner.token });
    expect(removed.status).toBe(200);
    await advance(40);
    expect(titlesOf(leaving.subscription.id)).toEqual(['Hello']);
    expect(titlesOf(staying.subscription.id)).toEqual(['Hello', 'Are you there?', 'Last call']);
    const runs = await dripRunsOf(leaving.subscriberId);
    expect(runs.map((r) => [r.status, r.last_error])).toEqual([
      ['completed', null],
      ['cancelled', 'Subscriber unsubscribed'],
      ['cancelled', 'Subscriber unsubscribed'],
    ]);
    const active = await h.t.ctx.db.selectFrom('welcome_campaigns').select('id').where('site_id', '=', h.site.id).where('is_active', '=', 1).executeTakeFirstOrThrow();
    await patch(active.id, { is_active: false });
  });

  it('time that passes while a tick runs its sources does not let the tick claim a step the guard did not see due', async () => {
    // The drip guard and the claim used to read the clock apart: a step that
    // fell due between them was claimed for an unsubscribed subscriber and
    // ended "completed" with nothing sent.
    const campaign = await createCampaign({ name: 'Slow tick', steps: [step(1, 0, 'Slow hello'), step(2, 20, 'Slow follow-up')] });
    const leaving = await h.subscribe();
    await tickAndSettle();
    expect((await h.t.request('DELETE', `/api/subscribers/${leaving.subscriberId}`, { token: h.owner.token })).status).toBe(200);
    const timePasses = { name: 'time passes', runDue: async () => clock.advance(30 * MINUTE) };
    const slow = new Scheduler(h.t.ctx, h.engine.queue, [...featureDueWorkSources(h.t.ctx, h.engine.queue), timePasses]);
    await slow.tick();
    await tickAndSettle();
    expect((await dripRunsOf(leaving.subscriberId)).map((r) => [r.status, r.last_error])).toEqual([
      ['completed', null],
      ['cancelled', 'Subscriber unsubscribed'],
    ]);
    await slow.stop();
    await patch(campaign.id, { is_active: false });
  });

  it('deleting a campaign cancels what its subscribers had still to receive', async () => {
    const campaign = await createCampaign({ name: 'Deleted', steps: [step(1, 0, 'Before delete'), step(2, 10, 'Never sent')] });
    const subscriber = await h.subscribe();
    await tickAndSettle();
    expect(titlesOf(subscriber.subscription.id)).toEqual(['Before delete']);

    expect((await h.t.request('DELETE', `/api/welcome-campaigns/${campaign.id}`, { token: h.owner.token })).status).toBe(200);
    expect(await dripRunsOf(subscriber.subscriberId)).toEqual([]);
    await advance(60);
    expect(titlesOf(subscriber.subscription.id)).toEqual(['Before delete']);
    // New subscribers are not enrolled in anything any more.
    const later = await h.subscribe();
    await advance(60);
    expect(titlesOf(later.subscription.id)).toEqual([]);
  });

  it('steps due together (a delay of 0) arrive in order, each after the one before', async () => {
    const campaign = await createCampaign({ name: 'Back to back', steps: [step(1, 0, 'First'), step(2, 0, 'Second'), step(3, 0, 'Third'), step(4, 0, 'Fourth')] });
    const subscribers = [];
    for (let i = 0; i < 3; i++) subscribers.push(await h.subscribe());
    await tickAndSettle();
    for (const { subscription } of subscribers) expect(titlesOf(subscription.id)).toEqual(['First', 'Second', 'Third', 'Fourth']);
    await patch(campaign.id, { is_active: false });
  });

  it('a claim that runs right after an enrolment takes at most step 1: the later steps wait in the same statement', async () => {
    // The claim used to rely on a guard that ran before it; a subscriber
    // enrolled between the two had all their delay-0 steps claimed together.
    // Here a rival claims right after the enrolment, with no guard at all.
    const campaign = await createCampaign({ name: 'Claimed at once', steps: [step(1, 0, 'One'), step(2, 0, 'Two'), step(3, 0, 'Three')] });
    const subscriber = await h.subscribe();
    const rivalClaimed = await claimDueRuns(h.t.ctx.db, clock.now(), 'rival', 60_000);
    const runs = await h.t.ctx.db
      .selectFrom('notification_runs')
      .select(['id', 'status', 'dedupe_key', 'after_run_id'])
      .where('subscriber_id', '=', subscriber.subscriberId)
      .orderBy('dedupe_key')
      .execute();
    expect(runs).toHaveLength(3);
    expect(runs.map((run) => run.after_run_id)).toEqual([null, runs[0]!.id, runs[1]!.id]);
    // Step 1 may be claimed (by the rival or the engine's own tick); steps 2 and 3 are not.
    expect(runs.slice(1).map((run) => run.status)).toEqual(['pending', 'pending']);
    expect(rivalClaimed.map((run) => run.id).filter((id) => id !== runs[0]!.id)).toEqual([]);
    // Hand the rival's claim back, as the recovery sweep would once its lease ran out.
    await h.t.ctx.db.updateTable('notification_runs').set({ status: 'pending', lease_owner: null, lease_until: null, started_at: null }).where('lease_owner', '=', 'rival').execute();
    await tickAndSettle();
    expect(titlesOf(subscriber.subscription.id)).toEqual(['One', 'Two', 'Three']);
    await patch(campaign.id, { is_active: false });
  });

  it('two schedulers ticking at once send each step once', async () => {
    const campaign = await createCampaign({ name: 'Raced', steps: [step(1, 0, 'Raced one'), step(2, 5, 'Raced two'), step(3, 5, 'Raced three')] });
    const rival = new Scheduler(h.t.ctx, h.engine.queue, featureDueWorkSources(h.t.ctx, h.engine.queue));
    const subscribers = [];
    for (let i = 0; i < 5; i++) subscribers.push(await h.subscribe());
    for (let round = 0; round < 3; round++) {
      await Promise.all([h.engine.scheduler!.tick(), rival.tick(), h.engine.scheduler!.tick(), rival.tick()]);
      await tickAndSettle(rival);
      clock.advance(5 * MINUTE);
    }
    await advance(60);
    for (const { subscription } of subscribers) expect(titlesOf(subscription.id)).toEqual(['Raced one', 'Raced two', 'Raced three']);
    const deliveries = await h.t.ctx.db
      .selectFrom('deliveries')
      .innerJoin('notification_runs', 'notification_runs.seq', 'deliveries.run_seq')
      .innerJoin('welcome_campaign_steps', 'welcome_campaign_steps.notification_id', 'notification_runs.notification_id')
      .innerJoin('subscribers', 'subscribers.seq', 'deliveries.subscriber_seq')
      .select(['subscribers.id as subscriber_id', 'deliveries.status'])
      .where('welcome_campaign_steps.campaign_id', '=', campaign.id)
      .execute();
    expect(deliveries).toHaveLength(15);
    expect(deliveries.every((d) => d.status === 'sent')).toBe(true);
    await rival.stop();
    await patch(campaign.id, { is_active: false });
  });
});
