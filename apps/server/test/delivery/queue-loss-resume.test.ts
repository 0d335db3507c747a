// docs/delivery.md, "When Redis loses the queue": once the queue says it lost
// its jobs, the scheduler re-enqueues every run still sending, whatever
// happens to the run's lease meanwhile and even if the first re-enqueue fails.
// The queue here only records what is enqueued (a job in it is lost until the
// test works it), so each step of the sequence is the test's to order.
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context';
import type { DeliveryDeps } from '../../src/delivery/engine-deps';
import { fanOutRun, fanOutRunJob } from '../../src/delivery/fan-out';
import { extendRunLease } from '../../src/delivery/runs';
import { sendBatch, sendBatchJob } from '../../src/delivery/send-batch';
import type { JobDefinition, JobQueue } from '../../src/jobs/queue';
import { Scheduler } from '../../src/jobs/scheduler';
import { ManualClock } from '../../src/platform/clock';
import { createPushClient } from '../../src/roles';
import { createDeliveryHarness, notificationInput, type DeliveryHarness } from '../support/delivery-harness';
import { runSeqOf } from '../../src/db/run-seq';

interface QueuedJob {
  name: string;
  payload: unknown;
}

/** A queue whose jobs stay where the test can see them; it reports a loss when told to, and can refuse enqueues. */
class RecordingQueue implements JobQueue {
  readonly kind = 'bullmq' as const;
  jobs: QueuedJob[] = [];
  lost = false;
  /** Enqueues that throw next, as when Redis went away again. */
  failNextEnqueues = 0;

  async enqueue<Payload>(job: JobDefinition<Payload>, payload: Payload): Promise<void> {
    if (this.failNextEnqueues > 0) {
      this.failNextEnqueues--;
      throw new Error('Connection is closed.');
    }
    this.jobs.push({ name: job.name, payload: job.payload.parse(payload) });
  }
  async enqueueMany<Payload>(job: JobDefinition<Payload>, payloads: Payload[]): Promise<void> {
    for (const payload of payloads) await this.enqueue(job, payload);
  }
  async backlog(job: JobDefinition<unknown>): Promise<number> {
    return this.jobs.filter((j) => j.name === job.name).length;
  }
  work(): void {}
  async jobCounts(): Promise<Record<string, Record<string, number>>> {
    return {};
  }
  async ping(): Promise<void> {}
  consuming(): boolean {
    return true;
  }
  /** Like the BullMQ marker: true once per loss. */
  async lostJobs(): Promise<boolean> {
    const lost = this.lost;
    this.lost = false;
    return lost;
  }
  async close(): Promise<void> {}
  /** Empties the queue, as Redis restarting without persistence does. */
  loseEverything(): void {
    this.jobs = [];
    this.lost = true;
  }
  take(): QueuedJob[] {
    const taken = this.jobs;
    this.jobs = [];
    return taken;
  }
}

/**
 * Calls `then` once, right after the first read that returns the run's lease,
 * before its result reaches the caller: what a worker finishing a batch does
 * at the moment the scheduler reads the runs to resume.
 */
function afterLeaseRead(runId: string, then: () => Promise<void>): KyselyPlugin {
  let fired = false;
  return {
    transformQuery: (args: PluginTransformQueryArgs): RootOperationNode => args.node,
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (!fired && args.result.rows.some((row) => row.id === runId)) {
        fired = true;
        await then();
      }
      return args.result;
    },
  };
}

describe('the scheduler resumes every sending run after the queue lost its jobs', () => {
  const clock = new ManualClock(Date.UTC(2026, 6, 1, 9, 0));
  let h: DeliveryHarness;
  let ctx: AppContext;
  let deps: DeliveryDeps;
  let queue: RecordingQueue;
  const SUBSCRIBERS = 6;

  beforeAll(async () => {
    // No engine: the test decides when each job is worked.
    h = await createDeliveryHarness({ clock, engine: false });
    ctx = h.t.ctx;
    queue = new RecordingQueue();
    deps = { ...ctx, queue, pushClient: createPushClient(h.t.config, ctx.metrics) };
    for (let i = 0; i < SUBSCRIBERS; i++) await h.subscribe();
  }, 60_000);
  afterAll(async () => {
    await deps?.pushClient.close();
    await h?.close();
  });

  /** A send whose run is claimed and fanned out, with all its batches queued, then lost with the queue. */
  async function sendThenLoseTheQueue(title: string): Promise<{ id: string; runId: string }> {
    const created = await h.t.request('POST', `/api/sites/${h.site.id}/notifications`, { token: h.owner.token, body: notificationInput({ title }) });
    const id: string = created.body.data.notification.id;
    expect((await h.t.request('POST', `/api/notifications/${id}/send`, { token: h.owner.token })).status).toBe(200);
    await new Scheduler(ctx, queue).tick();
    const [fanOut] = queue.take();
    expect(fanOut).toMatchObject({ name: fanOutRunJob.name, payload: { recover: false } });
    const runId = (fanOut!.payload as { runId: string }).runId;
    await fanOutRun(deps, fanOut!.payload as { runId: string; recover: boolean });
    expect(queue.jobs.map((j) => j.name)).toEqual([sendBatchJob.name]);
    queue.loseEverything();
    expect(await pending(runId)).toBe(SUBSCRIBERS);
    return { id, runId };
  }

  async function pending(runId: string): Promise<number> {
    const row = await ctx.db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('run_seq', '=', runSeqOf(runId)).where('status', '=', 'pending').executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Works what is queued, as the workers would, until nothing is left. */
  async function workTheQueue(): Promise<void> {
    for (let jobs = queue.take(); jobs.length; jobs = queue.take()) {
      for (const job of jobs) {
        if (job.name === fanOutRunJob.name) await fanOutRun(deps, job.payload as { runId: string; recover: boolean });
        else if (job.name === sendBatchJob.name) await sendBatch(deps, job.payload as { runId: string; deliveryIds: number[] });
      }
    }
  }

  const recoveries = (runId: string) => queue.jobs.filter((j) => j.name === fanOutRunJob.name && (j.payload as { runId: string }).runId === runId);
  const pushesOf = (id: string) => h.push.messages.filter((m) => (m.payload as { tag: string }).tag === `herald-${id}`);

  it('resumes a run whose lease a worker extends while the scheduler takes it over (a batch in flight at the restart just finished)', async () => {
    const { id, runId } = await sendThenLoseTheQueue('Lease moved');
    clock.advance(1_000);
    const db = ctx.db.withPlugin(afterLeaseRead(runId, () => extendRunLease(ctx.db, runId, clock.now() + ctx.config.deliveryLeaseMs)));
    await new Scheduler({ ...ctx, db }, queue).tick();

    expect(recoveries(runId).map((j) => j.payload)).toEqual([{ runId, recover: true }]);
    await workTheQueue();
    expect((await h.waitForStatus(id, ['completed', 'failed'])).status).toBe('completed');
    expect(await pending(runId)).toBe(0);
    expect(new Set(pushesOf(id).map((m) => m.subscriptionId)).size).toBe(SUBSCRIBERS);
    expect(pushesOf(id)).toHaveLength(SUBSCRIBERS);
  });

  it('resumes on a later tick when the re-enqueue itself fails, though the queue reports the loss only once', async () => {
    const { id, runId } = await sendThenLoseTheQueue('Enqueue refused');
    const scheduler = new Scheduler(ctx, queue);
    queue.failNextEnqueues = 1;
    await scheduler.tick().catch(() => undefined);
    expect(recoveries(runId)).toEqual([]);
    expect(queue.lost).toBe(false);

    await scheduler.tick();
    expect(recoveries(runId).map((j) => j.payload)).toEqual([{ runId, recover: true }]);
    // Once done, it is not repeated on every tick.
    await scheduler.tick();
    expect(recoveries(runId)).toHaveLength(1);

    await workTheQueue();
    expect((await h.waitForStatus(id, ['completed', 'failed'])).status).toBe('completed');
    expect(pushesOf(id)).toHaveLength(SUBSCRIBERS);
    expect(new Set(pushesOf(id).map((m) => m.subscriptionId)).size).toBe(SUBSCRIBERS);
  });
});
