import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptDelivery, webhooksDueWork, WEBHOOK_ATTEMPT_LEASE_MS } from '../../src/features/webhooks/deliver';
import { newOutboxRow } from '../../src/features/webhooks/events';
import type { JobQueue } from '../../src/jobs/queue';
import { ManualClock } from '../../src/platform/clock';
import type { OutboundHttp } from '../../src/platform/outbound-http';
import { createTestApp, type TestApp } from '../support/test-app';

// A webhook delivery is claimed for a minute and its attempt queued
// (docs/delivery.md, "Webhooks"). Workers that fall behind let a job wait
// past its claim; the scheduler then claims the delivery again and queues
// another job. Only the job of the claim in force may POST.
describe('webhook attempts and their claims', () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
  let t: TestApp;
  let siteId: string;
  beforeAll(async () => {
    t = await createTestApp({ clock });
    const owner = await t.createUser();
    siteId = (await t.createSite(owner.token)).id;
  });
  afterAll(async () => t.close());

  // Before, both jobs POSTed: the second a second after a failure that asked for 30 s.
  it('a job that waited past its claim does nothing: the delivery is POSTed once, and its backoff stands', async () => {
    const webhookId = crypto.randomUUID();
    await t.ctx.db.insertInto('webhooks').values({ id: webhookId, site_id: siteId, url: 'https://hooks.example/in', events: '["subscriber.created"]', secret: 'whsec_dGVzdA==', clicks_next_at: null, created_at: clock.now() }).execute();
    const row = newOutboxRow(webhookId, 'subscriber.created', clock.now(), { site_id: siteId });
    await t.ctx.db.insertInto('webhook_deliveries').values(row).execute();

    // A queue whose workers are behind: jobs wait, nothing runs until the test says so.
    const jobs: Array<{ deliveryId: string; claimedUntil?: number }> = [];
    const queue = { enqueueMany: async (_job: unknown, payloads: typeof jobs) => void jobs.push(...payloads) } as unknown as JobQueue;
    const source = webhooksDueWork(t.ctx, queue);
    await source.runDue(clock.now());
    clock.advance(WEBHOOK_ATTEMPT_LEASE_MS + 1);
    await source.runDue(clock.now());
    expect(jobs.map((job) => job.deliveryId)).toEqual([row.id, row.id]);

    const posts: number[] = [];
    const outbound: OutboundHttp = {
      get: async () => {
        throw new Error('unused');
      },
      post: async () => {
        posts.push(clock.now());
        return { status: 500 } as Awaited<ReturnType<OutboundHttp['post']>>;
      },
    };
    const deps = { db: t.ctx.db, clock, outbound };
    // The first job, whose delivery was claimed again while it waited, does nothing; the second, of the claim in force, fails: the next attempt is due in 30 s.
    expect(await attemptDelivery(deps, jobs[0]!.deliveryId, jobs[0]!.claimedUntil)).toBeUndefined();
    expect((await attemptDelivery(deps, jobs[1]!.deliveryId, jobs[1]!.claimedUntil))?.statusCode).toBe(500);
    clock.advance(1_000);
    // Run again a second later (a job delivered twice by the queue), either does nothing.
    for (const job of jobs) expect(await attemptDelivery(deps, job.deliveryId, job.claimedUntil)).toBeUndefined();
    const attempts = await t.ctx.db.selectFrom('webhook_attempts').select(['attempt', 'attempted_at']).where('delivery_id', '=', row.id).orderBy('attempt').execute();
    expect({ posts: posts.length, attempts: attempts.length }).toEqual({ posts: 1, attempts: 1 });
  });
});
