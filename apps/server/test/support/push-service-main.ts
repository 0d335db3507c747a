// Entry of the push service in its own process (see push-service-process.ts):
// starts it with the options in HERALD_PUSH_SERVICE_OPTIONS and answers the
// parent's IPC calls. Exits when the parent goes away.
import { PushService, type PushServiceOptions } from './push-service';
import type { PushServiceCall, PushServiceReply } from './push-service-process';

async function main(): Promise<void> {
  if (!process.send) throw new Error('push-service-main must be started with an IPC channel (child_process.fork)');
  const options = JSON.parse(process.env.HERALD_PUSH_SERVICE_OPTIONS ?? '{}') as PushServiceOptions;
  const service = await PushService.start(options);
  const reply = (message: PushServiceReply) => process.send!(message);

  const calls = {
    createSubscriptions: (count: number, subscriptionOptions?: Parameters<PushService['createSubscription']>[0]) =>
      Array.from({ length: count }, () => service.createSubscription(subscriptionOptions)),
    expire: (id: string) => service.expire(id),
    setAnswer: (...args: Parameters<PushService['setAnswer']>) => service.setAnswer(...args),
    scriptAnswers: (...args: Parameters<PushService['scriptAnswers']>) => service.scriptAnswers(...args),
    stats: () => service.stats(),
    messages: () => service.messages,
    requests: () => service.requests,
    reset: () => service.reset(),
    waitForAccepted: (count: number, timeoutMs?: number) => service.waitForAccepted(count, timeoutMs),
  } satisfies Record<string, (...args: never[]) => unknown>;

  process.on('message', (call: PushServiceCall) => {
    if (call.method === 'close') {
      void service.close().then(() => {
        reply({ id: call.id, result: null });
        process.disconnect();
      });
      return;
    }
    const fn = calls[call.method] as (...args: unknown[]) => unknown;
    Promise.resolve()
      .then(() => fn(...call.args))
      .then(
        (result) => reply({ id: call.id, result: result ?? null }),
        (error: unknown) => reply({ id: call.id, error: error instanceof Error ? error.message : String(error) }),
      );
  });
  process.on('disconnect', () => {
    void service.close().then(() => process.exit(0));
  });
  reply({ ready: true, origin: service.origin });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
