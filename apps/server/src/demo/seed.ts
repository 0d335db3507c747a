// `herald demo`: fills an empty database with a demo site that has lived for
// three months, so a person trying Herald sees a dashboard with a history.
//
// Everything a user could create is created through the features' services,
// on a clock set back to when it happened: the account, the site and its
// value goals, the API key, segments, notifications of every type and status,
// the welcome campaign and its enrolments, the RSS feed, and the site events
// that fire triggered notifications. Recurring occurrences are fired by the
// scheduler's own due-work source. What only the delivery engine and the
// browsers' beacons write — finished runs, deliveries, counters, the hourly
// rollup — is played back by history.ts; the audience is written in bulk
// (3,000 subscribers one subscribe call at a time would take minutes).
import {
  apiEventBody,
  campaignBody,
  createRssFeedBody,
  createSegmentBody,
  createSiteBody,
  notificationBody,
  notificationPatchBody,
  publicTrackBody,
  updateSiteBody,
  type NotificationBody,
} from '@herald/contracts';
import type { AppContext } from '../context';
import { addDays, todayOf, weekdayIndex } from '../features/analytics/local-days';
import { createApiKeysService } from '../features/api-keys/service';
import { createAuthService } from '../features/auth/service';
import { recurringScheduleSource } from '../features/notifications/recurring-runs';
import { createNotificationsService } from '../features/notifications/service';
import { createRssFeedsService } from '../features/rss-feeds/service';
import { createSegmentsService } from '../features/segments/service';
import { createSiteEventsService } from '../features/site-events/service';
import { createSitesService } from '../features/sites/service';
import { runSubscriberCreatedHooks } from '../features/subscribers/hooks';
import { sitesConcerned } from '../features/subscribers/repository';
import { createWelcomeCampaignsService } from '../features/welcome-campaigns/service';
import type { ManualClock } from '../platform/clock';
import { parseDateTimeInZone } from '@herald/contracts';
import { generateAudience, type DemoSubscriber } from './audience';
import {
  API_KEY_NAME,
  BUSY_DAYS,
  CANCELLED,
  DEMO_EMAIL,
  DEMO_NAME,
  DEMO_SITE,
  DRAFTS,
  ONE_TIME_SENDS,
  RECURRING,
  RSS_FEED,
  SCHEDULED,
  SEGMENTS,
  TRIGGERED,
  VALUE_GOALS,
  WELCOME_CAMPAIGN,
  shopUrl,
  type SegmentKey,
} from './content';
import { playHistory, type SendModel } from './history';
import { SeededRandom } from './random';
import * as repo from './repository';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** The demo is the same, run after run (apart from ids, keys and the password). */
const DEMO_SEED = 20_260_101;
const DEMO_SUBSCRIBERS = 3000;
const AUDIENCE_DAYS = 90;

/** The database already holds an account or a site: the demo never writes into an installation. */
export class DemoTargetNotEmptyError extends Error {
  constructor(
    readonly users: number,
    readonly sites: number,
    readonly onlyDemo: boolean,
  ) {
    super(`it already holds ${users} account${users === 1 ? '' : 's'} and ${sites} site${sites === 1 ? '' : 's'}`);
    this.name = 'DemoTargetNotEmptyError';
  }
}

/** Refuses (DemoTargetNotEmptyError) unless the database holds no account and no site. */
async function checkDemoTarget(ctx: Pick<AppContext, 'db'>): Promise<void> {
  const { users, sites } = await repo.countAccountsAndSites(ctx.db);
  if (users === 0 && sites === 0) return;
  const emails = await repo.accountEmails(ctx.db, 2);
  throw new DemoTargetNotEmptyError(users, sites, emails.length === 1 && emails[0] === DEMO_EMAIL);
}

export interface DemoSeeded {
  totals: Awaited<ReturnType<typeof repo.siteTotals>>;
  elapsedMs: number;
}

/**
 * Seeds the demo into `ctx`'s database, whose clock must be `clock` (it is
 * moved back and forth through the demo's past). Refuses a database that is
 * not empty. `now` is the instant the history leads up to.
 */
export async function seedDemo(ctx: AppContext, clock: ManualClock, options: { password: string; now?: number }): Promise<DemoSeeded> {
  const started = performance.now();
  await checkDemoTarget(ctx);
  const now = options.now ?? Date.now();
  const random = new SeededRandom(DEMO_SEED);
  const timeZone = DEMO_SITE.timezone;
  const today = todayOf(now, timeZone);
  /** The instant of a wall time ("HH:MM") in the site's timezone, `daysAgo` days before today. */
  const localAt = (daysAgo: number, time: string) => parseDateTimeInZone(`${addDays(today, -daysAgo)}T${time}`, timeZone)!;
  const minutesBefore = (at: number, min: number, max: number) => at - random.int(min, max) * MINUTE_MS;

  const auth = createAuthService(ctx);
  const sites = createSitesService(ctx);
  const apiKeys = createApiKeysService(ctx);
  const segments = createSegmentsService(ctx);
  const notifications = createNotificationsService(ctx);
  const campaigns = createWelcomeCampaignsService(ctx);
  const feeds = createRssFeedsService(ctx);
  const siteEvents = createSiteEventsService(ctx);

  // The shop signed up three months ago and set up its site, value goals, API key and segments.
  clock.set(now - (AUDIENCE_DAYS + 2) * DAY_MS);
  const user = await auth.createUser({ name: DEMO_NAME, email: DEMO_EMAIL, password: options.password, verified: true });
  clock.advance(4 * MINUTE_MS);
  const site = await sites.create(user.id, createSiteBody.parse({ name: DEMO_SITE.name, url: DEMO_SITE.url, settings: { timezone: timeZone } }));
  clock.advance(11 * MINUTE_MS);
  await sites.update(user.id, site.id, updateSiteBody.parse({ settings: VALUE_GOALS }));
  clock.advance(HOUR_MS);
  const { key: apiKey } = await apiKeys.create(user.id, site.id, API_KEY_NAME);
  clock.advance(DAY_MS);
  const segmentIds = {} as Record<SegmentKey, string>;
  for (const [key, body] of Object.entries(SEGMENTS) as Array<[SegmentKey, (typeof SEGMENTS)[SegmentKey]]>) {
    clock.advance(random.int(2, 9) * MINUTE_MS);
    segmentIds[key] = (await segments.create(user.id, site.id, createSegmentBody.parse(body))).id;
  }

  // The audience, subscribed over the last 90 days.
  const audience = generateAudience(random.fork('audience'), {
    siteId: site.id,
    count: DEMO_SUBSCRIBERS,
    now,
    days: AUDIENCE_DAYS,
    busyDays: BUSY_DAYS,
    unsubscribedShare: 0.09,
  });
  await ctx.db.transaction().execute(async (trx) => {
    await repo.insertSubscribers(
      trx,
      audience.map((s) => s.row),
    );
    await repo.insertSubscriberTags(
      trx,
      audience.flatMap((s) => s.tags.map((tag) => ({ subscriber_id: s.row.id, site_id: site.id, tag }))),
    );
  });

  const models = new Map<string, SendModel>();
  const draft = (title: string, message: string, path: string, segment?: SegmentKey): NotificationBody => ({
    type: 'ONE_TIME',
    title,
    message,
    destination_url: shopUrl(path),
    segment_id: segment ? segmentIds[segment] : null,
  });
  const create = (body: NotificationBody) => notifications.create(user.id, site.id, notificationBody.parse(body));

  // One-time sends of the last two months: "Send Now" on a draft, or scheduled the afternoon before.
  for (const send of ONE_TIME_SENDS) {
    const sendAt = localAt(send.daysAgo, send.time);
    const body = draft(send.title, send.message, send.path, send.segment);
    let id: string;
    if (send.how === 'send-now') {
      clock.set(minutesBefore(sendAt, 15, 90));
      id = (await create(body)).id;
      clock.set(sendAt);
      await notifications.sendNow(user.id, id);
    } else {
      clock.set(localAt(send.daysAgo + 1, `16:${String(random.int(0, 59)).padStart(2, '0')}`));
      id = (await create({ ...body, scheduled_at: new Date(sendAt).toISOString() })).id;
    }
    models.set(id, { key: send.title, clickRate: send.clickRate, unreachable: send.unreachable });
  }
  for (const written of DRAFTS) {
    clock.set(localAt(written.daysAgo, written.time));
    await create(draft(written.title, written.message, written.path, written.segment));
  }
  clock.set(localAt(1, '16:40'));
  await create({ ...draft(SCHEDULED.title, SCHEDULED.message, SCHEDULED.path), scheduled_at: new Date(localAt(-SCHEDULED.inDays, SCHEDULED.time)).toISOString() });
  clock.set(localAt(CANCELLED.createdDaysAgo, '11:00'));
  const cancelled = await create({ ...draft(CANCELLED.title, CANCELLED.message, CANCELLED.path), scheduled_at: new Date(localAt(CANCELLED.sendDaysAgo, CANCELLED.time)).toISOString() });
  clock.set(localAt(CANCELLED.sendDaysAgo, CANCELLED.cancelTime));
  await notifications.cancel(user.id, cancelled.id);

  // Recurring: a weekly digest every Monday for eight weeks (still running), and a daily deal paused after a week.
  const { weekly, daily } = RECURRING;
  let lastMonday = addDays(today, -weekdayIndex(today));
  if (parseDateTimeInZone(`${lastMonday}T${weekly.time}`, timeZone)! > now) lastMonday = addDays(lastMonday, -7);
  const weeklyStart = addDays(lastMonday, -7 * (weekly.weeks - 1));
  clock.set(parseDateTimeInZone(`${addDays(weeklyStart, -2)}T15:00`, timeZone)!);
  const weeklyNotification = await create({
    ...draft(weekly.title, weekly.message, weekly.path),
    type: 'RECURRING',
    recurring_schedule: { interval_type: 'WEEKLY', interval_value: 1, start_date: `${weeklyStart}T${weekly.time}` },
  });
  models.set(weeklyNotification.id, { key: weekly.title, clickRate: weekly.clickRate });
  clock.set(localAt(daily.startDaysAgo + 1, '17:30'));
  const dailyNotification = await create({
    ...draft(daily.title, daily.message, daily.path),
    type: 'RECURRING',
    recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: `${addDays(today, -daily.startDaysAgo)}T${daily.time}` },
  });
  models.set(dailyNotification.id, { key: daily.title, clickRate: daily.clickRate });
  const pauseAt = localAt(daily.pausedDaysAgo, '09:30');
  await fireRecurringOccurrences(ctx, clock, site.id, pauseAt, random);
  clock.set(pauseAt);
  await notifications.update(user.id, dailyNotification.id, notificationPatchBody.parse({ recurring_schedule: { is_active: false } }));
  await fireRecurringOccurrences(ctx, clock, site.id, now, random);

  // Triggered: armed five weeks ago; the shop's backend reports abandoned carts and shipped orders.
  clock.set(localAt(TRIGGERED.createdDaysAgo, '14:00'));
  for (const trigger of [TRIGGERED.cart, TRIGGERED.shipped]) {
    const created = await create({
      ...draft(trigger.title, trigger.message, trigger.path),
      type: 'TRIGGERED',
      trigger: { event: trigger.event, delay_minutes: trigger.delayMinutes },
    });
    models.set(created.id, { key: trigger.title, clickRate: trigger.clickRate });
  }
  await sendSiteEvents({ siteEvents, apiKeys, clock, random: random.fork('events'), siteId: site.id, apiKey, audience, localAt, now });

  // The welcome campaign, started two weeks ago: everyone who subscribed since was enrolled.
  const campaignStart = localAt(WELCOME_CAMPAIGN.createdDaysAgo, '10:00');
  clock.set(campaignStart);
  await campaigns.create(
    user.id,
    site.id,
    campaignBody.parse({
      name: WELCOME_CAMPAIGN.name,
      is_active: true,
      utm_params: WELCOME_CAMPAIGN.utm,
      steps: WELCOME_CAMPAIGN.steps.map((step, i) => ({
        sequence_order: i + 1,
        delay_minutes: step.delayMinutes,
        notification: { title: step.title, message: step.message, destination_url: shopUrl(step.path) },
      })),
    }),
  );
  for (const row of await repo.notificationsOfSite(ctx.db, site.id)) {
    const step = row.source === 'campaign' ? WELCOME_CAMPAIGN.steps.find((s) => s.title === row.title) : undefined;
    if (step) models.set(row.id, { key: step.title, clickRate: step.clickRate });
  }
  const hooks = ctx.subscriberCreatedHooks ?? [];
  const concerned = await sitesConcerned(ctx.db, [site.id], hooks);
  for (const { row } of audience) {
    if (row.subscribed_at < campaignStart) continue;
    clock.set(row.subscribed_at);
    await runSubscriberCreatedHooks(hooks, [{ subscriberId: row.id, siteId: site.id, subscribedAt: row.subscribed_at }], concerned, ctx.log);
  }

  // The journal's feed, paused: its address is an example and would never answer.
  clock.set(localAt(RSS_FEED.createdDaysAgo, '09:00'));
  await feeds.create(
    user.id,
    site.id,
    createRssFeedBody.parse({ name: RSS_FEED.name, url: RSS_FEED.url, is_active: false, maxPushesPerDay: 2, utmParams: { utm_source: 'herald', utm_medium: 'push', utm_campaign: 'journal' } }),
  );

  clock.set(now);
  await playHistory(ctx.db, { siteId: site.id, now, subscribers: new Map(audience.map((s) => [s.row.id, s])), models, random: random.fork('history') });
  await repo.recountActiveSubscribers(ctx.db, site.id);
  return { totals: await repo.siteTotals(ctx.db, site.id), elapsedMs: performance.now() - started };
}

/** Fires every recurring occurrence due up to `until`, one scheduler tick at a time, as the scheduler would have. */
async function fireRecurringOccurrences(ctx: AppContext, clock: ManualClock, siteId: string, until: number, random: SeededRandom): Promise<void> {
  const source = recurringScheduleSource(ctx);
  // Two schedules over three months: far fewer occurrences than this bound.
  for (let tick = 0; tick < 500; tick++) {
    const next = await repo.nextRecurringOccurrenceAt(ctx.db, siteId);
    if (next === undefined || next > until) return;
    clock.set(next + random.int(100, 900));
    await source.runDue(clock.now());
  }
  throw new Error('demo: recurring occurrences did not advance');
}

interface SiteEventsInput {
  siteEvents: ReturnType<typeof createSiteEventsService>;
  apiKeys: ReturnType<typeof createApiKeysService>;
  clock: ManualClock;
  random: SeededRandom;
  siteId: string;
  apiKey: string;
  audience: DemoSubscriber[];
  localAt: (daysAgo: number, time: string) => number;
  now: number;
}

/**
 * The events of the last four weeks, through the same calls the v1 API and
 * the SDK make. Each is about a subscriber still subscribed (the API answers
 * 404 for one who left) who had subscribed before it, and happened at least
 * two hours ago, so the sends it triggered are history too.
 */
async function sendSiteEvents(input: SiteEventsInput): Promise<void> {
  const { siteEvents, apiKeys, clock, random, siteId, apiKey } = input;
  const active = input.audience.filter((s) => s.row.is_active === 1);
  const customers = active.filter((s) => s.row.external_id !== null);
  const subscribedBefore = (list: DemoSubscriber[], at: number) => list.filter((s) => s.row.subscribed_at < at - HOUR_MS);

  type Planned = { at: number; kind: 'cart' | 'shipped' | 'browser' };
  const planned: Planned[] = [];
  const perDay: Array<[Planned['kind'], number]> = [
    ['cart', TRIGGERED.cart.perDay],
    ['shipped', TRIGGERED.shipped.perDay],
    ['browser', TRIGGERED.browserEvents.perDay],
  ];
  for (let daysAgo = TRIGGERED.eventDays; daysAgo >= 0; daysAgo--) {
    for (const [kind, mean] of perDay) {
      const count = Math.round(mean * random.between(0.4, 1.6));
      for (let i = 0; i < count; i++) {
        const at = input.localAt(daysAgo, `${String(random.int(8, 22)).padStart(2, '0')}:${String(random.int(0, 59)).padStart(2, '0')}`) + random.int(0, 59_999);
        if (at <= input.now - 2 * HOUR_MS) planned.push({ at, kind });
      }
    }
  }
  planned.sort((a, b) => a.at - b.at);

  let orderNumber = 58_210;
  for (const [index, event] of planned.entries()) {
    clock.set(event.at);
    if (event.kind === 'browser') {
      const candidates = subscribedBefore(active, event.at);
      if (!candidates.length) continue;
      const subscriber = random.pick(candidates);
      await siteEvents.trackFromBrowser(siteId, publicTrackBody.parse({ endpoint: subscriber.row.endpoint, event: TRIGGERED.browserEvents.event, data: { product: random.pick(['canvas-tote', 'everyday-sneaker', 'linen-shirt', 'wool-beanie']) } }));
      continue;
    }
    await apiKeys.authenticate(siteId, apiKey);
    if (event.kind === 'cart') {
      const candidates = subscribedBefore(active, event.at);
      if (!candidates.length) continue;
      const subscriber = random.pick(candidates);
      const items = random.int(1, 4);
      await siteEvents.receiveFromApi(
        siteId,
        apiEventBody.parse({
          event: TRIGGERED.cart.event,
          subscriber_id: subscriber.row.id,
          data: { items, cart_value: Math.round(items * random.between(18, 64) * 100) / 100 },
          idempotency_key: `cart-${index}`,
        }),
      );
    } else {
      const candidates = subscribedBefore(customers, event.at);
      if (!candidates.length) continue;
      orderNumber += random.int(3, 40);
      await siteEvents.receiveFromApi(
        siteId,
        apiEventBody.parse({ event: TRIGGERED.shipped.event, external_id: random.pick(candidates).row.external_id!, data: { order_id: `A-${orderNumber}` }, idempotency_key: `order-A-${orderNumber}` }),
      );
    }
  }
}
