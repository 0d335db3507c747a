import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateVapidKeys } from '../src/delivery/vapid-keys';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from './support/delivery-harness';
import { waitFor } from './support/test-app';
// The report is RFC 4180 CSV: read it with the import's own parser.
import { csvCells } from '../src/features/subscriber-imports/import-file';

// Issue 11: one outcome model, everywhere. The local push service accepts some
// pushes, answers 410, 429, 500, "UNREGISTERED" and a VAPID key mismatch for
// others, and a third browser's push service cannot be reached at all; one
// subscriber leaves while its push waits for a retry. Every count, status and
// reason is read back through the API the dashboard uses.

describe('send outcomes: a mix of answers, counted and explained', () => {
  let h: DeliveryHarness;
  beforeAll(async () => {
    h = await createDeliveryHarness({ env: { DELIVERY_MAX_ATTEMPTS: '3', PUSH_TIMEOUT_MS: '1000' } });
  });
  afterAll(async () => h?.close());

  const api = (method: string, url: string, body?: unknown) => h.t.request(method, url, { token: h.owner.token, ...(body === undefined ? {} : { body }) });

  it('counts accepted, failed by reason and push service, expired and skipped; finishes completed_with_errors', async () => {
    const accepted = [await h.subscribe(), await h.subscribe(), await h.subscribe()];
    const gone = [await h.subscribe(), await h.subscribe()];
    const throttled = await h.subscribe();
    const broken = [await h.subscribe(), await h.subscribe()];
    const unreachable = [await h.subscribe({ unreachable: true }), await h.subscribe({ unreachable: true })];
    const unregistered = await h.subscribe();
    const otherKey = await h.subscribe({ applicationServerKey: generateVapidKeys().publicKey });
    const leaving = await h.subscribe();
    for (const g of gone) h.push.setAnswer({ status: 410 }, g.subscription.id);
    h.push.setAnswer({ status: 429, retryAfter: 0 }, throttled.subscription.id);
    for (const b of broken) h.push.setAnswer({ status: 500, body: 'internal error' }, b.subscription.id);
    h.push.setAnswer({ status: 400, body: '{"error":{"code":400,"status":"INVALID_ARGUMENT","details":[{"errorCode":"UNREGISTERED"}]}}' }, unregistered.subscription.id);
    // The subscriber who leaves: its first push waits two seconds for a retry, and it unsubscribes meanwhile.
    h.push.scriptAnswers([{ status: 500, retryAfter: 2, body: 'try again later' }], leaving.subscription.id);

    const created = await api('POST', `/api/sites/${h.site.id}/notifications`, notificationInput());
    const id = created.body.data.notification.id;
    expect((await api('POST', `/api/notifications/${id}/send`)).status).toBe(200);

    // Live while retrying: the leaving subscriber's delivery waits, with its reason, attempt 1 of 3 and the time of the next try.
    const live = await waitFor(
      async () => {
        const performance = (await api('GET', `/api/notifications/${id}/performance`)).body.data;
        return performance.retrying.find((group: any) => group.reason === 'server_error' && group.count === 1 && group.sample_error === '500 try again later') ? performance : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    expect(live.status).toBe('sending');
    const waiting = live.retrying.find((group: any) => group.reason === 'server_error');
    expect(waiting).toMatchObject({ push_service: 'other', attempt: 1, max_attempts: 3 });
    expect(Date.parse(waiting.next_attempt_at)).toBeGreaterThan(Date.now() + 500);
    expect((await api('DELETE', `/api/subscribers/${leaving.subscriberId}`)).status).toBe(200);

    const done = await h.waitForStatus(id, ['completed', 'completed_with_errors', 'failed'], 30_000);
    expect(done.status).toBe('completed_with_errors');
    const counts = { targeted: 13, sent: 3, failed: 7, expired: 2, skipped: 1, pending: 0, delivered: 0, clicked: 0 };
    expect(done.counts).toEqual(counts);
    // The spec-era stats stay, now with failed excluding expired.
    expect(done.stats).toEqual({ total: 13, sent: 3, delivered: 0, clicked: 0, failed: 7 });
    expect(done.sent_at).not.toBeNull();
    expect(done.last_error).toBe('9 of 13 not accepted: 2 expired (other), 2 server_error (other), 2 unreachable (other), 1 invalid_subscription (other), 1 rate_limited (other), 1 rejected (other)');

    const performance = (await api('GET', `/api/notifications/${id}/performance`)).body.data;
    expect(performance).toMatchObject({ status: 'completed_with_errors', counts, total: 13, sent: 3, failed: 7, failure_rate: 53.85, reach_rate: 0, retrying: [] });
    const failures = Object.fromEntries(performance.failures.map((group: any) => [group.reason, group]));
    expect(performance.failures.map((group: any) => [group.reason, group.push_service, group.count])).toEqual([
      ['server_error', 'other', 2],
      ['unreachable', 'other', 2],
      ['invalid_subscription', 'other', 1],
      ['rate_limited', 'other', 1],
      ['rejected', 'other', 1],
    ]);
    expect(failures.server_error.sample_error).toMatch(/^500 internal error \(gave up after 3 attempts\)$/);
    expect(failures.unreachable.sample_error).toMatch(/ECONNREFUSED.*\(gave up after 3 attempts\)/);
    expect(failures.rate_limited.sample_error).toMatch(/^429.*\(gave up after 3 attempts\)$/);
    expect(failures.invalid_subscription.sample_error).toMatch(/UNREGISTERED/);
    expect(failures.rejected.sample_error).toMatch(/^VAPID key mismatch/);
    expect(performance.runs).toHaveLength(1);
    expect(performance.runs[0]).toMatchObject({ status: 'completed_with_errors', counts });

    // A 429 is an attempt: the throttled subscription was asked three times, then given up.
    expect(h.push.requests.filter((r) => r.subscriptionId === throttled.subscription.id)).toHaveLength(3);

    // 410 and an invalid subscription deactivate; a VAPID mismatch, 5xx, 429 and an unreachable service do not.
    const subscribers = new Map((await h.t.ctx.db.selectFrom('subscribers').select(['id', 'is_active']).execute()).map((s) => [s.id, s.is_active]));
    for (const s of [...gone, unregistered, leaving]) expect(subscribers.get(s.subscriberId), s.subscriberId).toBe(0);
    for (const s of [...accepted, throttled, ...broken, ...unreachable, otherKey]) expect(subscribers.get(s.subscriberId), s.subscriberId).toBe(1);

    // The list: the same counts, and status counts that add up to All.
    const list = (await api('GET', `/api/sites/${h.site.id}/notifications`)).body.data;
    expect(list.notifications.find((n: any) => n.id === id)).toMatchObject({ status: 'completed_with_errors', counts });
    const statuses = ['draft', 'scheduled', 'sending', 'completed', 'completed_with_errors', 'cancelled', 'failed'];
    expect(Object.keys(list.counts).sort()).toEqual([...statuses, 'all'].sort());
    expect(statuses.reduce((sum, status) => sum + list.counts[status], 0)).toBe(list.counts.all);
    expect(list.counts.completed_with_errors).toBe(1);
    const filtered = (await api('GET', `/api/sites/${h.site.id}/notifications?status=completed,completed_with_errors`)).body.data;
    expect(filtered.notifications.map((n: any) => n.id)).toEqual([id]);
    expect((await api('GET', `/api/sites/${h.site.id}/notifications?status=completed,nonsense`)).status).toBe(400);

    // The dashboard: the send with its failures.
    const dashboard = (await api('GET', `/api/sites/${h.site.id}/analytics/dashboard`)).body.data;
    expect(dashboard.recentNotifications[0]).toMatchObject({ id, status: 'completed_with_errors', sent_count: 3, failed_count: 7, counts });

    // Delivery health: by push service, failures by reason, expired, time to accept; churn.
    const health = (await api('GET', `/api/sites/${h.site.id}/analytics/delivery?days=7`)).body.data;
    expect(health.services).toHaveLength(1);
    expect(health.services[0]).toMatchObject({ push_service: 'other', accepted: 3, failed: 7, expired: 2, median_accept: { within_ms: expect.any(Number) } });
    expect(health.services[0].failures).toEqual([
      { reason: 'server_error', count: 2 },
      { reason: 'unreachable', count: 2 },
      { reason: 'invalid_subscription', count: 1 },
      { reason: 'rate_limited', count: 1 },
      { reason: 'rejected', count: 1 },
    ]);
    expect(health.services[0].median_accept.within_ms).toBeLessThanOrEqual(30_000);
    expect(health.totals).toMatchObject({ accepted: 3, failed: 7, expired: 2 });
    // 13 subscribed; lost: 2 gone, 1 invalid, 1 unsubscribed by hand.
    expect(health.churn_totals).toEqual({ new: 13, lost: 4, lost_at_push_service: 3 });
    expect(health.churn.at(-1)).toMatchObject({ new: 13, lost: 4, lost_at_push_service: 3 });

    // The CSV report: one line per delivery, the same outcomes.
    const csv = await h.t.request('GET', `/api/notifications/${id}/report.csv`, { token: h.owner.token });
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toBe(`attachment; filename="herald-notification-${id}.csv"`);
    const text = String(csv.body);
    const lines = text.replace(/^\uFEFF/, '').trimEnd().split('\r\n');
    const header = csvCells(lines[0]!);
    expect(header).toEqual(['run_due_at', 'subscriber_id', 'browser', 'os', 'country', 'push_service', 'outcome', 'reason', 'error', 'attempts', 'next_attempt_at', 'sent_at', 'delivered_at', 'clicked_at', 'deliveries', 'delivered', 'clicked']);
    const rows = lines.slice(1).map(csvCells);
    expect(rows).toHaveLength(13);
    const outcomeOf = (row: string[]) => row[header.indexOf('outcome')]!;
    const tally = (outcome: string) => rows.filter((row) => outcomeOf(row) === outcome).length;
    expect({ sent: tally('sent'), failed: tally('failed'), expired: tally('expired'), skipped: tally('skipped'), pending: tally('pending') }).toEqual({ sent: 3, failed: 7, expired: 2, skipped: 1, pending: 0 });
    const reasons = rows.filter((row) => outcomeOf(row) === 'failed').map((row) => row[header.indexOf('reason')]).sort();
    expect(reasons).toEqual(['invalid_subscription', 'rate_limited', 'rejected', 'server_error', 'server_error', 'unreachable', 'unreachable']);
    expect(rows.find((row) => row[1] === leaving.subscriberId)).toMatchObject({ 6: 'skipped', 7: 'inactive' });
  }, 90_000);

  it('a send no push service accepted anything of is failed, never "sent", with its reasons', async () => {
    const fresh = await createDeliveryHarness({ env: { DELIVERY_MAX_ATTEMPTS: '2' } });
    try {
      await fresh.subscribe();
      await fresh.subscribe();
      await fresh.subscribe({ unreachable: true });
      fresh.push.setAnswer({ status: 403, body: '{"reason":"BadJwtToken"}' });
      const created = await fresh.t.request('POST', `/api/sites/${fresh.site.id}/notifications`, { token: fresh.owner.token, body: notificationInput() });
      const id = created.body.data.notification.id;
      const sending = await fresh.t.request('POST', `/api/notifications/${id}/send`, { token: fresh.owner.token });
      // "Sent <date>" only once something was accepted.
      expect(sending.body.data.notification).toMatchObject({ status: 'sending', sent_at: null });
      const failed = await fresh.waitForStatus(id, ['completed', 'completed_with_errors', 'failed'], 30_000);
      expect(failed).toMatchObject({ status: 'failed', sent_at: null, counts: { targeted: 3, sent: 0, failed: 3, expired: 0, skipped: 0, pending: 0, delivered: 0, clicked: 0 } });
      expect(failed.last_error).toBe('3 of 3 not accepted: 2 rejected (other), 1 unreachable (other)');
      const performance = (await fresh.t.request('GET', `/api/notifications/${id}/performance`, { token: fresh.owner.token })).body.data;
      expect(performance.failures.map((g: any) => [g.reason, g.count])).toEqual([
        ['rejected', 2],
        ['unreachable', 1],
      ]);
      expect(performance.failures[0].sample_error).toBe('VAPID rejected: 403 {"reason":"BadJwtToken"}');
      // Failed sends are on the dashboard too, with their failures.
      const dashboard = (await fresh.t.request('GET', `/api/sites/${fresh.site.id}/analytics/dashboard`, { token: fresh.owner.token })).body.data;
      expect(dashboard.recentNotifications).toEqual([expect.objectContaining({ id, status: 'failed', sent_at: null, finished_at: expect.any(String), failed_count: 3, sent_count: 0 })]);

      // Retry sends the failed part again; the failure groups no longer count what is retried.
      fresh.push.setAnswer({ status: 201 });
      expect((await fresh.t.request('POST', `/api/notifications/${id}/retry`, { token: fresh.owner.token })).status).toBe(200);
      const retried = await fresh.waitForStatus(id, ['completed', 'completed_with_errors', 'failed'], 30_000);
      expect(retried.status).toBe('completed_with_errors');
      expect(retried.counts).toMatchObject({ targeted: 3, sent: 2, failed: 1 });
      const after = (await fresh.t.request('GET', `/api/notifications/${id}/performance`, { token: fresh.owner.token })).body.data;
      expect(after.failures.map((g: any) => [g.reason, g.count])).toEqual([['unreachable', 1]]);
    } finally {
      await fresh.close();
    }
  }, 60_000);

  it('reports a push service that cannot be reached within seconds, while the send is still retrying', async () => {
    const slow = await createDeliveryHarness({ env: { DELIVERY_MAX_ATTEMPTS: '5', DELIVERY_RETRY_BASE_MS: '60000' } });
    try {
      for (let i = 0; i < 4; i++) await slow.subscribe({ unreachable: true });
      const created = await slow.t.request('POST', `/api/sites/${slow.site.id}/notifications`, { token: slow.owner.token, body: notificationInput() });
      const id = created.body.data.notification.id;
      const started = Date.now();
      await slow.t.request('POST', `/api/notifications/${id}/send`, { token: slow.owner.token });
      const live = await waitFor(
        async () => {
          const data = (await slow.t.request('GET', `/api/notifications/${id}/performance`, { token: slow.owner.token })).body.data;
          // Results are recorded in groups: wait for all four.
          return data.retrying[0]?.count === 4 ? data : undefined;
        },
        { timeoutMs: 5_000, intervalMs: 25 },
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(live.status).toBe('sending');
      expect(live.retrying).toEqual([
        {
          reason: 'unreachable',
          push_service: 'other',
          count: 4,
          attempt: 1,
          max_attempts: 5,
          next_attempt_at: expect.any(String),
          sample_error: expect.stringContaining('ECONNREFUSED'),
        },
      ]);
      expect(live.counts).toMatchObject({ targeted: 4, pending: 4, failed: 0 });
    } finally {
      await slow.close();
    }
  }, 30_000);
});
