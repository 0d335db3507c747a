import type { AppContext } from '../context';
import type { JobQueue } from '../jobs/queue';
import type { PushClient } from './push-client';

/** What the fan-out and batch-sending jobs need. */
export interface DeliveryDeps extends Pick<AppContext, 'db' | 'dbKind' | 'clock' | 'config' | 'secret' | 'log' | 'deliveryPorts'> {
  queue: JobQueue;
  pushClient: PushClient;
  /** Aborted when the process starts shutting down: long jobs hand their remaining work back. */
  stopping?: AbortSignal;
}
