import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalFeedServer, rssDocument, type TestItem } from '../apps/server/test/rss-feeds/local-feed-server';
import { PushService, type ReceivedPush, type TestSubscription } from '../apps/server/test/support/push-service';
import { expectAccessible, launchChromium, recordDialogs, type BrowserSession, type Page } from './support/browser';
import { startHerald, type HeraldProcess } from './support/herald-server';
import { ownerApi, signInThroughUi, solidPng, subscribeThroughPublicApi, USER_AGENTS, waitUntil } from './support/journey';

// Issue 4's journey, through the dashboard in headless Chromium: the owner
// creates a segment, a two-step welcome campaign for that segment (step 2
// one minute after step 1, the UI's smallest delay) and an RSS feed served by
// this test. Then subscribers registered through the public API get the
// welcome steps on time and a new feed item exactly once; the local push
// service checks VAPID and decrypts every message.

const OWNER = { email: 'owner@example.com', password: 'owner-password', name: 'Olive Owner' };
const SITE_URL = 'https://journey.example';
const FEED_PATH = '/blog/feed.xml';
const POLL_SECONDS = 3;
const STEP_2_DELAY_MS = 60_000;

const SEGMENT_NAME = 'Firefox subscribers';
const WELCOME = { title: 'Welcome aboard', message: 'Thanks for subscribing to Journey Shop', url: `${SITE_URL}/welcome` };
const FOLLOW_UP = { title: 'Still with us?', message: 'Here are this week’s best sellers', url: `${SITE_URL}/best-sellers` };
const NEW_POST: TestItem = {
  guid: 'post-2',
  title: 'Autumn collection is here',
  link: `${SITE_URL}/blog/autumn`,
  description: 'Warm knits and new colours',
  pubDate: new Date('2026-01-12T09:00:00Z'),
};

const titleOf = (message: ReceivedPush) => (message.payload as { title?: string } | undefined)?.title;

describe('automation journey: segment, welcome campaign and RSS feed (headless Chromium + local push service)', () => {
  let herald: HeraldProcess;
  let push: PushService;
  let feeds: LocalFeedServer;
  let browser: BrowserSession;
  let page: Page;
  let dialogs: string[];
  let owner: ReturnType<typeof ownerApi>;
  let siteId: string;
  let segmentId: string;
  let uploadedIconUrl: string;

  const feedItems: TestItem[] = [
    { guid: 'post-1', title: 'Hello from the blog', link: `${SITE_URL}/blog/hello`, description: 'Our first post', pubDate: new Date('2026-01-05T09:00:00Z') },
  ];
  const serveFeed = () => feeds.serve(FEED_PATH, { body: rssDocument(feedItems, { title: 'Journey Blog', link: `${SITE_URL}/blog` }) });

  // The subscribers and when the first one subscribed (measured before the request, so never later than Herald's own time).
  let fan: TestSubscription;
  let other: TestSubscription;
  let fanSubscribedAt: number;

  const messagesTo = (subscription: TestSubscription) => push.messages.filter((m) => m.subscriptionId === subscription.id);
  const titlesTo = (subscription: TestSubscription) => messagesTo(subscription).map(titleOf).sort();
  const waitForPush = (subscription: TestSubscription, title: string, timeoutMs: number) =>
    waitUntil(`"${title}" at ${subscription.id}`, timeoutMs, () => messagesTo(subscription).find((m) => titleOf(m) === title));

  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
  const optionTexts = (select: ReturnType<Page['getByRole']>) => select.locator('option').allTextContents();

  beforeAll(async () => {
    push = await PushService.start();
    feeds = await LocalFeedServer.start();
    serveFeed();
    herald = await startHerald({
      ADMIN_EMAIL: OWNER.email,
      ADMIN_PASSWORD: OWNER.password,
      ADMIN_NAME: OWNER.name,
      EXTRA_PUSH_ORIGINS: push.origin,
      SCHEDULER_INTERVAL_MS: '250',
      // The feed is served by this test on 127.0.0.1, which Herald's outbound client refuses unless allowed.
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      RSS_POLL_INTERVAL_SECONDS: String(POLL_SECONDS),
    });
    owner = ownerApi(herald.url);
    await owner.signIn(OWNER.email, OWNER.password);
    siteId = (await owner.call('POST', '/sites', { name: 'Journey Shop', url: SITE_URL })).data.site.id;
    browser = await launchChromium();
    page = await browser.context.newPage();
    dialogs = recordDialogs(page);
    await signInThroughUi(page, herald.url, OWNER.email, OWNER.password);
  });
  afterAll(async () => {
    await browser?.close();
    await herald?.stop();
    herald?.cleanUp();
    await feeds?.close();
    await push?.close();
  });

  it('creates a segment, a welcome campaign for it (step 2 one minute after step 1) and an RSS feed in the dashboard', async () => {
    // The campaign form first, so its target select already holds the site's (empty) segment list when the segment is created.
    const segmentsLoaded = page.waitForResponse((r) => r.url().endsWith(`/api/sites/${siteId}/segments`) && r.ok());
    await page.goto(`${herald.url}/campaigns/new`);
    await segmentsLoaded;
    // All Subscribers carries the reach now (issue 11): nobody has subscribed yet.
    await expect.poll(() => optionTexts(page.getByRole('combobox', { name: 'Target Segment' }))).toEqual(['All Subscribers (0)']);

    // Segments: "+ New Segment", Browser = Firefox (spec §2 Segments).
    await nav('Segments').click();
    await page.getByRole('button', { name: '+ New Segment' }).click();
    const segmentForm = page.getByRole('form', { name: 'New Segment' });
    await segmentForm.getByLabel(/^Segment Name/).fill(SEGMENT_NAME);
    await segmentForm.getByRole('combobox', { name: 'Browser' }).selectOption('Firefox');
    await expectAccessible(page, 'new segment form');
    await segmentForm.getByRole('button', { name: 'Create Segment' }).click();
    await expect.poll(() => dialogs).toContain('Segment created successfully!');
    const segmentCard = page.getByRole('article', { name: SEGMENT_NAME });
    await expect.poll(() => segmentCard.getByTestId('segment-count').textContent()).toContain('0 subscribers');
    await expectAccessible(page, 'segments');
    const segments = (await owner.call('GET', `/sites/${siteId}/segments`)).data.segments;
    expect(segments.map((s: any) => [s.name, s.rules])).toEqual([[SEGMENT_NAME, { browser: 'Firefox' }]]);
    segmentId = segments[0].id;

    // Welcome campaign, reached through the sidebar: the target select offers the new segment without a reload.
    await nav('Campaigns').click();
    await page.getByRole('link', { name: '+ New Campaign' }).click();
    await page.waitForURL('**/campaigns/new');
    const target = page.getByRole('combobox', { name: 'Target Segment' });
    await expect.poll(() => optionTexts(target)).toEqual(['All Subscribers (0)', `${SEGMENT_NAME} (0)`]);
    await expect.poll(() => page.getByRole('switch', { name: 'Active' }).getAttribute('aria-checked')).toBe('true');
    await page.getByLabel(/^Campaign Name/).fill('Welcome series');
    // The campaign icon is uploaded with the shared image picker.
    const iconPicker = page.getByRole('group', { name: 'Campaign Icon' });
    await iconPicker.getByRole('button', { name: 'Upload file' }).click();
    await iconPicker.getByLabel('Upload Campaign Icon').setInputFiles({ name: 'welcome-icon.png', mimeType: 'image/png', buffer: solidPng(192, [79, 70, 229]) });
    const iconPreview = iconPicker.getByRole('img', { name: 'Campaign Icon preview' });
    await iconPreview.waitFor();
    uploadedIconUrl = (await iconPreview.getAttribute('src')) ?? '';
    expect(uploadedIconUrl).toMatch(new RegExp(`^${herald.url}/uploads/[\\w.-]+\\.png$`));
    await target.selectOption({ label: `${SEGMENT_NAME} (0)` });

    const step1 = page.getByTestId('campaign-step-1');
    await step1.getByLabel(/^Title/).fill(WELCOME.title);
    await step1.getByLabel(/^Message/).fill(WELCOME.message);
    await step1.getByLabel(/^Destination URL/).fill(WELCOME.url);
    await page.getByRole('button', { name: '+ Add Notification' }).click();
    const step2 = page.getByTestId('campaign-step-2');
    await step2.getByRole('spinbutton', { name: 'Delay of notification 2' }).fill('1');
    await step2.getByRole('combobox', { name: 'Delay unit of notification 2' }).selectOption('minutes');
    await step2.getByLabel(/^Title/).fill(FOLLOW_UP.title);
    await step2.getByLabel(/^Message/).fill(FOLLOW_UP.message);
    await step2.getByLabel(/^Destination URL/).fill(FOLLOW_UP.url);
    await expect.poll(() => step2.textContent()).toContain('1 minute after notification 1');
    await expectAccessible(page, 'new welcome campaign');
    await page.getByRole('button', { name: 'Save Campaign' }).click();
    await expect.poll(() => dialogs).toContain('Campaign created successfully!');
    await page.waitForURL('**/campaigns');
    await expect.poll(() => page.getByText('Step 2: Send after 1 minutes').isVisible()).toBe(true);
    await expectAccessible(page, 'campaigns');
    const [campaign] = (await owner.call('GET', `/sites/${siteId}/welcome-campaigns`)).data.campaigns;
    expect(campaign).toMatchObject({ name: 'Welcome series', is_active: true, segment_id: segmentId, icon_url: uploadedIconUrl });
    expect(campaign.steps.map((s: any) => [s.sequence_order, s.delay_minutes, s.notification.title])).toEqual([
      [1, 0, WELCOME.title],
      [2, 1, FOLLOW_UP.title],
    ]);

    // RSS feed for everyone, pointing at the feed this test serves.
    await nav('RSS Feeds').click();
    await page.getByRole('button', { name: '+ Add Feed' }).click();
    const feedForm = page.getByRole('form', { name: 'Add RSS Feed' });
    await feedForm.getByLabel(/^Feed Name/).fill('Journey Blog');
    await feedForm.getByLabel(/^RSS Feed URL/).fill(feeds.url(FEED_PATH));
    await feedForm.getByLabel('utm_source').fill('herald');
    await feedForm.getByLabel('utm_medium').fill('push');
    await feedForm.getByLabel('utm_campaign').fill('blog');
    // The same segment list as the campaign form (one shared query).
    await expect.poll(() => optionTexts(feedForm.getByRole('combobox', { name: 'Target Segment' }))).toEqual([expect.stringMatching(/^All Subscribers \(\d+\)$/), `${SEGMENT_NAME} (0)`]);
    await expect.poll(() => feedForm.getByRole('checkbox', { name: 'Active' }).isChecked()).toBe(true);
    await expectAccessible(page, 'add RSS feed form');
    await feedForm.getByTestId('rss-feed-submit').click();
    await expect.poll(() => dialogs).toContain('RSS feed added successfully!');

    // The first check runs at once and only records the post already in the feed; the list shows it by itself.
    const feedCard = page.getByRole('article', { name: 'Journey Blog' });
    await expect.poll(() => feedCard.textContent(), { timeout: 15_000 }).toContain('post-1');
    expect(await feedCard.textContent()).not.toContain('Not checked yet');
    await expectAccessible(page, 'RSS feeds');
    const [feed] = (await owner.call('GET', `/sites/${siteId}/rss-feeds`)).data.feeds;
    expect(feed).toMatchObject({ name: 'Journey Blog', url: feeds.url(FEED_PATH), is_active: true, segment_id: null, last_item_guid: 'post-1', last_error: null });
    expect(feeds.requestsTo(FEED_PATH).length).toBeGreaterThanOrEqual(1);
    expect(push.messages).toHaveLength(0);
  });

  it('a new subscriber in the segment gets welcome step 1 at once; a new feed item reaches every subscriber exactly once', async () => {
    const site = (await owner.call('GET', `/sites/${siteId}`)).data.site;
    fan = push.createSubscription({ applicationServerKey: site.vapid_public_key });
    other = push.createSubscription({ applicationServerKey: site.vapid_public_key });
    fanSubscribedAt = Date.now();
    await subscribeThroughPublicApi(herald.url, { siteId, origin: SITE_URL, subscription: fan, userAgent: USER_AGENTS.firefoxLinux });
    // Not in the segment (Chrome): enrolled like everyone, but the campaign's steps are not for it.
    await subscribeThroughPublicApi(herald.url, { siteId, origin: SITE_URL, subscription: other, userAgent: USER_AGENTS.chromeWindows });

    const welcome = await waitForPush(fan, WELCOME.title, 15_000);
    expect(welcome.receivedAt - fanSubscribedAt).toBeLessThan(15_000);
    expect(welcome.payload).toMatchObject({ title: WELCOME.title, body: WELCOME.message, url: WELCOME.url, icon: uploadedIconUrl, api: herald.url });
    // The uploaded icon the payload points at is served.
    const icon = await fetch(uploadedIconUrl);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/png');

    // A new post in the feed: the next scheduled poll sends it to everyone (the feed targets all subscribers).
    feedItems.unshift(NEW_POST);
    serveFeed();
    const postToFan = await waitForPush(fan, NEW_POST.title!, POLL_SECONDS * 1000 + 15_000);
    const postToOther = await waitForPush(other, NEW_POST.title!, 15_000);
    for (const message of [postToFan, postToOther]) {
      expect(message.payload).toMatchObject({ title: NEW_POST.title, body: NEW_POST.description });
      const link = new URL((message.payload as { url: string }).url);
      expect(`${link.origin}${link.pathname}`).toBe(NEW_POST.link);
      expect(Object.fromEntries(link.searchParams)).toEqual({ utm_source: 'herald', utm_medium: 'push', utm_campaign: 'blog' });
    }

    // "Check now" in the dashboard: the item is known, nothing more is sent.
    await page.goto(`${herald.url}/rss-feeds`);
    const feedCard = page.getByRole('article', { name: 'Journey Blog' });
    const checkResult = feedCard.getByRole('status');
    const outcome = await waitUntil('a "Check now" result', 20_000, async () => {
      await feedCard.getByRole('button', { name: 'Check now' }).click();
      await expect.poll(() => checkResult.textContent()).not.toBe('');
      const text = (await checkResult.textContent()) ?? '';
      // A scheduled check of the same feed may be running at that very moment; a person would click again.
      return text.includes('being checked right now') ? undefined : text;
    });
    expect(outcome).toBe('No new items (2 items in the feed).');
    await expect.poll(() => feedCard.textContent()).toContain('post-2');

    // Two more scheduled polls find nothing new either.
    const requestsSoFar = feeds.requestsTo(FEED_PATH).length;
    await waitUntil('two more scheduled polls', POLL_SECONDS * 2000 + 15_000, () => (feeds.requestsTo(FEED_PATH).length >= requestsSoFar + 2 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(messagesTo(fan).filter((m) => titleOf(m) === NEW_POST.title)).toHaveLength(1);
    expect(messagesTo(other).filter((m) => titleOf(m) === NEW_POST.title)).toHaveLength(1);

    // Still inside step 2's delay: it has not been sent.
    expect(Date.now()).toBeLessThan(fanSubscribedAt + STEP_2_DELAY_MS);
    expect(titlesTo(fan)).toEqual([NEW_POST.title, WELCOME.title].sort());
    expect(titlesTo(other)).toEqual([NEW_POST.title]);
  });

  it('welcome step 2 arrives after its one-minute delay, not before, and only in the segment', async () => {
    const remaining = fanSubscribedAt + STEP_2_DELAY_MS - Date.now();
    const followUp = await waitForPush(fan, FOLLOW_UP.title, Math.max(0, remaining) + 20_000);
    expect(followUp.receivedAt).toBeGreaterThanOrEqual(fanSubscribedAt + STEP_2_DELAY_MS);
    expect(followUp.payload).toMatchObject({ title: FOLLOW_UP.title, body: FOLLOW_UP.message, url: FOLLOW_UP.url, icon: uploadedIconUrl });

    // A few more scheduler ticks: nothing else arrives, nothing twice.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(titlesTo(fan)).toEqual([NEW_POST.title, FOLLOW_UP.title, WELCOME.title].sort());
    expect(titlesTo(other)).toEqual([NEW_POST.title]);
    // Every message was accepted by the push service with a valid VAPID signature (it records only those).
    expect(push.messages).toHaveLength(4);

    // The segment now counts its subscriber.
    await page.goto(`${herald.url}/segments`);
    const segmentCard = page.getByRole('article', { name: SEGMENT_NAME });
    await expect.poll(() => segmentCard.getByTestId('segment-count').textContent()).toContain('1 subscriber');
  }, 120_000);
});
