/**
 * Test support: the page-side browser APIs Herald's snippet touches, in memory —
 * navigator.serviceWorker (register / getRegistration with scope matching and an
 * install → activate lifecycle run as tasks), each registration's PushManager,
 * Notification.permission / requestPermission (which, like Firefox and Safari,
 * only prompts inside a user gesture), and a fresh IndexedDB. Not part of the bundles.
 */
import { IDBFactory } from 'fake-indexeddb';
import { FakePushManager, type PushState } from './fake-push';

type WorkerState = 'parsed' | 'installing' | 'installed' | 'activating' | 'activated' | 'redundant';

export class FakeServiceWorker extends EventTarget {
  state: WorkerState = 'parsed';

  constructor(readonly scriptURL: string) {
    super();
  }

  setState(state: WorkerState): void {
    this.state = state;
    this.dispatchEvent(new Event('statechange'));
  }
}

export class FakeRegistration {
  active: FakeServiceWorker | null = null;
  installing: FakeServiceWorker | null = null;
  waiting: FakeServiceWorker | null = null;
  readonly pushManager: FakePushManager;

  constructor(
    readonly scope: string,
    public updateViaCache: ServiceWorkerUpdateViaCache,
    state: PushState,
  ) {
    this.pushManager = new FakePushManager(state, () => this.active !== null);
  }
}

export interface RegisterCall {
  scriptURL: string;
  options: RegistrationOptions | undefined;
}

const task = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

export class FakeServiceWorkerContainer {
  readonly registrations = new Map<string, FakeRegistration>();
  readonly registerCalls: RegisterCall[] = [];
  /** Makes the next installs fail, as when importScripts() cannot load Herald's worker. */
  failInstall = false;

  constructor(
    private readonly state: PushState,
    private readonly pageUrl: () => string,
  ) {}

  async register(scriptURL: string | URL, options?: RegistrationOptions): Promise<FakeRegistration> {
    this.registerCalls.push({ scriptURL: String(scriptURL), options });
    const script = new URL(String(scriptURL), this.pageUrl());
    const scope = new URL(options?.scope ?? './', script).href;
    if (script.origin !== new URL(this.pageUrl()).origin) throw new DOMException('Script origin mismatch', 'SecurityError');
    let registration = this.registrations.get(scope);
    if (!registration) {
      registration = new FakeRegistration(scope, options?.updateViaCache ?? 'imports', this.state);
      this.registrations.set(scope, registration);
    }
    registration.updateViaCache = options?.updateViaCache ?? 'imports';
    if (registration.active?.scriptURL === script.href) return registration;
    const worker = new FakeServiceWorker(script.href);
    registration.installing = worker;
    worker.setState('installing');
    void this.runLifecycle(registration, worker);
    return registration;
  }

  /** Service Workers §Install and §Activate, one task per step; the new worker skips waiting. */
  private async runLifecycle(registration: FakeRegistration, worker: FakeServiceWorker): Promise<void> {
    await task();
    if (this.failInstall) {
      registration.installing = null;
      worker.setState('redundant');
      if (this.registrations.get(registration.scope) === registration && !registration.active) {
        this.registrations.delete(registration.scope);
      }
      return;
    }
    worker.setState('installed');
    await task();
    registration.installing = null;
    const previous = registration.active;
    registration.active = worker;
    previous?.setState('redundant');
    worker.setState('activating');
    await task();
    worker.setState('activated');
  }

  /** The registration whose scope is the longest prefix of the URL (Service Workers §Match Service Worker Registration). */
  async getRegistration(clientURL = ''): Promise<FakeRegistration | undefined> {
    const url = new URL(clientURL, this.pageUrl()).href;
    let match: FakeRegistration | undefined;
    for (const registration of this.registrations.values()) {
      if (url.startsWith(registration.scope) && (!match || registration.scope.length > match.scope.length)) match = registration;
    }
    return match;
  }

  /** Registers a worker that is already active, as a site's own PWA worker would be. */
  async preinstall(scriptURL: string, scope = '/'): Promise<FakeRegistration> {
    const script = new URL(scriptURL, this.pageUrl()).href;
    const registration = new FakeRegistration(new URL(scope, this.pageUrl()).href, 'imports', this.state);
    const worker = new FakeServiceWorker(script);
    worker.state = 'activated';
    registration.active = worker;
    this.registrations.set(registration.scope, registration);
    return registration;
  }
}

export interface FakeBrowser {
  push: PushState;
  serviceWorker: FakeServiceWorkerContainer;
  /** What the visitor answers when a permission prompt is shown. */
  answer: NotificationPermission;
  /** One entry per Notification.requestPermission() call; `prompted` is false outside a user gesture. */
  permissionRequests: { prompted: boolean }[];
  /** Runs `action` as the handler of a user gesture (a click); requestPermission only prompts inside one. */
  userGesture<T>(action: () => T): T;
  uninstall(): void;
}

export function installFakeBrowser(initial: { permission?: NotificationPermission } = {}): FakeBrowser {
  const push: PushState = { permission: initial.permission ?? 'default', created: 0 };
  const serviceWorker = new FakeServiceWorkerContainer(push, () => location.href);
  let inGesture = false;

  const browser: FakeBrowser = {
    push,
    serviceWorker,
    answer: 'granted',
    permissionRequests: [],
    userGesture(action) {
      inGesture = true;
      try {
        return action();
      } finally {
        inGesture = false;
      }
    },
    uninstall() {
      delete (navigator as { serviceWorker?: unknown }).serviceWorker;
      delete (globalThis as { PushManager?: unknown }).PushManager;
      delete (globalThis as { Notification?: unknown }).Notification;
    },
  };

  class FakeNotification {
    static get permission(): NotificationPermission {
      return push.permission;
    }

    // Notifications API §requestPermission: an answered origin gets its answer
    // back without a prompt; an unanswered one is only prompted during a user
    // gesture (Firefox 72+, Safari), otherwise it stays 'default'.
    static requestPermission(): Promise<NotificationPermission> {
      const prompted = push.permission === 'default' && inGesture;
      browser.permissionRequests.push({ prompted });
      return new Promise((resolve) =>
        setTimeout(() => {
          if (prompted) push.permission = browser.answer;
          resolve(push.permission);
        }, 0),
      );
    }
  }

  Object.defineProperty(navigator, 'serviceWorker', { value: serviceWorker, configurable: true });
  Object.assign(globalThis, { PushManager: FakePushManager, Notification: FakeNotification, indexedDB: new IDBFactory() });
  return browser;
}
