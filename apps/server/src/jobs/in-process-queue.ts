import type { FastifyBaseLogger } from 'fastify';
import type { EnqueueOptions, JobDefinition, JobHandler, JobQueue } from './queue';

interface Lane {
  pending: unknown[];
  running: number;
  concurrency: number;
  handler: JobHandler<unknown>;
  job: JobDefinition<unknown>;
}

const MAX_ATTEMPTS = 3;

/**
 * The embedded default: jobs live in this process's memory. Good for one
 * machine; the scheduler's recovery sweep covers a crash (jobs in memory are
 * lost, the database still knows what is unfinished).
 */
export class InProcessQueue implements JobQueue {
  readonly kind = 'in-process' as const;
  private readonly lanes = new Map<string, Lane>();
  /** Jobs enqueued before a worker for their name was registered. */
  private readonly waiting = new Map<string, unknown[]>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Delayed jobs per name, waiting for their timer. */
  private readonly delayed = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly log: FastifyBaseLogger) {}

  async enqueue<Payload>(job: JobDefinition<Payload>, payload: Payload, options: EnqueueOptions = {}): Promise<void> {
    const checked = job.payload.parse(payload);
    if (this.closed) return;
    if (options.delayMs && options.delayMs > 0) {
      this.delayed.set(job.name, (this.delayed.get(job.name) ?? 0) + 1);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.delayed.set(job.name, (this.delayed.get(job.name) ?? 1) - 1);
        this.push(job.name, checked);
      }, options.delayMs);
      timer.unref();
      this.timers.add(timer);
      return;
    }
    this.push(job.name, checked);
  }

  async enqueueMany<Payload>(job: JobDefinition<Payload>, payloads: Payload[]): Promise<void> {
    for (const payload of payloads) await this.enqueue(job, payload);
  }

  async backlog(job: JobDefinition<unknown>): Promise<number> {
    return (this.lanes.get(job.name)?.pending.length ?? 0) + (this.waiting.get(job.name)?.length ?? 0);
  }

  work<Payload>(job: JobDefinition<Payload>, handler: JobHandler<Payload>, options: { concurrency: number }): void {
    const lane: Lane = {
      pending: this.waiting.get(job.name) ?? [],
      running: 0,
      concurrency: options.concurrency,
      handler: handler as JobHandler<unknown>,
      job: job as JobDefinition<unknown>,
    };
    this.waiting.delete(job.name);
    this.lanes.set(job.name, lane);
    this.pump(lane);
  }

  async jobCounts(): Promise<Record<string, Record<string, number>>> {
    type Counts = { waiting: number; active: number; delayed: number };
    const counts: Record<string, Counts> = {};
    const of = (name: string): Counts => (counts[name] ??= { waiting: 0, active: 0, delayed: 0 });
    for (const [name, lane] of this.lanes) Object.assign(of(name), { waiting: lane.pending.length, active: lane.running });
    for (const [name, list] of this.waiting) of(name).waiting += list.length;
    for (const [name, count] of this.delayed) of(name).delayed = count;
    return counts;
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error('the queue is closed');
  }

  consuming(): boolean {
    return !this.closed;
  }

  /** Jobs in memory are lost only with the process; its restart is the recovery sweep's case. */
  async lostJobs(): Promise<boolean> {
    return false;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.delayed.clear();
    for (const lane of this.lanes.values()) lane.pending = [];
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  /** Resolves once nothing is queued or running (tests and graceful shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      const busy = [...this.lanes.values()].some((l) => l.pending.length || l.running) || this.inFlight.size > 0;
      if (!busy) return;
      await Promise.allSettled([...this.inFlight]);
      await new Promise((r) => setImmediate(r));
    }
  }

  private push(name: string, payload: unknown): void {
    const lane = this.lanes.get(name);
    if (!lane) {
      const list = this.waiting.get(name) ?? [];
      list.push(payload);
      this.waiting.set(name, list);
      return;
    }
    lane.pending.push(payload);
    this.pump(lane);
  }

  private pump(lane: Lane): void {
    while (!this.closed && lane.running < lane.concurrency && lane.pending.length) {
      const payload = lane.pending.shift();
      lane.running += 1;
      const run = this.runWithRetries(lane, payload).finally(() => {
        lane.running -= 1;
        this.inFlight.delete(run);
        this.pump(lane);
      });
      this.inFlight.add(run);
    }
  }

  private async runWithRetries(lane: Lane, payload: unknown): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await lane.handler(lane.job.payload.parse(payload));
        return;
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || this.closed) {
          // The recovery sweep will pick up whatever this job left unfinished.
          this.log.error({ err: error, job: lane.job.name }, 'job failed; leaving it to the recovery sweep');
          return;
        }
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt).unref());
      }
    }
  }
}
