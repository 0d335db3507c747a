import crypto from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import type { EnqueueOptions, JobDefinition, JobHandler, JobQueue } from './queue';

/**
 * A job id never used before, even by a Redis that lost its data: BullMQ's
 * own ids count up from a key in Redis and start again at 1 after such a
 * loss, while a worker tracks the jobs it holds (and renews their locks) by
 * id, so a job taken before the loss ending in the same worker as a new job
 * with its number stopped the new one's lock renewal (docs/delivery.md, "When
 * Redis loses the queue").
 */
function newJobId(): string {
  return crypto.randomUUID();
}

/**
 * BullMQ on REDIS_URL: worker processes on several machines share a send.
 * One Redis queue per job kind, so a slow kind (fan-out waiting for batches
 * to drain) never takes the slots of another. BullMQ re-runs stalled jobs
 * (at least once); handlers are idempotent because the database decides what
 * is still to do.
 */
export class BullmqQueue implements JobQueue {
  readonly kind = 'bullmq' as const;
  private readonly queues = new Map<string, Queue>();
  private readonly workers: Worker[] = [];
  private readonly workedNames: string[] = [];
  /**
   * A connection for PING and the epoch marker that fails at once while Redis
   * is down (the queue's own connections wait for it to come back), so
   * readiness and the scheduler's check answer quickly.
   */
  private control: { redis: Redis; connected: Promise<void> } | undefined;
  private closing = false;

  constructor(
    private readonly redisUrl: string,
    private readonly log: FastifyBaseLogger,
    private readonly prefix = 'herald',
  ) {}

  async enqueue<Payload>(job: JobDefinition<Payload>, payload: Payload, options: EnqueueOptions = {}): Promise<void> {
    await this.queueFor(job.name).add(job.name, job.payload.parse(payload), { jobId: newJobId(), ...(options.delayMs ? { delay: Math.round(options.delayMs) } : {}) });
  }

  async enqueueMany<Payload>(job: JobDefinition<Payload>, payloads: Payload[]): Promise<void> {
    if (!payloads.length) return;
    await this.queueFor(job.name).addBulk(payloads.map((payload) => ({ name: job.name, data: job.payload.parse(payload), opts: { jobId: newJobId() } })));
  }

  async backlog(job: JobDefinition<unknown>): Promise<number> {
    return this.queueFor(job.name).getWaitingCount();
  }

  work<Payload>(job: JobDefinition<Payload>, handler: JobHandler<Payload>, options: { concurrency: number }): void {
    const worker = new Worker(
      job.name,
      async (bullJob) => {
        await handler(job.payload.parse(bullJob.data));
      },
      { connection: this.connection(), prefix: this.prefix, concurrency: options.concurrency, stalledInterval: 15_000, maxStalledCount: 10 },
    );
    this.workedNames.push(job.name);
    worker.on('error', (error) => this.log.warn({ err: error, job: job.name }, 'redis worker error'));
    worker.on('failed', (bullJob, error) => this.log.warn({ err: error, job: bullJob?.name }, 'job attempt failed'));
    this.workers.push(worker);
  }

  async jobCounts(): Promise<Record<string, Record<string, number>>> {
    const names = new Set([...this.queues.keys(), ...this.workedNames]);
    const counts: Record<string, Record<string, number>> = {};
    for (const name of names) counts[name] = await this.queueFor(name).getJobCounts('waiting', 'active', 'delayed', 'failed');
    return counts;
  }

  async ping(): Promise<void> {
    await (await this.controlConnection()).ping();
  }

  consuming(): boolean {
    return !this.closing && this.workers.every((w) => w.isRunning());
  }

  /**
   * Redis keeps a marker key next to the queues. When it is missing, Redis
   * lost its data (restarted without persistence, flushed, replaced): every
   * queued job is gone. SET NX re-creates it, and only the one process whose
   * SET succeeded answers true, so a single scheduler re-enqueues.
   */
  async lostJobs(): Promise<boolean> {
    const created = await (await this.controlConnection()).set(`${this.prefix}:queue-epoch`, crypto.randomUUID(), 'NX');
    return created === 'OK';
  }

  async close(): Promise<void> {
    this.closing = true;
    // Worker.close() waits for the jobs in progress to finish (graceful shutdown).
    await Promise.all(this.workers.map((w) => w.close()));
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.control?.redis.disconnect();
  }

  private async controlConnection(): Promise<Redis> {
    if (!this.control) {
      const redis = new Redis(this.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 });
      redis.on('error', () => undefined);
      // Waited for once; if it fails, ioredis keeps reconnecting and commands fail fast meanwhile.
      this.control = { redis, connected: redis.connect().catch(() => undefined) };
    }
    await this.control.connected;
    return this.control.redis;
  }

  private queueFor(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, {
        connection: this.connection(),
        prefix: this.prefix,
        defaultJobOptions: { attempts: 5, backoff: { type: 'exponential', delay: 500 }, removeOnComplete: true, removeOnFail: 1000 },
      });
      queue.on('error', (error) => this.log.warn({ err: error, queue: name }, 'redis queue error'));
      this.queues.set(name, queue);
    }
    return queue;
  }

  private connection() {
    // Blocking worker connections need maxRetriesPerRequest: null; a Redis
    // restart is then waited out instead of failing the job.
    return { url: this.redisUrl, maxRetriesPerRequest: null, enableOfflineQueue: true };
  }
}
