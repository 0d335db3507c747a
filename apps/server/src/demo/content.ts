// What the demo shop sends: three months of a web shop's push marketing,
// written so it reads true in any season. Times are wall times in the site's
// timezone, days are counted back from today.
import type { CreateSegmentBody } from '@herald/contracts';

export const DEMO_EMAIL = 'demo@herald.local';
export const DEMO_NAME = 'Demo Owner';
export const DEMO_SITE = { name: 'Demo Shop', url: 'https://shop.example', timezone: 'America/New_York' } as const;

const SHOP = DEMO_SITE.url;

export type SegmentKey = 'chrome' | 'germany' | 'vip' | 'android' | 'loyal';

export const SEGMENTS: Record<SegmentKey, CreateSegmentBody> = {
  chrome: { name: 'Chrome users', rules: { browser: 'Chrome' } },
  germany: { name: 'Germany', rules: { country: 'DE' } },
  vip: { name: 'VIP customers', rules: { tags: ['vip'] } },
  android: { name: 'Android phones', rules: { os: 'Android' } },
  loyal: { name: 'Subscribed 30+ days', rules: { subscribed_days_ago: 30 } },
};

interface OneTimeSend {
  daysAgo: number;
  /** Local wall time "HH:MM" of the send. */
  time: string;
  title: string;
  message: string;
  path: string;
  segment?: SegmentKey;
  /** Clicked ÷ delivered, roughly: how well this message does. */
  clickRate: number;
  /** "Send Now" from the list, or scheduled the afternoon before. */
  how: 'send-now' | 'scheduled';
  /** Every push of this send failed (the server lost its network for the whole send). */
  unreachable?: true;
}

export const ONE_TIME_SENDS: OneTimeSend[] = [
  { daysAgo: 58, time: '10:00', how: 'send-now', clickRate: 0.07, path: '/new-arrivals', title: 'New arrivals are in', message: '120 fresh styles just landed. Be the first to shop the new collection.' },
  { daysAgo: 55, time: '18:30', how: 'scheduled', clickRate: 0.09, path: '/shipping', title: 'Free shipping this weekend', message: 'No minimum order, no code needed. Ends Sunday at midnight.' },
  { daysAgo: 51, time: '12:00', how: 'scheduled', clickRate: 0.11, path: '/de/lieferung', segment: 'germany', title: 'Neu: Lieferung in 24 Stunden', message: 'Ab sofort liefern wir in ganz Deutschland am nächsten Tag. Jetzt bestellen!' },
  { daysAgo: 48, time: '09:30', how: 'send-now', clickRate: 0.22, path: '/vip/early-access', segment: 'vip', title: 'Your VIP early access starts now', message: 'Shop the new collection 48 hours before everyone else.' },
  { daysAgo: 44, time: '17:00', how: 'scheduled', clickRate: 0.1, path: '/sale', title: 'Up to 40% off: mid-season sale', message: 'Hundreds of favourites reduced. While stocks last.' },
  { daysAgo: 41, time: '11:00', how: 'send-now', clickRate: 0.05, path: '/app', segment: 'chrome', title: 'Add Demo Shop to your home screen', message: 'One tap to your favourite shop, with order updates and a faster checkout.' },
  { daysAgo: 37, time: '19:00', how: 'scheduled', clickRate: 0.06, path: '/collections/linen', title: 'Just in: linen essentials', message: 'Light, breathable, made to last. Meet the new linen range.' },
  { daysAgo: 34, time: '10:00', how: 'send-now', clickRate: 0.13, path: '/sale/flash', title: 'Flash sale: 2 hours only ⚡', message: 'Extra 25% off everything in the sale. Starts now, ends at noon.' },
  { daysAgo: 30, time: '12:30', how: 'scheduled', clickRate: 0.06, path: '/checkout', segment: 'android', title: 'Faster checkout on your phone', message: 'Pay in one tap with Google Pay. Try it on your next order.' },
  { daysAgo: 27, time: '09:00', how: 'send-now', clickRate: 0.19, path: '/vip/points', segment: 'vip', title: 'VIP: double points all week', message: 'Every order earns double loyalty points until Sunday.' },
  { daysAgo: 23, time: '18:00', how: 'scheduled', clickRate: 0.09, path: '/sale', title: 'Our biggest sale starts tomorrow', message: 'Set a reminder: up to 50% off from 8 am.' },
  { daysAgo: 22, time: '08:00', how: 'send-now', clickRate: 0.14, path: '/sale', title: 'The big sale is on: up to 50% off', message: 'Thousands of styles reduced. Shop early for the best sizes.' },
  { daysAgo: 19, time: '13:00', how: 'scheduled', clickRate: 0.12, path: '/de/sale', segment: 'germany', title: 'Großer Sale: bis zu 50 % Rabatt', message: 'Tausende Artikel reduziert – nur noch wenige Tage.' },
  { daysAgo: 16, time: '17:30', how: 'send-now', clickRate: 0.1, path: '/products/canvas-tote', title: 'Back in stock: the canvas tote', message: 'Sold out in two days last time. Get yours while you can.' },
  { daysAgo: 15, time: '14:00', how: 'send-now', clickRate: 0.1, path: '/de/happy-hour', segment: 'germany', unreachable: true, title: 'Happy Hour: 20 % auf alles', message: 'Nur heute bis 18 Uhr – auf das gesamte Sortiment.' },
  { daysAgo: 13, time: '10:00', how: 'scheduled', clickRate: 0.11, path: '/sale', title: 'Last chance: the sale ends tonight', message: 'Final reductions on the remaining sizes. Ends at midnight.' },
  { daysAgo: 10, time: '11:30', how: 'send-now', clickRate: 0.07, path: '/new-season', title: 'New season preview', message: 'A first look at what is coming next. Save your favourites now.' },
  { daysAgo: 8, time: '18:00', how: 'scheduled', clickRate: 0.09, path: '/loyalty', segment: 'loyal', title: 'Thank you: 15% off for you', message: 'You have been with us for a month or more. Here is 15% off your next order.' },
  { daysAgo: 5, time: '10:00', how: 'send-now', clickRate: 0.1, path: '/deals/3-for-2', title: 'Weekend deal: buy 2, get 1 free', message: 'On all basics: tees, socks and underwear. Mix and match.' },
  { daysAgo: 3, time: '12:00', how: 'scheduled', clickRate: 0.2, path: '/vip/preview', segment: 'vip', title: 'VIP preview: the new drop', message: 'Your private preview of our newest collection is open.' },
  { daysAgo: 1, time: '09:30', how: 'send-now', clickRate: 0.08, path: '/products/everyday-sneaker', title: 'Midweek pick: the everyday sneaker', message: 'Our best-rated sneaker, now in six colours.' },
];

/** Days before today the shop ran a promotion that brought in more subscribers than usual, and how many times more. */
export const BUSY_DAYS = new Map([
  [44, 1.8],
  [34, 1.6],
  [22, 2.8],
  [21, 1.9],
  [5, 1.5],
]);

/** Written, not sent yet. */
export const DRAFTS: Array<{ daysAgo: number; time: string; title: string; message: string; path: string; segment?: SegmentKey }> = [
  { daysAgo: 2, time: '15:20', title: 'Sneak peek: next week’s deals', message: 'Get ready: our next deals go live Monday at 9 am.', path: '/deals' },
  { daysAgo: 1, time: '17:45', title: 'Gift guide: ideas under $50', message: 'Thoughtful gifts for everyone on your list, all under $50.', path: '/gifts', segment: 'chrome' },
];

/** Created yesterday afternoon, goes out the day after tomorrow. */
export const SCHEDULED = { inDays: 2, time: '10:00', title: 'Weekend flash sale starts now', message: '30% off selected styles for 48 hours only.', path: '/sale/weekend' };

/** Scheduled, then called off the morning of the send. */
export const CANCELLED = { createdDaysAgo: 21, sendDaysAgo: 20, time: '18:00', cancelTime: '09:15', title: 'Evening flash sale', message: '20% off everything from 6 pm to 9 pm.', path: '/sale/evening' };

export const RECURRING = {
  weekly: {
    title: 'Weekly deals digest',
    message: 'This week’s best deals, hand-picked for you.',
    path: '/deals/weekly',
    clickRate: 0.08,
    /** Every Monday at 10:00, for the last eight weeks. */
    weeks: 8,
    time: '10:00',
  },
  daily: {
    title: 'Deal of the day',
    message: 'One product, one price, 24 hours only.',
    path: '/deals/today',
    clickRate: 0.05,
    startDaysAgo: 12,
    time: '08:00',
    /** Paused after a week: the clicks did not justify a daily push. */
    pausedDaysAgo: 6,
  },
};

export const TRIGGERED = {
  cart: {
    event: 'cart_abandoned',
    delayMinutes: 60,
    title: 'You left something in your cart',
    message: 'Your items are waiting. Complete your order today and shipping is on us.',
    path: '/cart',
    clickRate: 0.16,
    perDay: 4,
  },
  shipped: {
    event: 'order_shipped',
    delayMinutes: 0,
    title: 'Your order is on its way',
    message: 'Track your parcel and see when it arrives.',
    path: '/account/orders',
    clickRate: 0.22,
    perDay: 2,
  },
  createdDaysAgo: 35,
  /** Site events are kept 30 days (SITE_EVENT_RETENTION_DAYS): the demo's are younger. */
  eventDays: 29,
  /** Events the shop's pages track that no notification listens for (yet). */
  browserEvents: { event: 'wishlist_added', perDay: 1.5 },
};

export const WELCOME_CAMPAIGN = {
  name: 'Welcome series',
  createdDaysAgo: 14,
  utm: { utm_source: 'herald', utm_medium: 'push', utm_campaign: 'welcome' },
  steps: [
    { delayMinutes: 0, title: 'Welcome to Demo Shop', message: 'Thanks for subscribing! We will only send you the good stuff.', path: '/welcome', clickRate: 0.12 },
    { delayMinutes: 24 * 60, title: 'Here is 10% off your first order', message: 'Use code WELCOME10 at checkout. Valid for 7 days.', path: '/welcome/offer', clickRate: 0.1 },
    { delayMinutes: 3 * 24 * 60, title: 'Our bestsellers, picked for you', message: 'See what everyone is buying this week.', path: '/bestsellers', clickRate: 0.07 },
  ],
};

export const RSS_FEED = {
  name: 'Demo Shop journal',
  // .example is reserved (RFC 2606): this address can never be fetched, and the feed is paused anyway.
  url: `${SHOP}/journal/feed.xml`,
  createdDaysAgo: 30,
};

export const API_KEY_NAME = 'Shop backend (carts and orders)';

export const VALUE_GOALS = { valueCurrency: 'USD', valuePerSubscriber: 0.5, valuePerClick: 0.35 } as const;

export function shopUrl(path: string): string {
  return `${SHOP}${path}`;
}
