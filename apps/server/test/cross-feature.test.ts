import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// Rules that join two features: a segment in use cannot be deleted (a send
// without its segment would reach everyone), and a welcome-campaign step is
// changed through its campaign, not the notifications API.
describe('features that refer to each other', () => {
  let t: TestApp;
  let owner: TestUser;
  let site: any;
  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.createUser();
    site = await t.createSite(owner.token);
  });
  afterAll(async () => t.close());

  const segment = async (name: string) =>
    (await t.request('POST', `/api/sites/${site.id}/segments`, { token: owner.token, body: { name, rules: { browser: 'Chrome' } } })).body.data.segment;

  const campaignBody = (segmentId: string | null) => ({
    name: 'Welcome',
    is_active: true,
    segment_id: segmentId,
    steps: [{ sequence_order: 1, delay_minutes: 0, notification: { title: 'Hi', message: 'Welcome aboard', destination_url: 'https://shop.example/hi' } }],
  });

  it('targets a welcome campaign and a feed at a segment of the same site, and refuses to delete that segment', async () => {
    const chrome = await segment('Chrome users');
    const campaign = await t.request('POST', `/api/sites/${site.id}/welcome-campaigns`, { token: owner.token, body: campaignBody(chrome.id) });
    expect(campaign.status).toBe(201);
    expect(campaign.body.data.campaign.segment_id).toBe(chrome.id);

    const feedSegment = await segment('Readers');
    const feed = await t.request('POST', `/api/sites/${site.id}/rss-feeds`, {
      token: owner.token,
      body: { name: 'Blog', url: 'https://shop.example/feed.xml', iconUrl: null, utmParams: null, showActionButtons: false, createDraft: false, maxPushesPerDay: 2, segmentId: feedSegment.id },
    });
    expect(feed.status).toBe(201);
    expect(feed.body.data.feed.segment_id).toBe(feedSegment.id);

    const refusedCampaign = await t.request('DELETE', `/api/segments/${chrome.id}`, { token: owner.token });
    expect(refusedCampaign.status).toBe(409);
    expect(refusedCampaign.body.error.message).toMatch(/welcome campaign/);
    const refusedFeed = await t.request('DELETE', `/api/segments/${feedSegment.id}`, { token: owner.token });
    expect(refusedFeed.status).toBe(409);
    expect(refusedFeed.body.error.message).toMatch(/RSS feed \("Blog"\)/);

    // Another site's segment cannot be used.
    const other = await t.createSite(owner.token, { name: 'Other' });
    const foreign = (await t.request('POST', `/api/sites/${other.id}/segments`, { token: owner.token, body: { name: 'Foreign' } })).body.data.segment;
    const crossSite = await t.request('POST', `/api/sites/${site.id}/welcome-campaigns`, { token: owner.token, body: { ...campaignBody(foreign.id), is_active: false } });
    expect(crossSite.status).toBe(400);
    expect(crossSite.body.error.message).toBe('Segment not found');
  });

  it('keeps the notifications API off welcome-campaign steps', async () => {
    const created = await t.request('POST', `/api/sites/${site.id}/welcome-campaigns`, { token: owner.token, body: { ...campaignBody(null), name: 'Steps', is_active: false } });
    const stepNotificationId = (
      await t.ctx.db.selectFrom('welcome_campaign_steps').select('notification_id').where('campaign_id', '=', created.body.data.campaign.id).executeTakeFirstOrThrow()
    ).notification_id;
    for (const [method, suffix, body] of [
      ['PATCH', '', { title: 'Changed' }],
      ['DELETE', '', undefined],
      ['POST', '/send', undefined],
      ['POST', '/cancel', undefined],
      ['POST', '/duplicate', undefined],
      ['POST', '/retry', undefined],
    ] as const) {
      const response = await t.request(method, `/api/notifications/${stepNotificationId}${suffix}`, { token: owner.token, body });
      expect(response.status, `${method} ${suffix}`).toBe(409);
      expect(response.body.error.message).toMatch(/welcome campaign step/);
    }
    expect((await t.request('GET', `/api/notifications/${stepNotificationId}`, { token: owner.token })).status).toBe(200);
  });
});
