/**
 * Test support: a ServiceWorkerGlobalScope in memory — extendable events whose
 * waitUntil() must be called during dispatch (Service Workers §ExtendableEvent),
 * registration.showNotification / getNotifications, a PushManager, and window
 * clients with focus() and openWindow(). Not part of the bundles.
 */
import { FakePushManager, type PushState } from './fake-push';

export class FakeExtendableEvent extends Event {
  readonly lifetime: Promise<unknown>[] = [];
  dispatching = false;

  waitUntil(promise: Promise<unknown>): void {
    if (!this.dispatching && this.lifetime.length === 0) {
      throw new DOMException('waitUntil() called after the event was dispatched', 'InvalidStateError');
    }
    this.lifetime.push(promise);
  }
}

export class FakePushMessageData {
  constructor(private readonly text_: string) {}

  text(): string {
    return this.text_;
  }

  json(): unknown {
    return JSON.parse(this.text_);
  }
}

export class FakePushEvent extends FakeExtendableEvent {
  readonly data: FakePushMessageData | null;

  constructor(payload: unknown) {
    super('push');
    this.data = payload === undefined ? null : new FakePushMessageData(typeof payload === 'string' ? payload : JSON.stringify(payload));
  }
}

export class FakeShownNotification {
  closed = false;

  constructor(
    readonly title: string,
    readonly options: NotificationOptions & Record<string, unknown>,
    private readonly list: FakeShownNotification[],
  ) {}

  get data(): unknown {
    return this.options.data;
  }

  close(): void {
    this.closed = true;
    const index = this.list.indexOf(this);
    if (index >= 0) this.list.splice(index, 1);
  }
}

export class FakeNotificationEvent extends FakeExtendableEvent {
  constructor(
    readonly notification: FakeShownNotification,
    readonly action = '',
  ) {
    super('notificationclick');
  }
}

export class FakePushSubscriptionChangeEvent extends FakeExtendableEvent {
  constructor(
    readonly oldSubscription: unknown,
    readonly newSubscription: unknown = null,
  ) {
    super('pushsubscriptionchange');
  }
}

export class FakeWindowClient {
  readonly type = 'window';
  focused = false;

  constructor(readonly url: string) {}

  async focus(): Promise<this> {
    this.focused = true;
    return this;
  }
}

export class FakeWorkerScope extends EventTarget {
  readonly location: URL;
  readonly push: PushState = { permission: 'granted', created: 0 };
  readonly shown: FakeShownNotification[] = [];
  readonly windows: FakeWindowClient[] = [];
  readonly opened: string[] = [];
  skipWaitingCalls = 0;
  claimCalls = 0;

  readonly registration = {
    pushManager: new FakePushManager(this.push, () => true),
    showNotification: async (title: string, options: NotificationOptions & Record<string, unknown> = {}) => {
      if (this.push.permission !== 'granted') throw new TypeError('No notification permission has been granted for this origin.');
      // A notification with the tag of a shown one replaces it (Notifications API §show steps).
      const existing = options.tag ? this.shown.findIndex((shown) => shown.options.tag === options.tag) : -1;
      if (existing >= 0) this.shown.splice(existing, 1);
      this.shown.push(new FakeShownNotification(title, options, this.shown));
    },
    getNotifications: async () => [...this.shown],
  };

  readonly clients = {
    matchAll: async (options: ClientQueryOptions = {}) => (options.type === 'window' || options.type === 'all' ? [...this.windows] : []),
    openWindow: async (url: string) => {
      this.opened.push(url);
      const client = new FakeWindowClient(url);
      this.windows.push(client);
      return client;
    },
    claim: async () => {
      this.claimCalls += 1;
    },
  };

  constructor(scriptUrl: string) {
    super();
    this.location = new URL(scriptUrl);
  }

  async skipWaiting(): Promise<void> {
    this.skipWaitingCalls += 1;
  }

  /** Dispatches like the browser and resolves when every waitUntil() promise has settled. */
  async dispatch(event: FakeExtendableEvent): Promise<void> {
    event.dispatching = true;
    this.dispatchEvent(event);
    event.dispatching = false;
    await Promise.allSettled(event.lifetime);
    const failures = (await Promise.allSettled(event.lifetime)).filter((result) => result.status === 'rejected');
    if (failures.length > 0) throw (failures[0] as PromiseRejectedResult).reason;
  }

  asServiceWorkerScope(): ServiceWorkerGlobalScope {
    return this as unknown as ServiceWorkerGlobalScope;
  }
}
