import crypto from 'node:crypto';
import type { AppContext } from '../context';
import { fanOutRunJob } from '../delivery/fan-out';
import { claimDueRuns, findSendingRuns, findStalledRuns, markNotificationSending, reclaimStalledRun, takeOverSendingRun } from '../delivery/runs';
import type { JobQueue } from './queue';

/**
 * Something that turns time into due work (a recurring schedule, a feed to
 * poll). It is called on every tick and must itself claim what it acts on,
 * so two schedulers never act twice.
 */
export interface DueWorkSource {
  name: string;
  runDue(now: number): Promise<void>;
}

/**
 * The scheduler asks the database what is due, claims it in one statement
 * (so two schedulers never both take it) and hands it to the queue. It also
 * takes over runs whose lease ran out: their worker died or their jobs were
 * lost, and the database still knows what is unfinished.
 */
export class Scheduler {
  readonly owner = `scheduler-${crypto.randomUUID()}`;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  /** The queue said it lost its jobs, and not every sending run is back on it yet. */
  private resumeOwed = false;

  constructor(
    private readonly ctx: Pick<AppContext, 'db' | 'clock' | 'config' | 'log' | 'metrics'>,
    private readonly queue: JobQueue,
    private readonly sources: DueWorkSource[] = [],
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Ticks as soon as possible (a notification was just sent or scheduled now). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  /** One pass: lost queue, sources, due runs, stalled runs. Safe to call concurrently from several processes. */
  async tick(): Promise<void> {
    const { db, clock, config, log, metrics } = this.ctx;
    await this.resumeIfQueueLost();
    // One cut-off for the whole tick: a run the sources did not see as due
    // (the drip guard cancels steps of unsubscribed subscribers) is not
    // claimed by this tick either, even if it fell due while they ran.
    const tickedAt = clock.now();
    for (const source of this.sources) {
      try {
        await source.runDue(tickedAt);
      } catch (error) {
        log.error({ err: error, source: source.name }, 'due-work source failed');
      }
    }

    for (;;) {
      const now = clock.now();
      const claimed = await claimDueRuns(db, now, this.owner, config.deliveryLeaseMs, { dueBy: tickedAt });
      for (const run of claimed) {
        metrics.runClaimed((now - run.due_at) / 1000);
        await markNotificationSending(db, run.notification_id, now);
        await this.queue.enqueue(fanOutRunJob, { runId: run.id, recover: false });
      }
      if (claimed.length < 50) break;
    }

    const now = clock.now();
    for (const stalled of await findStalledRuns(db, now)) {
      if (await reclaimStalledRun(db, stalled.id, stalled.lease_until, now, this.owner, config.deliveryLeaseMs)) {
        log.warn({ runId: stalled.id }, 'run lease expired; resuming it');
        await this.queue.enqueue(fanOutRunJob, { runId: stalled.id, recover: true });
      }
    }
  }

  /**
   * Redis came back empty (issue 17, 7b): the jobs of every run still sending
   * are gone, and waiting for their leases to run out would stall each send
   * for DELIVERY_LEASE_SECONDS. The database says what is unfinished: take
   * every sending run over now and re-enqueue its fan-out in recovery mode
   * (it re-enqueues the pending deliveries; those a live worker still holds
   * are leased, so nothing is sent twice).
   *
   * The queue reports a loss once (its marker is back as soon as this
   * scheduler saw it missing), so the loss is remembered here until every
   * sending run is back on the queue: if re-enqueueing fails half-way (Redis
   * went away again), the next tick does it all again (docs/delivery.md,
   * "When Redis loses the queue").
   */
  private async resumeIfQueueLost(): Promise<void> {
    const { db, clock, config, log } = this.ctx;
    if (!this.resumeOwed) {
      try {
        this.resumeOwed = await this.queue.lostJobs();
      } catch {
        // The queue's store is unreachable: nothing can be enqueued now anyway; the next tick asks again.
        return;
      }
      if (!this.resumeOwed) return;
    }
    let resumed = 0;
    try {
      for (let afterId: string | null = null; ; ) {
        const runs = await findSendingRuns(db, afterId);
        for (const run of runs) {
          if (await takeOverSendingRun(db, run.id, clock.now(), this.owner, config.deliveryLeaseMs)) {
            await this.queue.enqueue(fanOutRunJob, { runId: run.id, recover: true });
            resumed++;
          }
        }
        if (runs.length < 100) break;
        afterId = runs[runs.length - 1]!.id;
      }
    } catch (error) {
      log.warn({ err: error, runs: resumed }, 'the queue lost its jobs and resuming the sends in progress failed; the next tick tries again');
      return;
    }
    this.resumeOwed = false;
    if (resumed) log.warn({ runs: resumed }, 'the queue lost its jobs (Redis restarted empty?); resumed the sends in progress from the database');
  }

  private schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.loop(), delayMs);
    this.timer.unref();
  }

  private async loop(): Promise<void> {
    if (this.stopped || this.running) return;
    this.running = this.tick()
      .catch((error: unknown) => this.ctx.log.error({ err: error }, 'scheduler tick failed'))
      .finally(() => {
        this.running = undefined;
      });
    await this.running;
    if (this.stopped) return;
    const next = this.again ? 0 : this.ctx.config.schedulerIntervalMs;
    this.again = false;
    this.schedule(next);
  }
}
