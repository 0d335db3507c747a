import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import type { TestSubscription } from './support/push-service';
import { waitFor } from './support/test-app';

// Issue 10 item 11 (docs/security.md, "Push-service answers across tenants"),
// end to end: two sites send through the same push service. It throttles
// site A's VAPID key (429 with Retry-After); the pause holds A's pushes, and
// only A's: site B's send, through the same origin, completes at once. The
// engine runs in-process with the local push service, which checks each
// push's VAPID signature against the key its subscription was made for.

const RETRY_AFTER_S = 120;

describe('a 429 for one site pauses that site only', () => {
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness();
  });
  afterAll(async () => h?.close());

  const api = (method: string, url: string, body?: unknown) => h.t.request(method, url, { token: h.owner.token, ...(body === undefined ? {} : { body }) });

  async function subscribeTo(site: { id: string; vapid_public_key: string }, index: number): Promise<TestSubscription> {
    const subscription = h.push.createSubscription({ applicationServerKey: site.vapid_public_key });
    const response = await h.t.request('POST', `/api/public/sites/${site.id}/subscribers`, {
      body: { subscription: { endpoint: subscription.endpoint, keys: subscription.keys } },
      remoteAddress: `203.0.113.${index}`,
    });
    expect(response.status).toBe(201);
    return subscription;
  }

  async function send(siteId: string, title: string): Promise<string> {
    const created = await api('POST', `/api/sites/${siteId}/notifications`, notificationInput({ title }));
    expect(created.status).toBe(201);
    const id: string = created.body.data.notification.id;
    expect((await api('POST', `/api/notifications/${id}/send`)).status).toBe(200);
    return id;
  }

  const requestsTo = (subscriptions: TestSubscription[]) => h.push.requests.filter((r) => subscriptions.some((s) => s.id === r.subscriptionId));

  it("throttles site A's VAPID key with Retry-After; site B's send through the same push service completes at once", async () => {
    const siteA = h.site;
    const siteB = await h.t.createSite(h.owner.token, { name: 'Other Shop', url: 'https://other-shop.example' });
    expect(siteB.vapid_public_key).not.toBe(siteA.vapid_public_key);
    const browsersA = [await subscribeTo(siteA, 1), await subscribeTo(siteA, 2), await subscribeTo(siteA, 3)];
    const browsersB = [await subscribeTo(siteB, 11), await subscribeTo(siteB, 12), await subscribeTo(siteB, 13)];
    for (const browser of browsersA) h.push.setAnswer({ status: 429, retryAfter: RETRY_AFTER_S }, browser.id);
    // Every endpoint is on the one push service (one origin).
    expect(new Set([...browsersA, ...browsersB].map((b) => new URL(b.endpoint).origin))).toEqual(new Set([h.push.origin]));

    const firstA = await send(siteA.id, 'A, first');
    await waitFor(() => requestsTo(browsersA).some((r) => r.status === 429), { timeoutMs: 10_000 });
    const throttledAt = Date.now();

    // While A's key is paused: another send of A, and B's send.
    const secondA = await send(siteA.id, 'A, second');
    const sendB = await send(siteB.id, 'B');
    // Far sooner than the Retry-After A was given: B was never held by it.
    const doneB = await h.waitForStatus(sendB, ['completed', 'completed_with_errors', 'failed'], 15_000);
    expect(Date.now() - throttledAt).toBeLessThan(RETRY_AFTER_S * 1000 / 4);
    expect(doneB.status).toBe('completed');
    expect(doneB.counts).toMatchObject({ targeted: 3, sent: 3, failed: 0, pending: 0 });
    // Accepted by the push service (signed with B's key, which B's subscriptions were made for) and decrypted.
    const receivedB = h.push.messages.filter((m) => browsersB.some((b) => b.id === m.subscriptionId));
    expect(receivedB).toHaveLength(3);
    for (const message of receivedB) expect(message.payload).toMatchObject({ title: 'B' });

    // A's second send waits for the end of the pause without asking the push
    // service: A's browsers were asked at most once each, by the first send
    // (those of its pushes still in flight when the 429 came back).
    const waiting = await waitFor(
      async () => {
        const performance = (await api('GET', `/api/notifications/${secondA}/performance`)).body.data;
        return performance.retrying.find((group: any) => group.reason === 'rate_limited' && group.count === 3) ? performance : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 25 },
    );
    const askedA = requestsTo(browsersA);
    expect(askedA.every((r) => r.status === 429)).toBe(true);
    expect(new Set(askedA.map((r) => r.subscriptionId)).size).toBe(askedA.length);
    const group = waiting.retrying.find((g: any) => g.reason === 'rate_limited');
    expect(Date.parse(group.next_attempt_at)).toBeGreaterThan(throttledAt + (RETRY_AFTER_S - 10) * 1000);
    for (const id of [firstA, secondA]) {
      const notification = (await api('GET', `/api/notifications/${id}`)).body.data.notification;
      expect(notification.status, id).toBe('sending');
      expect(notification.counts).toMatchObject({ targeted: 3, sent: 0, failed: 0, pending: 3 });
    }
  });
});
