// The push client's batch API (PushClient.sendAll): messages are pulled from
// their source (an array, a generator, an async generator paging through the
// audience) only when there is room, so a fan-out of any size runs in bounded
// memory; a result the caller is still recording keeps its slot until it is
// recorded (push-slots.ts).
import type { PushMessage } from './push-message';
import type { PushOutcome, PushOutcomeKind } from './push-outcome';
import type { SendAllSummary } from './push-client-options';
import type { PushSlots } from './push-slots';

/** What a batch needs from the client that sends its messages. */
export interface BatchSender {
  readonly slots: PushSlots;
  /** True once close() was called: the batch stops pulling. */
  isClosing(): boolean;
  /** Takes one message; `deliver` is called once with its outcome. */
  submit(message: PushMessage<unknown>, deliver: (outcome: PushOutcome) => void): void;
  /** A slot is free again: starts parked messages, then wakes the batches. */
  schedule(): void;
}

interface Batch {
  /** Messages taken from the source and not yet reported. */
  outstanding: number;
  /** onResult promises not yet settled. */
  pendingResults: number;
  error: unknown;
  failed: boolean;
  wake: (() => void) | undefined;
}

/**
 * Sends every message from `messages`, calling `onResult` once per message as
 * its outcome is known (see PushClient.sendAll for the contract).
 */
export async function sendAllFrom<Ref>(
  sender: BatchSender,
  messages: Iterable<PushMessage<Ref>> | AsyncIterable<PushMessage<Ref>>,
  onResult: (message: PushMessage<Ref>, outcome: PushOutcome) => void | Promise<void>,
): Promise<SendAllSummary> {
  const { slots } = sender;
  const counts: Record<PushOutcomeKind, number> = { sent: 0, gone: 0, 'rate-limited': 0, deferred: 0, retryable: 0, failed: 0 };
  let total = 0;
  const batch: Batch = { outstanding: 0, pendingResults: 0, error: undefined, failed: false, wake: undefined };
  const wakeBatch = () => {
    const wake = batch.wake;
    batch.wake = undefined;
    wake?.();
  };
  const fail = (error: unknown) => {
    if (!batch.failed) {
      batch.failed = true;
      batch.error = error;
    }
  };
  const report = (message: PushMessage<Ref>, outcome: PushOutcome) => {
    counts[outcome.kind]++;
    total++;
    batch.outstanding--;
    let result: void | Promise<void> = undefined;
    try {
      result = onResult(message, outcome);
    } catch (error) {
      fail(error);
    }
    if (result && typeof result.then === 'function') {
      batch.pendingResults++;
      slots.awaitingResults++;
      const settled = () => {
        batch.pendingResults--;
        slots.awaitingResults--;
        wakeBatch();
        // A slot is free again: parked messages go first (schedule() then wakes
        // the batches). Parked ones are otherwise started only when a push
        // service answers, and none may be left to answer: every batch would
        // then wait for its parked messages forever.
        sender.schedule();
      };
      result.then(settled, (error: unknown) => {
        fail(error);
        settled();
      });
    }
    wakeBatch();
  };

  const iterator =
    Symbol.asyncIterator in messages
      ? (messages as AsyncIterable<PushMessage<Ref>>)[Symbol.asyncIterator]()
      : (messages as Iterable<PushMessage<Ref>>)[Symbol.iterator]();
  let exhausted = false;
  try {
    while (!batch.failed && !sender.isClosing()) {
      if (!slots.hasRoom() || batch.pendingResults >= slots.concurrency) {
        await waitForRoom(slots, batch);
        continue;
      }
      // The slot is this batch's while it waits for its source.
      slots.reserve();
      let next: IteratorResult<PushMessage<Ref>>;
      try {
        next = await iterator.next();
      } finally {
        slots.unreserve();
      }
      if (next.done) {
        exhausted = true;
        break;
      }
      const message = next.value;
      batch.outstanding++;
      sender.submit(message as PushMessage<unknown>, (outcome) => report(message, outcome));
    }
  } catch (error) {
    fail(error);
  }
  // Another batch may be waiting for the slot this one reserved last.
  slots.wakeRoomWaiters();
  if (!exhausted) {
    // Let a generator run its finally blocks (close a database cursor, say).
    try {
      await iterator.return?.();
    } catch (error) {
      fail(error);
    }
  }
  while (batch.outstanding > 0 || batch.pendingResults > 0) {
    await new Promise<void>((resolve) => (batch.wake = resolve));
  }
  if (batch.failed) throw batch.error;
  return { total, counts, stopped: !exhausted };
}

function waitForRoom(slots: PushSlots, batch: Batch): Promise<void> {
  return new Promise<void>((resolve) => {
    const wake = () => {
      slots.removeRoomWaiter(wake);
      if (batch.wake === wake) batch.wake = undefined;
      resolve();
    };
    slots.addRoomWaiter(wake);
    // Results settling also make room for a batch held by pendingResults.
    batch.wake = wake;
  });
}
