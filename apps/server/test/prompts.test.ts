import crypto from 'node:crypto';
import { DEFAULT_PROMPT_SETTINGS } from '@herald/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// Issue 12 §4: the opt-in prompt a site's owner chooses (Settings →
// Installation), served to the SDK, and each prompt type's conversion
// (subscribed ÷ shown, both reported by the SDK) in the subscriber analytics.

function subscription() {
  const ecdh = crypto.createECDH('prime256v1');
  return {
    endpoint: `https://fcm.googleapis.com/fcm/send/${crypto.randomBytes(12).toString('base64url')}:APA91b${crypto.randomBytes(60).toString('base64url')}`,
    keys: { p256dh: ecdh.generateKeys().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') },
  };
}

describe('opt-in prompt settings and conversions', () => {
  let t: TestApp;
  let owner: TestUser;
  let site: { id: string };
  const clock = new ManualClock(Date.UTC(2026, 4, 12, 9, 15));
  let address = 0;

  const publicCall = (method: 'GET' | 'POST', url: string, body?: unknown) =>
    t.request(method, url, { body, headers: { origin: 'https://shop.example' }, remoteAddress: `192.0.2.${(address = (address % 250) + 1)}` });

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
    site = await t.createSite(owner.token, { url: 'https://shop.example' });
  });

  afterAll(async () => {
    await t.close();
  });

  it('starts with the soft banner at the bottom, 5 s after the first page view, 7 days after "Not now"', async () => {
    const response = await t.request('GET', `/api/sites/${site.id}/prompt-settings`, { token: owner.token });
    expect(response.status).toBe(200);
    expect(response.body.data.prompt).toEqual(DEFAULT_PROMPT_SETTINGS);
    expect(response.body.data.prompt).toMatchObject({ type: 'slide', delaySeconds: 5, pageViews: 1, dismissDays: 7, acceptLabel: 'Allow', laterLabel: 'Not now', position: 'bottom' });
  });

  it('saves the owner’s choice (fields left out take their defaults) and serves it to the SDK, CORS open, cacheable for a minute', async () => {
    const saved = await t.request('PUT', `/api/sites/${site.id}/prompt-settings`, {
      token: owner.token,
      body: { type: 'bell', delaySeconds: 12, pageViews: 3, dismissDays: 30, headline: '  Never miss a sale  ', buttonColor: '#AA3300' },
    });
    expect(saved.status).toBe(200);
    const expected = { ...DEFAULT_PROMPT_SETTINGS, type: 'bell', delaySeconds: 12, pageViews: 3, dismissDays: 30, headline: 'Never miss a sale', buttonColor: '#aa3300' };
    expect(saved.body.data.prompt).toEqual(expected);
    expect((await t.request('GET', `/api/sites/${site.id}/prompt-settings`, { token: owner.token })).body.data.prompt).toEqual(expected);

    const served = await publicCall('GET', `/api/public/sites/${site.id}/prompt-settings`);
    expect(served.status).toBe(200);
    expect(served.body.data.prompt).toEqual(expected);
    expect(served.headers['access-control-allow-origin']).toBe('*');
    expect(served.headers['cache-control']).toBe('public, max-age=60');

    // A later PUT replaces the whole object: what it leaves out goes back to the default.
    const replaced = await t.request('PUT', `/api/sites/${site.id}/prompt-settings`, { token: owner.token, body: { type: 'native' } });
    expect(replaced.body.data.prompt).toEqual({ ...DEFAULT_PROMPT_SETTINGS, type: 'native' });
  });

  it('refuses bad settings with a clear 400, and leaves the stored ones alone', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ type: 'popup' }, /Prompt type must be slide, native or bell/],
      [{ delaySeconds: -1 }, /Delay must be 0 or more/],
      [{ delaySeconds: 1.5 }, /Delay must be a whole number/],
      [{ pageViews: 0 }, /Page views must be 1 or more/],
      [{ dismissDays: 400 }, /Days before asking again must be at most 365/],
      [{ acceptLabel: '   ' }, /Accept button label is required/],
      [{ headline: 'x'.repeat(81) }, /Headline must be at most 80 characters/],
      [{ backgroundColor: 'red' }, /Background colour must be a colour like #1d4ed8/],
      [{ position: 'left' }, /Position must be top or bottom/],
      [{ colour: '#ffffff' }, /colour/],
    ];
    for (const [body, message] of cases) {
      const response = await t.request('PUT', `/api/sites/${site.id}/prompt-settings`, { token: owner.token, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.success).toBe(false);
      expect(response.body.error.message).toMatch(message);
    }
    expect((await t.request('GET', `/api/sites/${site.id}/prompt-settings`, { token: owner.token })).body.data.prompt.type).toBe('native');
  });

  it('answers 404 for another user’s site and for an unknown site on the public route', async () => {
    const intruder = await t.createUser();
    expect((await t.request('GET', `/api/sites/${site.id}/prompt-settings`, { token: intruder.token })).status).toBe(404);
    expect((await t.request('PUT', `/api/sites/${site.id}/prompt-settings`, { token: intruder.token, body: { type: 'slide' } })).status).toBe(404);
    expect((await t.request('GET', `/api/sites/${site.id}/prompt-settings`, { token: owner.token })).body.data.prompt.type).toBe('native');
    expect((await publicCall('GET', '/api/public/sites/no-such-site/prompt-settings')).status).toBe(404);
    expect((await publicCall('POST', '/api/public/sites/no-such-site/prompt-events', { prompt: 'slide', event: 'shown' })).status).toBe(404);
  });

  it('counts prompts shown and the subscriptions they bring, per type, as conversions in the subscriber analytics', async () => {
    const other = await t.createSite(owner.token, { name: 'Conversions', url: 'https://conversions.example' });
    for (let i = 0; i < 3; i++) expect((await publicCall('POST', `/api/public/sites/${other.id}/prompt-events`, { prompt: 'slide', event: 'shown' })).status).toBe(200);
    expect((await publicCall('POST', `/api/public/sites/${other.id}/prompt-events`, { prompt: 'bell', event: 'shown' })).body).toEqual({ success: true, data: { recorded: true } });
    expect((await publicCall('POST', `/api/public/sites/${other.id}/prompt-events`, { prompt: 'popup', event: 'shown' })).status).toBe(400);
    expect((await publicCall('POST', `/api/public/sites/${other.id}/prompt-events`, { prompt: 'slide', event: 'clicked' })).status).toBe(400);

    const visitor = subscription();
    expect((await publicCall('POST', `/api/public/sites/${other.id}/subscribers`, { subscription: visitor, prompt: 'slide' })).status).toBe(201);
    // The same browser posting again (the daily refresh) is no new conversion.
    expect((await publicCall('POST', `/api/public/sites/${other.id}/subscribers`, { subscription: visitor, prompt: 'slide' })).status).toBe(200);
    // A subscription from the site's own button names no prompt and counts for none.
    expect((await publicCall('POST', `/api/public/sites/${other.id}/subscribers`, { subscription: subscription() })).status).toBe(201);
    // Unsubscribed, then back through the bell: the bell brought a subscriber back.
    await publicCall('POST', `/api/public/sites/${other.id}/subscribers/unsubscribe`, { endpoint: visitor.endpoint });
    expect((await publicCall('POST', `/api/public/sites/${other.id}/subscribers`, { subscription: visitor, prompt: 'bell' })).status).toBe(200);
    expect((await publicCall('POST', `/api/public/sites/${other.id}/subscribers`, { subscription: subscription(), prompt: 'popup' })).status).toBe(400);

    const report = await t.request('GET', `/api/sites/${other.id}/analytics/subscribers`, { token: owner.token });
    expect(report.status).toBe(200);
    expect(report.body.data.prompts).toEqual([
      { prompt: 'slide', shown: 3, subscribed: 1, conversion_rate: 33.33 },
      { prompt: 'native', shown: 0, subscribed: 0, conversion_rate: 0 },
      { prompt: 'bell', shown: 1, subscribed: 1, conversion_rate: 100 },
    ]);
    expect(report.body.data.totals.new).toBe(3);

    // Another site's report sees none of it.
    const elsewhere = await t.request('GET', `/api/sites/${site.id}/analytics/subscribers`, { token: owner.token });
    expect(elsewhere.body.data.prompts.map((p: { shown: number }) => p.shown)).toEqual([0, 0, 0]);
  });
});
