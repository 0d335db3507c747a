// The import reader's worker thread (checked-batches.ts): runs
// checkedBatches() on the file it is given and posts each batch, never more
// than the credits the importing thread gave it ahead.
import { parentPort, workerData } from 'node:worker_threads';
import { checkedBatches, ImportHeaderError, type ReadStart, type ReaderMessage } from './checked-batches';
import { ImportFileError } from './import-file';

const port = parentPort!;
let credits = 0;
let wake: (() => void) | undefined;
port.on('message', (message: { credit: number }) => {
  credits += message.credit;
  wake?.();
});

const post = (message: ReaderMessage) => port.postMessage(message);

async function run(start: ReadStart): Promise<void> {
  try {
    for await (const batch of checkedBatches(start)) {
      while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
      credits -= 1;
      post({ batch });
    }
    post({ end: true });
  } catch (error) {
    const kind = error instanceof ImportFileError ? 'file' : error instanceof ImportHeaderError ? 'header' : 'other';
    post({ error: { kind, message: error instanceof Error ? error.message : String(error) } });
  }
  // Nothing more to wait for: without a listener the port no longer holds the thread, which ends once its messages are out.
  port.removeAllListeners('message');
}

void run(workerData as ReadStart);
