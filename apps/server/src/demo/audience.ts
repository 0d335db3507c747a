// The demo site's audience: browsers, countries, languages and subscription
// times mixed the way a mid-sized web shop's push audience is (Chrome first,
// more phones than desktops, most visitors from the shop's own markets).
//
// Each subscriber gets a push subscription of the shape its browser really
// hands out: an endpoint on that browser's push service, a P-256 public key
// and a 16-byte auth secret, checked by the same function the subscribe API
// uses. The endpoints belong to no browser, so a send to them fails.
import crypto from 'node:crypto';
import { UNKNOWN } from '@herald/contracts';
import type { SubscriberRow } from '../db/schema';
import { endpointHash } from '../delivery/push-endpoints';
import { checkPushSubscription } from '../features/subscribers/push-subscription';
import { describeUserAgent } from '../features/subscribers/user-agent';
import { wallTimeOf } from '@herald/contracts';
import type { SeededRandom } from './random';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

type PushService = 'fcm' | 'mozilla' | 'apple' | 'wns';

interface Device {
  userAgent: string;
  pushService: PushService;
  mobile: boolean;
  weight: number;
}

/** Recent releases of each browser; shares as a shop's push audience has them (web push on iOS only from a home-screen app). */
const DEVICES: Device[] = [
  { weight: 24, mobile: false, pushService: 'fcm', userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Safari/537.36' },
  { weight: 8, mobile: false, pushService: 'fcm', userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Safari/537.36' },
  { weight: 2, mobile: false, pushService: 'fcm', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/137.0.0.0 Safari/537.36' },
  { weight: 26, mobile: true, pushService: 'fcm', userAgent: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Mobile Safari/537.36' },
  { weight: 9, mobile: false, pushService: 'wns', userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Safari/537.36 Edg/138.0.0.0' },
  { weight: 1, mobile: false, pushService: 'fcm', userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Safari/537.36 Edg/138.0.0.0' },
  { weight: 7, mobile: false, pushService: 'mozilla', userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:140.0) Gecko/20100101 Firefox/140.0' },
  { weight: 1.5, mobile: false, pushService: 'mozilla', userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:140.0) Gecko/20100101 Firefox/140.0' },
  { weight: 2, mobile: false, pushService: 'mozilla', userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' },
  { weight: 2.5, mobile: true, pushService: 'mozilla', userAgent: 'Mozilla/5.0 (Android 14; Mobile; rv:140.0) Gecko/140.0 Firefox/140.0' },
  { weight: 7, mobile: false, pushService: 'apple', userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Safari/605.1.15' },
  { weight: 5, mobile: true, pushService: 'apple', userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1' },
  { weight: 1.5, mobile: false, pushService: 'fcm', userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/137.0.0.0 Safari/537.36 OPR/121.0.0.0' },
  {
    weight: 2.5,
    mobile: true,
    pushService: 'fcm',
    userAgent: 'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/28.0 Chrome/130.0.0.0 Mobile Safari/537.36',
  },
];

interface Country {
  code: string;
  weight: number;
  timezones: ReadonlyArray<readonly [string, number]>;
  languages: ReadonlyArray<readonly [string, number]>;
}

const COUNTRIES: Country[] = [
  {
    code: 'US',
    weight: 31,
    timezones: [
      ['America/New_York', 45],
      ['America/Chicago', 30],
      ['America/Denver', 7],
      ['America/Los_Angeles', 18],
    ],
    languages: [
      ['en-US', 90],
      ['es-US', 10],
    ],
  },
  { code: 'DE', weight: 14, timezones: [['Europe/Berlin', 1]], languages: [['de-DE', 1]] },
  { code: 'GB', weight: 10, timezones: [['Europe/London', 1]], languages: [['en-GB', 1]] },
  {
    code: 'CA',
    weight: 6,
    timezones: [
      ['America/Toronto', 60],
      ['America/Vancouver', 25],
      ['America/Edmonton', 15],
    ],
    languages: [
      ['en-CA', 75],
      ['fr-CA', 25],
    ],
  },
  { code: 'FR', weight: 7, timezones: [['Europe/Paris', 1]], languages: [['fr-FR', 1]] },
  {
    code: 'IN',
    weight: 5,
    timezones: [['Asia/Kolkata', 1]],
    languages: [
      ['en-IN', 80],
      ['hi-IN', 20],
    ],
  },
  { code: 'NL', weight: 4, timezones: [['Europe/Amsterdam', 1]], languages: [['nl-NL', 1]] },
  { code: 'ES', weight: 4, timezones: [['Europe/Madrid', 1]], languages: [['es-ES', 1]] },
  { code: 'IT', weight: 3.5, timezones: [['Europe/Rome', 1]], languages: [['it-IT', 1]] },
  { code: 'BR', weight: 4, timezones: [['America/Sao_Paulo', 1]], languages: [['pt-BR', 1]] },
  {
    code: 'AU',
    weight: 3,
    timezones: [
      ['Australia/Sydney', 60],
      ['Australia/Melbourne', 40],
    ],
    languages: [['en-AU', 1]],
  },
  { code: 'MX', weight: 2.5, timezones: [['America/Mexico_City', 1]], languages: [['es-MX', 1]] },
  { code: 'PL', weight: 2.5, timezones: [['Europe/Warsaw', 1]], languages: [['pl-PL', 1]] },
  { code: 'JP', weight: 2, timezones: [['Asia/Tokyo', 1]], languages: [['ja-JP', 1]] },
  // The subscribe API files an address its country database does not know under "Unknown".
  { code: UNKNOWN, weight: 1.5, timezones: [['UTC', 1]], languages: [['en', 1]] },
];

/** When people subscribe, by local hour: lunch breaks and evenings. */
const LOCAL_HOUR_WEIGHTS = [1, 0.5, 0.3, 0.2, 0.2, 0.4, 1, 2, 3, 4, 4.5, 5, 6, 6, 5, 4.5, 4.5, 5, 6, 7, 7.5, 6.5, 4, 2];

/** Push-service endpoints as each browser hands them out; the tokens are random. */
function endpointOf(service: PushService, random: SeededRandom): string {
  switch (service) {
    case 'fcm':
      return `https://fcm.googleapis.com/fcm/send/${random.base64url(11)}:APA91b${random.base64url(134)}`;
    case 'mozilla':
      return `https://updates.push.services.mozilla.com/wpush/v2/gAAAAAB${random.base64url(212)}`;
    case 'apple':
      return `https://web.push.apple.com/Q${random.base64url(151)}`;
    case 'wns':
      return `https://wns2-${random.pick(['bl2p', 'par02p', 'db5p', 'am3p'])}.notify.windows.com/w/?token=BQYAAAD${random.base64url(180)}`;
  }
}

/** The keys a browser generates for a subscription (RFC 8291 §3): a P-256 public key and a 16-byte auth secret. */
function subscriptionKeys(): { p256dh: string; auth: string } {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  return { p256dh: ecdh.getPublicKey().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') };
}

const offsetCache = new Map<string, number>();
/** The zone's offset from UTC in whole minutes at `at` (near enough for a time of day). */
function offsetMinutes(timeZone: string, at: number): number {
  let offset = offsetCache.get(timeZone);
  if (offset === undefined) {
    const wall = wallTimeOf(at, timeZone);
    const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);
    offset = Math.round((asUtc - Math.floor(at / MINUTE_MS) * MINUTE_MS) / MINUTE_MS);
    offsetCache.set(timeZone, offset);
  }
  return offset;
}

export interface DemoSubscriber {
  /** Without its number: the database gives it on insert (migration 0036). */
  row: Omit<SubscriberRow, 'seq'>;
  tags: string[];
  mobile: boolean;
  /** The push service's host, for the errors a failed send records. */
  pushHost: string;
}

interface AudienceOptions {
  siteId: string;
  count: number;
  now: number;
  /** Subscriptions spread over this many days before `now`. */
  days: number;
  /** Days (before now) with a promotion that brought in more subscribers than usual, and how many times more. */
  busyDays: ReadonlyMap<number, number>;
  /** The share of subscribers who have unsubscribed since. */
  unsubscribedShare: number;
}

/** A day's weight: the audience grows over the period, with fewer sign-ups at weekends and more on promotion days. */
function dayWeights(options: AudienceOptions): Array<readonly [number, number]> {
  const weights: Array<readonly [number, number]> = [];
  for (let daysAgo = 0; daysAgo < options.days; daysAgo += 1) {
    const growth = 0.55 + 0.9 * (1 - daysAgo / (options.days - 1));
    const weekday = new Date(options.now - daysAgo * DAY_MS).getUTCDay();
    const weekend = weekday === 0 || weekday === 6 ? 0.85 : 1;
    weights.push([daysAgo, growth * weekend * (options.busyDays.get(daysAgo) ?? 1)]);
  }
  return weights;
}

/** A subscription instant on the given day, at a likely local hour of the subscriber's zone, never after `now`. */
function subscriptionInstant(random: SeededRandom, daysAgo: number, timeZone: string, now: number): number {
  const hour = random.weighted(LOCAL_HOUR_WEIGHTS.map((weight, h) => [h, weight] as const));
  const dayStart = Math.floor((now - daysAgo * DAY_MS) / DAY_MS) * DAY_MS;
  let at = dayStart + hour * HOUR_MS + random.int(0, 59) * MINUTE_MS + random.int(0, 59_999) - offsetMinutes(timeZone, now) * MINUTE_MS;
  while (at > now - MINUTE_MS) at -= DAY_MS;
  return at;
}

const TAGS_OF_SHOPPERS: ReadonlyArray<readonly [string, number]> = [
  ['newsletter', 0.22],
  ['sale-alerts', 0.16],
];

export function generateAudience(random: SeededRandom, options: AudienceOptions): DemoSubscriber[] {
  const days = dayWeights(options);
  const subscribers: DemoSubscriber[] = [];
  let customerNumber = 10_400;
  let previousExternalId: string | null = null;
  for (let i = 0; i < options.count; i += 1) {
    const device = random.weighted(DEVICES.map((d) => [d, d.weight] as const));
    const country = random.weighted(COUNTRIES.map((c) => [c, c.weight] as const));
    const timezone = random.weighted(country.timezones);
    const language = random.weighted(country.languages);
    const subscribedAt = subscriptionInstant(random, random.weighted(days), timezone, options.now);

    let unsubscribedAt: number | null = null;
    if (random.chance(options.unsubscribedShare * 1.3)) {
      // Most who leave do so after their first few notifications.
      const at = subscribedAt + MINUTE_MS + random.exponential(12 * DAY_MS);
      if (at < options.now - MINUTE_MS) unsubscribedAt = Math.round(at);
    }
    const lastActivity = unsubscribedAt ?? options.now;
    const lastSeenAt = Math.round(subscribedAt + (lastActivity - subscribedAt) * Math.sqrt(random.next()));

    // Signed-in customers: the shop calls herald.identify() with its own user id. A few
    // people subscribed on two devices, so one external id names two subscribers.
    let externalId: string | null = null;
    if (previousExternalId && random.chance(0.03)) externalId = previousExternalId;
    else if (random.chance(0.35)) externalId = `cust_${(customerNumber += random.int(1, 9))}`;
    previousExternalId = externalId;

    const tags = TAGS_OF_SHOPPERS.filter(([, share]) => random.chance(share)).map(([tag]) => tag);
    if (externalId && random.chance(0.35)) tags.push('returning-customer');
    if (externalId && random.chance(0.14)) tags.push('vip');

    const endpoint = endpointOf(device.pushService, random);
    const checked = checkPushSubscription({ endpoint, keys: subscriptionKeys() }, []);
    const { browser, os } = describeUserAgent(device.userAgent);
    subscribers.push({
      row: {
        id: random.uuid(),
        site_id: options.siteId,
        endpoint: checked.endpoint,
        endpoint_hash: endpointHash(checked.endpoint),
        p256dh: checked.p256dh,
        auth: checked.auth,
        // Signed with the site's primary key (the demo site has one).
        vapid_key_id: null,
        browser,
        os,
        country: country.code,
        language,
        timezone,
        user_agent: device.userAgent,
        external_id: externalId,
        // The demo shop verifies identities (new sites do by default), so its claims are signed.
        external_id_verified: externalId ? 1 : 0,
        is_active: unsubscribedAt === null ? 1 : 0,
        test_device: 0,
        test_device_name: null,
        subscribed_at: subscribedAt,
        last_seen_at: lastSeenAt,
        // Set from the played-back history's delivered beacons (history.ts).
        last_delivered_at: null,
        // Filled when retention compacts the history's old delivery rows (features/retention).
        last_sent_at: null,
        last_clicked_at: null,
        unsubscribed_at: unsubscribedAt,
        updated_at: Math.max(lastSeenAt, unsubscribedAt ?? 0),
      },
      tags: tags.sort(),
      mobile: device.mobile,
      pushHost: new URL(checked.endpoint).host,
    });
  }
  return subscribers.sort((a, b) => a.row.subscribed_at - b.row.subscribed_at);
}
