// The test push service in a separate process, for benchmarks (so its CPU is
// not the sender's) and for tests that kill or restart the sender. Same
// abilities as PushService, over IPC; every method is async.
//
//   const service = await startPushServiceProcess({ decrypt: false, keepRecords: false });
//   const subscriptions = await service.createSubscriptions(1000);
//   ... send ...
//   const { accepted } = await service.stats();
//   await service.close();
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type {
  CreateSubscriptionOptions,
  PushAnswer,
  PushRequestRecord,
  PushServiceOptions,
  PushServiceStats,
  ReceivedPush,
  TestSubscription,
} from './push-service';

export type PushServiceCall = { id: number; method: 'close'; args: [] } | { id: number; method: RemoteMethod; args: unknown[] };
export type PushServiceReply = { ready: true; origin: string } | { id: number; result: unknown } | { id: number; error: string };
type RemoteMethod = 'createSubscriptions' | 'expire' | 'setAnswer' | 'scriptAnswers' | 'stats' | 'messages' | 'requests' | 'reset' | 'waitForAccepted';

export class RemotePushService {
  private nextCallId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private exited = false;

  constructor(
    private readonly child: ChildProcess,
    /** scheme://127.0.0.1:port of the service. */
    readonly origin: string,
  ) {
    child.on('message', (reply: PushServiceReply) => {
      if (!('id' in reply)) return;
      const call = this.pending.get(reply.id);
      if (!call) return;
      this.pending.delete(reply.id);
      if ('error' in reply) call.reject(new Error(reply.error));
      else call.resolve(reply.result);
    });
    child.once('exit', () => {
      this.exited = true;
      for (const call of this.pending.values()) call.reject(new Error('the push service process exited'));
      this.pending.clear();
    });
  }

  /** Process id of the service (for tests that want to stop it by force). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  createSubscriptions(count: number, options?: CreateSubscriptionOptions): Promise<TestSubscription[]> {
    return this.call('createSubscriptions', count, options) as Promise<TestSubscription[]>;
  }
  async createSubscription(options?: CreateSubscriptionOptions): Promise<TestSubscription> {
    return (await this.createSubscriptions(1, options))[0]!;
  }
  expire(subscriptionId: string): Promise<void> {
    return this.call('expire', subscriptionId) as Promise<void>;
  }
  setAnswer(answer: PushAnswer, subscriptionId?: string): Promise<void> {
    return this.call('setAnswer', answer, subscriptionId) as Promise<void>;
  }
  scriptAnswers(answers: PushAnswer[], subscriptionId?: string): Promise<void> {
    return this.call('scriptAnswers', answers, subscriptionId) as Promise<void>;
  }
  stats(): Promise<PushServiceStats> {
    return this.call('stats') as Promise<PushServiceStats>;
  }
  messages(): Promise<ReceivedPush[]> {
    return this.call('messages') as Promise<ReceivedPush[]>;
  }
  requests(): Promise<PushRequestRecord[]> {
    return this.call('requests') as Promise<PushRequestRecord[]>;
  }
  reset(): Promise<void> {
    return this.call('reset') as Promise<void>;
  }
  waitForAccepted(count: number, timeoutMs?: number): Promise<void> {
    return this.call('waitForAccepted', count, timeoutMs) as Promise<void>;
  }

  /** Stops the service and waits for its process to exit (killing it after 5 s). */
  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    const kill = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    this.send({ id: this.nextCallId++, method: 'close', args: [] });
    await exited;
    clearTimeout(kill);
  }

  private call(method: RemoteMethod, ...args: unknown[]): Promise<unknown> {
    if (this.exited) return Promise.reject(new Error('the push service process has exited'));
    const id = this.nextCallId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ id, method, args });
    });
  }

  private send(call: PushServiceCall): void {
    this.child.send(call);
  }
}

/** Starts the push service in a child process (Node with tsx) and waits until it listens. */
export async function startPushServiceProcess(options: PushServiceOptions = {}): Promise<RemotePushService> {
  const entry = fileURLToPath(new URL('./push-service-main.ts', import.meta.url));
  const child = fork(entry, [], {
    execArgv: ['--import', import.meta.resolve('tsx')],
    env: { ...process.env, HERALD_PUSH_SERVICE_OPTIONS: JSON.stringify(options) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the push service process did not start within 20 s'));
    }, 20_000);
    child.on('message', function onReady(reply: PushServiceReply) {
      if ('ready' in reply) {
        clearTimeout(timer);
        child.off('message', onReady);
        resolve(reply.origin);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the push service process exited with code ${code} before listening`));
    });
  });
  return new RemotePushService(child, origin);
}
