// docs/delivery.md, "When Redis loses the queue": a worker still holds the
// jobs it took before Redis restarted empty, and BullMQ tracks (and renews the
// lock of) a worker's jobs by id. A job queued after the restart must not get
// the id of one held from before, or the old one ending stops the new one's
// lock renewal.
import { Queue } from 'bullmq';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BullmqQueue } from '../../src/jobs/bullmq-queue';
import { defineJob } from '../../src/jobs/queue';
import { startRedis, type RedisServer } from '../support/redis-server';
import { waitFor } from '../support/test-app';

const probeJob = defineJob('queue-loss-probe', z.object({ name: z.string() }));

describe('jobs queued after Redis lost its data', () => {
  let redis: RedisServer;
  let queue: BullmqQueue;
  let inspect: Queue;
  const lines: string[] = [];
  const started = new Map<string, number>();
  const releases = new Map<string, () => void>();

  beforeAll(async () => {
    redis = await startRedis();
    queue = new BullmqQueue(redis.url, pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) }));
    queue.work(
      probeJob,
      async ({ name }) => {
        started.set(name, (started.get(name) ?? 0) + 1);
        await new Promise<void>((resolve) => releases.set(name, resolve));
      },
      { concurrency: 2 },
    );
    inspect = new Queue(probeJob.name, { connection: { url: redis.url, maxRetriesPerRequest: null }, prefix: 'herald' });
  }, 60_000);
  afterAll(async () => {
    for (const release of releases.values()) release();
    await inspect?.close();
    await queue?.close();
    await redis?.stop();
  }, 60_000);

  const activeIds = async () => (await inspect.getActive()).map((job) => job.id);

  it('get ids of their own while a worker still holds a job from before; both end, each worked once', async () => {
    await queue.enqueue(probeJob, { name: 'before' });
    await waitFor(() => started.has('before'), { timeoutMs: 30_000 });
    const [before] = await activeIds();
    expect(before).toBeDefined();

    await redis.restart();
    await queue.enqueue(probeJob, { name: 'after' });
    // The same worker takes it while it still works the job from before.
    await waitFor(() => started.has('after'), { timeoutMs: 30_000 });
    const after = await activeIds();
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before);

    // The job from before ends: Redis no longer knows it (refused, logged); the new one is untouched.
    releases.get('before')!();
    await waitFor(() => lines.some((line) => line.includes(`job ${before}`)), { timeoutMs: 30_000 });
    expect(await activeIds()).toEqual(after);
    releases.get('after')!();
    await waitFor(async () => (await inspect.getJobCounts('active', 'waiting', 'delayed', 'failed', 'completed')).active === 0, { timeoutMs: 30_000 });
    expect(await inspect.getJobCounts('waiting', 'delayed', 'failed')).toEqual({ waiting: 0, delayed: 0, failed: 0 });
    expect(Object.fromEntries(started)).toEqual({ before: 1, after: 1 });
  }, 120_000);
});
