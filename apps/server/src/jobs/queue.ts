import type { z } from 'zod';

/**
 * A named, typed job: the payload is checked with its zod schema when it is
 * enqueued and again when a worker takes it (a BullMQ payload crossed Redis).
 */
export interface JobDefinition<Payload> {
  name: string;
  payload: z.ZodType<Payload>;
}

export function defineJob<Payload>(name: string, payload: z.ZodType<Payload>): JobDefinition<Payload> {
  return { name, payload };
}

export interface EnqueueOptions {
  /** Run no earlier than this many milliseconds from now. */
  delayMs?: number;
}

export type JobHandler<Payload> = (payload: Payload) => Promise<void>;

/**
 * The queue port. It only spreads work over workers; the database says what
 * is due (docs/delivery.md), so losing a queued job delays work but never
 * loses it: the scheduler's recovery sweep re-enqueues what a lost job held.
 * Delivery is at least once; handlers are idempotent.
 */
export interface JobQueue {
  readonly kind: 'in-process' | 'bullmq';
  enqueue<Payload>(job: JobDefinition<Payload>, payload: Payload, options?: EnqueueOptions): Promise<void>;
  enqueueMany<Payload>(job: JobDefinition<Payload>, payloads: Payload[]): Promise<void>;
  /** Jobs of this kind waiting to be taken (fan-out slows down when workers fall behind). */
  backlog(job: JobDefinition<unknown>): Promise<number>;
  /** Starts taking jobs of this kind in this process. */
  work<Payload>(job: JobDefinition<Payload>, handler: JobHandler<Payload>, options: { concurrency: number }): void;
  /** Jobs by kind and state (waiting, active, delayed, failed), for metrics. */
  jobCounts(): Promise<Record<string, Record<string, number>>>;
  /** Resolves when the queue's store answers (Redis PING); rejects otherwise. */
  ping(): Promise<void>;
  /** True while the jobs registered with work() are being taken (readiness). */
  consuming(): boolean;
  /**
   * True once after the store lost every queued job (Redis restarted empty or
   * was flushed): the scheduler then re-enqueues what the database says is
   * unfinished at once instead of waiting for leases to run out.
   */
  lostJobs(): Promise<boolean>;
  /** Stops taking new jobs, waits for the ones in progress, releases connections. */
  close(): Promise<void>;
}
