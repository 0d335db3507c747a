import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { csvCells } from '../src/features/subscriber-imports/import-file';
import { multipart } from './security/support/fixtures';
import { foldBeacons } from './support/beacon-counts';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import { waitFor } from './support/test-app';

// Figures that must agree with each other (docs/product.md, "Analytics";
// docs/storage.md, "Retention"): subscribers moved in by an import joined on
// the import's day, a site whose only push found every subscription gone has
// sent (no sample data), and an erased subscriber's deliveries still count in
// the CSV report and the A/B figures as in the notification's counters.

const at = (iso: string) => Date.parse(iso);

describe('figures that agree with each other', () => {
  const clock = new ManualClock(at('2026-05-04T12:00:00Z'));
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness({ clock });
  });
  afterAll(async () => h?.close());

  const api = (method: string, url: string, body?: unknown) => h.t.request(method, url, { token: h.owner.token, ...(body === undefined ? {} : { body }) });

  async function upload(siteId: string, fileName: string, content: string) {
    const body = multipart([{ name: 'file', filename: fileName, contentType: 'text/csv', data: content }]);
    const response = await h.t.app.inject({ method: 'POST', url: `/api/sites/${siteId}/subscriber-imports`, headers: { 'content-type': body.contentType, authorization: `Bearer ${h.owner.token}` }, payload: body.payload });
    expect(response.statusCode, response.body).toBe(201);
    const id = response.json().data.import.id;
    return waitFor(async () => {
      const r = await api('GET', `/api/subscriber-imports/${id}`);
      return ['done', 'failed'].includes(r.body.data.import.status) ? r.body.data.import : undefined;
    }, { timeoutMs: 20_000 });
  }

  it('an import of 3 subscribers today: the dashboard does not claim they were there when the period began', async () => {
    const site = await h.t.createSite(h.owner.token, { name: 'Import Shop', url: 'https://import.example' });
    const subs = [0, 1, 2].map(() => h.push.createSubscription({ applicationServerKey: site.vapid_public_key }));
    const csv = ['endpoint,p256dh,auth', ...subs.map((s) => `${s.endpoint},${s.keys.p256dh},${s.keys.auth}`)].join('\n') + '\n';
    const done = await upload(site.id, 'import.csv', csv);
    expect(done).toMatchObject({ status: 'done', imported: 3 });

    const dash = (await api('GET', `/api/sites/${site.id}/analytics/dashboard?days=7`)).body.data;
    expect(dash.metrics.totalSubscribers.value).toBe(3);
    // Nobody was a subscriber of this site (created today) when the period began.
    const growth = (await api('GET', `/api/sites/${site.id}/analytics/subscribers`)).body.data;
    const delivery = (await api('GET', `/api/sites/${site.id}/analytics/delivery?days=7`)).body.data;
    const report = {
      totalSubscribers: dash.metrics.totalSubscribers,
      growthTotals: growth.totals,
      activeAtStartOfRange: growth.series[0].active,
      activeToday: growth.series[growth.series.length - 1].active,
      churnNew: delivery.churn_totals.new,
    };
    // The active count rises by 3 today, so "new" today must explain it (or the first day must not already hold them).
    expect(report).toMatchObject({ totalSubscribers: { value: 3, previous: 0, change: null } });
  });

  it('an import today: the subscriber growth report does not show them active on days before the site existed', async () => {
    const site = await h.t.createSite(h.owner.token, { name: 'Import Shop 2', url: 'https://import2.example' });
    const subs = [0, 1].map(() => h.push.createSubscription({ applicationServerKey: site.vapid_public_key }));
    const csv = ['endpoint,p256dh,auth', ...subs.map((s) => `${s.endpoint},${s.keys.p256dh},${s.keys.auth}`)].join('\n') + '\n';
    expect(await upload(site.id, 'import.csv', csv)).toMatchObject({ status: 'done', imported: 2 });
    const growth = (await api('GET', `/api/sites/${site.id}/analytics/subscribers`)).body.data;
    // 29 days before today the site did not exist: nobody was active then, and today's active count
    // must be explained by what the report says was gained.
    expect({ firstDayActive: growth.series[0].active, lastDayActive: growth.series.at(-1).active, new: growth.totals.new }).toEqual({ firstDayActive: 0, lastDayActive: 2, new: 2 });
  });

  it('a site whose only send reached nobody (every subscription expired, 410) has sent: no sample data', async () => {
    const site = await h.t.createSite(h.owner.token, { name: 'Expired Shop', url: 'https://expired.example' });
    const created = h.push.createSubscription({ applicationServerKey: site.vapid_public_key });
    const sub = await h.t.request('POST', `/api/public/sites/${site.id}/subscribers`, { body: { subscription: { endpoint: created.endpoint, keys: created.keys } }, remoteAddress: '203.0.113.250' });
    expect(sub.status).toBe(201);
    h.push.setAnswer({ status: 410 }, created.id);
    const n = await api('POST', `/api/sites/${site.id}/notifications`, notificationInput({ title: 'Into the void' }));
    const id = n.body.data.notification.id;
    expect((await api('POST', `/api/notifications/${id}/send`)).status).toBe(200);
    const done = await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
    expect(done.counts).toMatchObject({ targeted: 1, expired: 1 });
    const dash = (await api('GET', `/api/sites/${site.id}/analytics/dashboard`)).body.data;
    const health = (await api('GET', `/api/sites/${site.id}/analytics/delivery`)).body.data;
    expect(health.totals.expired).toBe(1);
    expect(dash.recentNotifications.map((r: any) => r.id)).toEqual([id]);
    // The dashboard lists the send and the Delivery section counts it, yet the charts would be replaced by sample data.
    expect(dash.hasData).toBe(true);
  });

  it('after a subscriber is erased, the CSV report still adds up to the counts the page shows', async () => {
    const site = await h.t.createSite(h.owner.token, { name: 'Erase Shop', url: 'https://erase.example' });
    const subscribe = async () => {
      const created = h.push.createSubscription({ applicationServerKey: site.vapid_public_key });
      const response = await h.t.request('POST', `/api/public/sites/${site.id}/subscribers`, {
        body: { subscription: { endpoint: created.endpoint, keys: created.keys } },
        remoteAddress: `203.0.113.${Math.floor(Math.random() * 200) + 1}`,
      });
      expect(response.status).toBe(201);
      return { subscriberId: response.body.data.subscriber.id as string, subscription: created };
    };
    const people = [await subscribe(), await subscribe(), await subscribe()];
    const created = await api('POST', `/api/sites/${site.id}/notifications`, notificationInput({ title: 'Erase me' }));
    const id = created.body.data.notification.id;
    expect((await api('POST', `/api/notifications/${id}/send`)).status).toBe(200);
    await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
    const token = (sub: string) => (h.push.messages.find((m) => m.subscriptionId === sub && (m.payload as any).tag === `herald-${id}`)!.payload as any).token;
    for (const p of people) expect((await h.t.request('POST', '/api/public/events', { body: { type: 'clicked', token: token(p.subscription.id) } })).body.data.counted).toBe(true);
    await foldBeacons(h.t.ctx);

    expect((await api('DELETE', `/api/subscribers/${people[0]!.subscriberId}?erase=true`)).status).toBe(200);

    const perf = (await api('GET', `/api/notifications/${id}/performance`)).body.data;
    expect(perf.counts).toMatchObject({ targeted: 3, sent: 3, delivered: 3, clicked: 3 });
    const csv = await api('GET', `/api/notifications/${id}/report.csv`);
    const lines = String(csv.body).replace(/^\uFEFF/, '').trimEnd().split('\r\n');
    const header = csvCells(lines[0]!);
    const rows = lines.slice(1).map(csvCells);
    const sum = (col: string, outcome?: string) =>
      rows.filter((r) => outcome === undefined || r[header.indexOf('outcome')] === outcome).reduce((s, r) => s + Number(r[header.indexOf(col)]), 0);
    expect({ targeted: sum('deliveries'), sent: sum('deliveries', 'sent'), delivered: sum('delivered'), clicked: sum('clicked') }).toEqual({ targeted: 3, sent: 3, delivered: 3, clicked: 3 });
  });

  it('after a subscriber is erased, the A/B report\'s per-variant figures still add up to the notification\'s counts', async () => {
    const site = await h.t.createSite(h.owner.token, { name: 'AB Erase Shop', url: 'https://ab-erase.example' });
    const people: Array<{ subscriberId: string; subscription: { id: string } }> = [];
    for (let i = 0; i < 4; i++) {
      const created = h.push.createSubscription({ applicationServerKey: site.vapid_public_key });
      const r = await h.t.request('POST', `/api/public/sites/${site.id}/subscribers`, { body: { subscription: { endpoint: created.endpoint, keys: created.keys } }, remoteAddress: `203.0.113.${10 + i}` });
      expect(r.status).toBe(201);
      people.push({ subscriberId: r.body.data.subscriber.id, subscription: created });
    }
    const variant = (l: string) => ({ title: `Sale ${l}`, message: `Offer ${l}`, destination_url: `https://ab-erase.example/${l}`, image_url: null });
    const created = await api('POST', `/api/sites/${site.id}/notifications`, notificationInput({ title: 'Sale A', variants: [variant('A'), variant('B')], ab_test: null }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.notification.id;
    expect((await api('POST', `/api/notifications/${id}/send`)).status).toBe(200);
    await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed']);
    const token = (sub: string) => (h.push.messages.find((m) => m.subscriptionId === sub && (m.payload as any).tag === `herald-${id}`)!.payload as any).token;
    for (const p of people) expect((await h.t.request('POST', '/api/public/events', { body: { type: 'clicked', token: token(p.subscription.id) } })).body.data.counted).toBe(true);
    await foldBeacons(h.t.ctx);
    expect((await api('DELETE', `/api/subscribers/${people[0]!.subscriberId}?erase=true`)).status).toBe(200);

    const perf = (await api('GET', `/api/notifications/${id}/performance`)).body.data;
    expect(perf.counts).toMatchObject({ targeted: 4, sent: 4, delivered: 4, clicked: 4 });
    const sum = (k: string) => perf.variants.reduce((s: number, v: any) => s + v[k], 0);
    expect({ reach: sum('reach'), delivered: sum('delivered'), clicked: sum('clicked') }).toEqual({ reach: 4, delivered: 4, clicked: 4 });
  });
});
