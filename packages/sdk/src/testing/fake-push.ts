/**
 * Test support: in-memory PushManager / PushSubscription that follow the Push
 * API's rules (W3C Push API §3.3, §3.4) closely enough to catch misuse:
 * subscribe() needs granted permission, userVisibleOnly and an active worker,
 * and refuses a second key on the same registration. Not part of the bundles.
 */
import { decodeBase64Url } from '../common/base64url';

export interface PushState {
  permission: NotificationPermission;
  /** Counts subscriptions created, to give each a distinct endpoint. */
  created: number;
}

function toArrayBuffer(key: BufferSource | string | null | undefined): ArrayBuffer | null {
  if (key === null || key === undefined) return null;
  if (typeof key === 'string') return decodeBase64Url(key).buffer;
  const view = ArrayBuffer.isView(key) ? new Uint8Array(key.buffer, key.byteOffset, key.byteLength) : new Uint8Array(key);
  return new Uint8Array(view).buffer;
}

function base64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export class FakePushSubscription {
  readonly expirationTime = null;
  readonly options: { userVisibleOnly: boolean; applicationServerKey: ArrayBuffer | null };
  unsubscribed = false;

  constructor(
    private readonly manager: FakePushManager,
    readonly endpoint: string,
    applicationServerKey: ArrayBuffer | null,
    private readonly p256dh = new Uint8Array(65).fill(4),
    private readonly auth = new Uint8Array(16).fill(7),
  ) {
    this.options = { userVisibleOnly: true, applicationServerKey };
  }

  getKey(name: 'p256dh' | 'auth'): ArrayBuffer {
    return new Uint8Array(name === 'p256dh' ? this.p256dh : this.auth).buffer;
  }

  toJSON(): PushSubscriptionJSON {
    return { endpoint: this.endpoint, expirationTime: null, keys: { p256dh: base64Url(this.p256dh), auth: base64Url(this.auth) } };
  }

  async unsubscribe(): Promise<boolean> {
    if (this.unsubscribed) return false;
    this.unsubscribed = true;
    if (this.manager.current === this) this.manager.current = null;
    return true;
  }
}

export class FakePushManager {
  current: FakePushSubscription | null = null;
  readonly subscribeCalls: PushSubscriptionOptionsInit[] = [];

  constructor(
    private readonly state: PushState,
    private readonly hasActiveWorker: () => boolean,
  ) {}

  static readonly supportedContentEncodings = ['aes128gcm'];

  async getSubscription(): Promise<FakePushSubscription | null> {
    return this.current;
  }

  async permissionState(): Promise<PermissionState> {
    return this.state.permission === 'default' ? 'prompt' : this.state.permission;
  }

  async subscribe(options: PushSubscriptionOptionsInit = {}): Promise<FakePushSubscription> {
    this.subscribeCalls.push(options);
    if (!options.userVisibleOnly) throw new DOMException('userVisibleOnly must be true', 'NotAllowedError');
    if (this.state.permission !== 'granted') throw new DOMException('Permission denied', 'NotAllowedError');
    if (!this.hasActiveWorker()) throw new DOMException('No active service worker', 'InvalidStateError');
    const key = toArrayBuffer(options.applicationServerKey);
    if (!key) throw new DOMException('applicationServerKey is required', 'NotSupportedError');
    if (this.current) {
      if (sameKey(this.current.options.applicationServerKey, key)) return this.current;
      throw new DOMException('A subscription with a different applicationServerKey already exists', 'InvalidStateError');
    }
    this.state.created += 1;
    this.current = new FakePushSubscription(this, `https://push.example/send/${this.state.created}`, key);
    return this.current;
  }

  /** What a site's old code, or a browser, left behind: a subscription made with another key. */
  adopt(endpoint: string, key: ArrayBuffer | null): FakePushSubscription {
    this.current = new FakePushSubscription(this, endpoint, key);
    return this.current;
  }
}

export function sameKey(left: ArrayBuffer | null, right: ArrayBuffer | null): boolean {
  if (!left || !right) return left === right;
  const a = new Uint8Array(left);
  const b = new Uint8Array(right);
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}
