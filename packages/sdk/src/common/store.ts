import { isConfig, type HeraldConfig } from './config';

/**
 * A small key-value store in IndexedDB, shared by the page and the worker (same
 * origin, same database). It holds the configuration — so a Herald worker
 * imported into a site's own worker, registered without Herald's query, can find
 * its site — and what was last posted to Herald.
 *
 * Storage can be unavailable (private modes, storage pressure, a stuck open):
 * every function here resolves instead of rejecting, and callers degrade.
 */
const DATABASE_NAME = 'herald';
const STORE_NAME = 'kv';
const OPERATION_TIMEOUT_MS = 3000;

/** The subscription Herald last accepted from this browser. */
export interface SubscriberRecord {
  siteId: string;
  endpoint: string;
  subscriberId: string;
  /** Epoch ms of the last successful post. */
  postedAt: number;
  /** Set by herald.unsubscribe() until Herald has acknowledged it. */
  optedOut?: boolean;
}

interface StoredValues {
  config: HeraldConfig;
  subscriber: SubscriberRecord;
  /** The site whose visitor unsubscribed with herald.unsubscribe(): not subscribed again without asking. */
  optedOut: { siteId: string };
}

function runOperation(mode: IDBTransactionMode, operate: (store: IDBObjectStore) => IDBRequest): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('IndexedDB timed out')), OPERATION_TIMEOUT_MS);
    const finish = (callback: () => void) => {
      clearTimeout(timer);
      callback();
    };
    const opening = indexedDB.open(DATABASE_NAME, 1);
    opening.onupgradeneeded = () => opening.result.createObjectStore(STORE_NAME);
    opening.onerror = () => finish(() => reject(opening.error));
    opening.onsuccess = () => {
      const database = opening.result;
      try {
        const transaction = database.transaction(STORE_NAME, mode);
        const request = operate(transaction.objectStore(STORE_NAME));
        transaction.oncomplete = () => finish(() => resolve(request.result));
        transaction.onerror = transaction.onabort = () => finish(() => reject(transaction.error));
      } catch (error) {
        finish(() => reject(error));
      } finally {
        // Closes once the transaction is done; keeps no connection that would block an upgrade.
        database.close();
      }
    };
  });
}

async function readValue(key: keyof StoredValues): Promise<unknown> {
  try {
    return await runOperation('readonly', (store) => store.get(key));
  } catch {
    return undefined;
  }
}

async function writeValue<K extends keyof StoredValues>(key: K, value: StoredValues[K] | undefined): Promise<boolean> {
  try {
    await runOperation('readwrite', (store): IDBRequest => (value === undefined ? store.delete(key) : store.put(value, key)));
    return true;
  } catch {
    return false;
  }
}

export async function readConfig(): Promise<HeraldConfig | undefined> {
  const value = await readValue('config');
  return isConfig(value) ? value : undefined;
}

export function writeConfig(config: HeraldConfig): Promise<boolean> {
  return writeValue('config', { siteId: config.siteId, api: config.api, vapidKey: config.vapidKey });
}

/** The record for this site only: a record left by another site on the same origin is not ours. */
export async function readSubscriber(siteId: string): Promise<SubscriberRecord | undefined> {
  const value = (await readValue('subscriber')) as Partial<SubscriberRecord> | undefined;
  if (!value || value.siteId !== siteId || typeof value.endpoint !== 'string' || typeof value.subscriberId !== 'string') {
    return undefined;
  }
  return { ...value, postedAt: typeof value.postedAt === 'number' ? value.postedAt : 0 } as SubscriberRecord;
}

export function writeSubscriber(record: SubscriberRecord | undefined): Promise<boolean> {
  return writeValue('subscriber', record);
}

/** Whether this browser's visitor unsubscribed from this site (herald.unsubscribe()) and has not subscribed again since. */
export async function readOptedOut(siteId: string): Promise<boolean> {
  const value = (await readValue('optedOut')) as { siteId?: unknown } | undefined;
  return value?.siteId === siteId;
}

/** Remembers an unsubscribe (a site id), or forgets it (undefined) when the visitor subscribes again. */
export async function writeOptedOut(siteId: string | undefined): Promise<void> {
  await writeValue('optedOut', siteId === undefined ? undefined : { siteId });
}
