import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// The welcome campaigns API (spec §7 Welcome campaigns, §5 validation, §4 one
// active campaign per site) and its tenancy (docs/security.md).

const step = (sequence_order: number, delay_minutes: number, overrides: Record<string, unknown> = {}) => ({
  sequence_order,
  delay_minutes,
  notification: {
    title: `Step ${sequence_order}`,
    message: `Message of step ${sequence_order}`,
    destination_url: `https://shop.example/step-${sequence_order}`,
    icon_url: null,
    image_url: null,
    ...overrides,
  },
});

const campaignInput = (overrides: Record<string, unknown> = {}) => ({
  name: 'Welcome series',
  is_active: true,
  steps: [step(1, 0), step(2, 60), step(3, 1440)],
  ...overrides,
});

describe('welcome campaigns API', () => {
  let t: TestApp;
  let owner: TestUser;
  let site: { id: string };
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 9));

  const create = (body: unknown, siteId = site.id, token = owner.token) => t.request('POST', `/api/sites/${siteId}/welcome-campaigns`, { token, body });
  const list = (siteId = site.id, token = owner.token) => t.request('GET', `/api/sites/${siteId}/welcome-campaigns`, { token });

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
    site = await t.createSite(owner.token);
  });
  afterAll(async () => t.close());

  it('creates a campaign and returns it in the spec shape, steps in order', async () => {
    const response = await create(
      campaignInput({
        icon_url: 'https://shop.example/icon.png',
        utm_params: { utm_source: 'herald', utm_medium: 'push', utm_campaign: '' },
        // Out of order in the body: stored and shown by sequence_order.
        steps: [
          step(2, 120, { image_url: 'https://shop.example/big.png', actions: [{ title: 'Shop now', url: 'https://shop.example/shop' }] }),
          step(1, 0, { icon_url: 'https://shop.example/step-icon.png' }),
        ],
      }),
    );
    expect(response.status).toBe(201);
    const campaign = response.body.data.campaign;
    expect(campaign).toMatchObject({
      site_id: site.id,
      name: 'Welcome series',
      is_active: true,
      icon_url: 'https://shop.example/icon.png',
      utm_params: { utm_source: 'herald', utm_medium: 'push', utm_campaign: null },
      segment_id: null,
      steps_count: 2,
      created_at: new Date(clock.now()).toISOString(),
      stats: { enrolled: 0, sent: 0, delivered: 0, clicked: 0, failed: 0, click_rate: 0 },
    });
    expect(campaign.steps.map((s: { sequence_order: number; delay_minutes: number }) => [s.sequence_order, s.delay_minutes])).toEqual([
      [1, 0],
      [2, 120],
    ]);
    // What the owner wrote comes back as written (UTM parameters are added only when sending).
    expect(campaign.steps[0].notification).toEqual({
      title: 'Step 1',
      message: 'Message of step 1',
      destination_url: 'https://shop.example/step-1',
      icon_url: 'https://shop.example/step-icon.png',
      image_url: null,
      actions: [],
    });
    expect(campaign.steps[1].notification).toMatchObject({ image_url: 'https://shop.example/big.png', actions: [{ title: 'Shop now', url: 'https://shop.example/shop' }] });

    const fetched = await t.request('GET', `/api/welcome-campaigns/${campaign.id}`, { token: owner.token });
    expect(fetched.status).toBe(200);
    expect(fetched.body.data.campaign).toEqual(campaign);
    const listed = await list();
    expect(listed.body.data.campaigns.map((c: { id: string }) => c.id)).toContain(campaign.id);

    // The step notifications are sent with the UTM parameters and the campaign icon, and stay out of the notifications list.
    const sent = await t.ctx.db
      .selectFrom('notifications')
      .innerJoin('welcome_campaign_steps', 'welcome_campaign_steps.notification_id', 'notifications.id')
      .select(['notifications.destination_url', 'notifications.icon_url', 'notifications.actions', 'notifications.source', 'notifications.type', 'notifications.status'])
      .where('welcome_campaign_steps.campaign_id', '=', campaign.id)
      .orderBy('welcome_campaign_steps.sequence_order')
      .execute();
    expect(sent).toEqual([
      { destination_url: 'https://shop.example/step-1?utm_source=herald&utm_medium=push', icon_url: 'https://shop.example/step-icon.png', actions: null, source: 'campaign', type: 'ONE_TIME', status: 'scheduled' },
      {
        destination_url: 'https://shop.example/step-2?utm_source=herald&utm_medium=push',
        icon_url: 'https://shop.example/icon.png',
        actions: JSON.stringify([{ title: 'Shop now', url: 'https://shop.example/shop?utm_source=herald&utm_medium=push' }]),
        source: 'campaign',
        type: 'ONE_TIME',
        status: 'scheduled',
      },
    ]);
    const notifications = await t.request('GET', `/api/sites/${site.id}/notifications`, { token: owner.token });
    expect(notifications.body.data.notifications).toEqual([]);
  });

  it('keeps only one campaign active per site: activating one (create or PATCH) deactivates the others', async () => {
    const other = await t.createSite(owner.token, { name: 'Other', url: 'https://other.example' });
    const otherActive = (await create(campaignInput({ name: 'Other site campaign' }), other.id)).body.data.campaign;
    const first = (await create(campaignInput({ name: 'First' }))).body.data.campaign;
    const second = (await create(campaignInput({ name: 'Second' }))).body.data.campaign;
    const inactive = (await create(campaignInput({ name: 'Draft', is_active: false }))).body.data.campaign;
    expect(inactive.is_active).toBe(false);

    const activeNames = async (siteId: string) =>
      (await list(siteId)).body.data.campaigns.filter((c: { is_active: boolean }) => c.is_active).map((c: { name: string }) => c.name);
    expect(await activeNames(site.id)).toEqual(['Second']);

    const toggled = await t.request('PATCH', `/api/welcome-campaigns/${first.id}`, { token: owner.token, body: { is_active: true } });
    expect(toggled.status).toBe(200);
    expect(toggled.body.data.campaign.is_active).toBe(true);
    expect(await activeNames(site.id)).toEqual(['First']);
    // Another site's campaign is not affected.
    expect(await activeNames(other.id)).toEqual(['Other site campaign']);
    expect((await t.request('GET', `/api/welcome-campaigns/${otherActive.id}`, { token: owner.token })).body.data.campaign.is_active).toBe(true);

    const off = await t.request('PATCH', `/api/welcome-campaigns/${first.id}`, { token: owner.token, body: { is_active: false } });
    expect(off.body.data.campaign.is_active).toBe(false);
    expect(await activeNames(site.id)).toEqual([]);
    expect((await t.request('GET', `/api/welcome-campaigns/${second.id}`, { token: owner.token })).body.data.campaign.is_active).toBe(false);

    // The database itself refuses a second active campaign for a site.
    await t.ctx.db.updateTable('welcome_campaigns').set({ is_active: 1 }).where('id', '=', first.id).execute();
    await expect(t.ctx.db.updateTable('welcome_campaigns').set({ is_active: 1 }).where('id', '=', second.id).execute()).rejects.toThrow();
  });

  it('edits name, steps, icon and UTM parameters; the steps shown are the new ones', async () => {
    const campaign = (await create(campaignInput({ name: 'Before', is_active: false }))).body.data.campaign;
    clock.advance(60_000);
    const edited = await t.request('PATCH', `/api/welcome-campaigns/${campaign.id}`, {
      token: owner.token,
      body: { name: 'After', utm_params: { utm_source: 'news', utm_medium: null, utm_campaign: 'spring' }, steps: [step(1, 0, { title: 'Hello again' }), step(2, 30)] },
    });
    expect(edited.status).toBe(200);
    expect(edited.body.data.campaign).toMatchObject({
      id: campaign.id,
      name: 'After',
      is_active: false,
      created_at: campaign.created_at,
      updated_at: new Date(clock.now()).toISOString(),
      utm_params: { utm_source: 'news', utm_medium: null, utm_campaign: 'spring' },
      steps_count: 2,
    });
    expect(edited.body.data.campaign.steps.map((s: { notification: { title: string } }) => s.notification.title)).toEqual(['Hello again', 'Step 2']);
    expect(edited.body.data.campaign.steps[0].id).not.toBe(campaign.steps[0].id);

    // Clearing the UTM parameters (the toggle off) rewrites the sent URLs without them.
    const cleared = await t.request('PATCH', `/api/welcome-campaigns/${campaign.id}`, { token: owner.token, body: { utm_params: null } });
    expect(cleared.body.data.campaign.utm_params).toBeNull();
    const current = await t.ctx.db
      .selectFrom('welcome_campaign_steps')
      .innerJoin('welcome_campaigns', 'welcome_campaigns.id', 'welcome_campaign_steps.campaign_id')
      .innerJoin('notifications', 'notifications.id', 'welcome_campaign_steps.notification_id')
      .select(['notifications.title', 'notifications.destination_url'])
      .where('welcome_campaign_steps.campaign_id', '=', campaign.id)
      .whereRef('welcome_campaign_steps.version', '=', 'welcome_campaigns.steps_version')
      .orderBy('welcome_campaign_steps.sequence_order')
      .execute();
    expect(current).toEqual([
      { title: 'Hello again', destination_url: 'https://shop.example/step-1' },
      { title: 'Step 2', destination_url: 'https://shop.example/step-2' },
    ]);
    // A toggle, a rename, or a save of the same steps writes no new version of the steps.
    const before = await t.ctx.db.selectFrom('welcome_campaign_steps').select('id').where('campaign_id', '=', campaign.id).execute();
    await t.request('PATCH', `/api/welcome-campaigns/${campaign.id}`, { token: owner.token, body: { is_active: true } });
    await t.request('PATCH', `/api/welcome-campaigns/${campaign.id}`, { token: owner.token, body: { is_active: false, name: 'Renamed' } });
    const resaved = await t.request('PATCH', `/api/welcome-campaigns/${campaign.id}`, {
      token: owner.token,
      body: { name: 'Renamed again', icon_url: null, utm_params: null, steps: [step(2, 30), step(1, 0, { title: 'Hello again' })] },
    });
    expect(resaved.body.data.campaign.steps.map((s: { id: string }) => s.id)).toEqual(cleared.body.data.campaign.steps.map((s: { id: string }) => s.id));
    expect(await t.ctx.db.selectFrom('welcome_campaign_steps').select('id').where('campaign_id', '=', campaign.id).execute()).toHaveLength(before.length);
    // A changed delay is a new version.
    const delayed = await t.request('PATCH', `/api/welcome-campaigns/${campaign.id}`, { token: owner.token, body: { steps: [step(1, 0, { title: 'Hello again' }), step(2, 45)] } });
    expect(delayed.body.data.campaign.steps[1]).toMatchObject({ delay_minutes: 45 });
    expect(await t.ctx.db.selectFrom('welcome_campaign_steps').select('id').where('campaign_id', '=', campaign.id).execute()).toHaveLength(before.length + 2);
  });

  it('deletes a campaign with every version of its steps and their notifications', async () => {
    const campaign = (await create(campaignInput({ name: 'Doomed', is_active: false }))).body.data.campaign;
    await t.request('PATCH', `/api/welcome-campaigns/${campaign.id}`, { token: owner.token, body: { steps: [step(1, 0)] } });
    const notificationIds = (await t.ctx.db.selectFrom('welcome_campaign_steps').select('notification_id').where('campaign_id', '=', campaign.id).execute()).map(
      (r) => r.notification_id,
    );
    expect(notificationIds).toHaveLength(4);

    const deleted = await t.request('DELETE', `/api/welcome-campaigns/${campaign.id}`, { token: owner.token });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, data: { deleted: true } });
    expect((await t.request('GET', `/api/welcome-campaigns/${campaign.id}`, { token: owner.token })).status).toBe(404);
    expect(await t.ctx.db.selectFrom('notifications').select('id').where('id', 'in', notificationIds).execute()).toEqual([]);
    expect(await t.ctx.db.selectFrom('welcome_campaign_steps').select('id').where('campaign_id', '=', campaign.id).execute()).toEqual([]);
    expect((await t.request('DELETE', `/api/welcome-campaigns/${campaign.id}`, { token: owner.token })).status).toBe(404);
  });

  describe('validation (spec §5)', () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['no name', { name: undefined }, /name: Campaign name is required/],
      ['a blank name', { name: '   ' }, /name: Campaign name is required/],
      ['a step title over 50 characters', { steps: [step(1, 0, { title: 'x'.repeat(51) })] }, /steps\.0\.notification\.title: Title must be at most 50 characters/],
      ['a step message over 140 characters', { steps: [step(1, 0, { message: 'x'.repeat(141) })] }, /steps\.0\.notification\.message: Message must be at most 140 characters/],
      ['a negative delay', { steps: [step(1, 0), step(2, -5)] }, /steps\.1\.delay_minutes: Delay must be 0 or more/],
      ['a fractional delay', { steps: [step(1, 0), step(2, 1.5)] }, /steps\.1\.delay_minutes: Delay must be a whole number of minutes/],
      ['a delayed first step', { steps: [step(1, 10)] }, /steps\.0\.delay_minutes: The first notification is sent immediately/],
      ['no steps', { steps: [] }, /steps: Add at least one notification/],
      ['21 steps', { steps: Array.from({ length: 21 }, (_, i) => step(i + 1, i ? 10 : 0)) }, /At most 20|at most 20 notifications/],
      ['steps numbered with a gap', { steps: [step(1, 0), step(3, 10)] }, /Steps must be numbered 1 to 2, each once/],
      ['a javascript: destination', { steps: [step(1, 0, { destination_url: 'javascript:alert(1)' })] }, /destination_url: Must be a complete URL/],
      ['three action buttons', { steps: [step(1, 0, { actions: [1, 2, 3].map((n) => ({ title: `B${n}`, url: 'https://shop.example/' })) })] }, /At most 2 action buttons/],
      ['a UTM value over 100 characters', { utm_params: { utm_source: 'x'.repeat(101) } }, /UTM values must be at most 100 characters/],
      ['an unknown segment', { segment_id: 'segment-of-nobody' }, /Segment not found/],
    ];
    it.each(cases)('refuses %s with a 400 and a clear message, storing nothing', async (_label, overrides, message) => {
      const before = await t.ctx.db.selectFrom('welcome_campaigns').select('id').execute();
      const response = await create(campaignInput(overrides));
      expect(response.status).toBe(400);
      expect(response.body.success).toBe(false);
      expect(response.body.error.message).toMatch(message);
      expect(await t.ctx.db.selectFrom('welcome_campaigns').select('id').execute()).toHaveLength(before.length);
    });

    it('accepts 20 steps with the largest delay, and refuses a PATCH that would move a campaign or carries unknown fields', async () => {
      const twenty = await create(campaignInput({ is_active: false, steps: Array.from({ length: 20 }, (_, i) => step(i + 1, i ? 525_600 : 0)) }));
      expect(twenty.status).toBe(201);
      expect(twenty.body.data.campaign.steps_count).toBe(20);
      const other = await t.createSite(owner.token, { name: 'Elsewhere', url: 'https://elsewhere.example' });
      const moved = await t.request('PATCH', `/api/welcome-campaigns/${twenty.body.data.campaign.id}`, { token: owner.token, body: { site_id: other.id } });
      expect(moved.status).toBe(400);
      const invalid = await t.request('PATCH', `/api/welcome-campaigns/${twenty.body.data.campaign.id}`, { token: owner.token, body: { steps: [step(1, 0, { title: '' })] } });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error.message).toMatch(/Title is required/);
      expect((await t.request('GET', `/api/welcome-campaigns/${twenty.body.data.campaign.id}`, { token: owner.token })).body.data.campaign.site_id).toBe(site.id);
    });

    it('needs a signed-in user', async () => {
      expect((await t.request('GET', `/api/sites/${site.id}/welcome-campaigns`)).status).toBe(401);
      expect((await t.request('POST', `/api/sites/${site.id}/welcome-campaigns`, { body: campaignInput() })).status).toBe(401);
    });
  });

  it("answers 404 to every route for another user's site or campaign, and changes nothing", async () => {
    const intruder = await t.createUser();
    const intruderSite = await t.createSite(intruder.token, { name: 'Intruder', url: 'https://intruder.example' });
    const victimCampaign = (await create(campaignInput({ name: 'Victim' }))).body.data.campaign;
    const intruderCampaign = (await create(campaignInput({ name: 'Intruder own' }), intruderSite.id, intruder.token)).body.data.campaign;

    const snapshot = async () => ({
      campaigns: await t.ctx.db.selectFrom('welcome_campaigns').selectAll().orderBy('id').execute(),
      steps: await t.ctx.db.selectFrom('welcome_campaign_steps').selectAll().orderBy('id').execute(),
      notifications: await t.ctx.db.selectFrom('notifications').select(['id', 'title', 'updated_at']).orderBy('id').execute(),
    });
    const before = await snapshot();

    const attempts = [
      t.request('GET', `/api/sites/${site.id}/welcome-campaigns`, { token: intruder.token }),
      t.request('POST', `/api/sites/${site.id}/welcome-campaigns`, { token: intruder.token, body: campaignInput({ name: 'Planted' }) }),
      t.request('GET', `/api/welcome-campaigns/${victimCampaign.id}`, { token: intruder.token }),
      t.request('PATCH', `/api/welcome-campaigns/${victimCampaign.id}`, { token: intruder.token, body: { is_active: false } }),
      t.request('PATCH', `/api/welcome-campaigns/${victimCampaign.id}`, { token: intruder.token, body: { name: 'Hijacked', steps: [step(1, 0)] } }),
      t.request('DELETE', `/api/welcome-campaigns/${victimCampaign.id}`, { token: intruder.token }),
      // Unknown ids look the same as another user's.
      t.request('GET', `/api/welcome-campaigns/does-not-exist`, { token: intruder.token }),
      t.request('GET', `/api/sites/does-not-exist/welcome-campaigns`, { token: intruder.token }),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.status).toBe(404);
      expect(response.body.success).toBe(false);
    }
    expect(await snapshot()).toEqual(before);

    // And the other way round: the owner cannot touch the intruder's campaign either.
    expect((await t.request('GET', `/api/welcome-campaigns/${intruderCampaign.id}`, { token: owner.token })).status).toBe(404);
    expect((await t.request('DELETE', `/api/welcome-campaigns/${intruderCampaign.id}`, { token: owner.token })).status).toBe(404);
    // Activating a campaign of one user never deactivates another user's.
    expect((await t.request('GET', `/api/welcome-campaigns/${intruderCampaign.id}`, { token: intruder.token })).body.data.campaign.is_active).toBe(true);
  });
});
