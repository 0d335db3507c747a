// A Herald with its engine running in this process against the local push
// service, for tests of what gets sent.
import net from 'node:net';
import type { Clock } from '../../src/platform/clock';
import { createPushClient } from '../../src/roles';
import { startEngine, type Engine } from '../../src/engine';
import { PushService, type TestSubscription } from './push-service';
import { createTestApp, waitFor, type TestApp, type TestUser } from './test-app';

export interface DeliveryHarness {
  t: TestApp;
  push: PushService;
  engine: Engine;
  owner: TestUser;
  site: any;
  /**
   * An origin on 127.0.0.1 where nothing listens (connections are refused),
   * allowed like the push service: a push service Herald cannot reach.
   */
  unreachableOrigin: string;
  /**
   * Subscribes a browser of the push service through the public API; returns
   * its subscriber id and subscription. `unreachable`: its endpoint is on
   * `unreachableOrigin` instead. `applicationServerKey`: it was made for
   * another VAPID key (the push service refuses this site's signature).
   */
  subscribe(options?: { userAgent?: string; unreachable?: boolean; applicationServerKey?: string }): Promise<{ subscriberId: string; subscription: TestSubscription }>;
  /** Polls a notification until its status is one of `statuses`. */
  waitForStatus(notificationId: string, statuses: string[], timeoutMs?: number): Promise<any>;
  close(): Promise<void>;
}

let addressCounter = 0;

/** A port on 127.0.0.1 nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export async function createDeliveryHarness(options: { env?: Record<string, string>; clock?: Clock; engine?: boolean } = {}): Promise<DeliveryHarness> {
  const push = await PushService.start();
  const unreachableOrigin = `http://127.0.0.1:${await closedPort()}`;
  const t = await createTestApp({
    clock: options.clock,
    env: {
      EXTRA_PUSH_ORIGINS: `${push.origin},${unreachableOrigin}`,
      SCHEDULER_INTERVAL_MS: '50',
      DELIVERY_LEASE_SECONDS: '2',
      DELIVERY_RETRY_BASE_MS: '50',
      PUSH_TIMEOUT_MS: '2000',
      ...options.env,
    },
  });
  const engine = startEngine(t.ctx, { scheduler: options.engine !== false, worker: options.engine !== false, pushClient: createPushClient(t.config, t.ctx.metrics) });
  const owner = await t.createUser();
  const site = await t.createSite(owner.token, { name: 'Push Shop', url: 'https://push-shop.example' });

  return {
    t,
    push,
    engine,
    owner,
    site,
    unreachableOrigin,
    async subscribe({ userAgent = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', unreachable = false, applicationServerKey = site.vapid_public_key } = {}) {
      const created = push.createSubscription({ applicationServerKey });
      const subscription = unreachable ? { ...created, endpoint: created.endpoint.replace(push.origin, unreachableOrigin) } : created;
      addressCounter += 1;
      const response = await t.request('POST', `/api/public/sites/${site.id}/subscribers`, {
        body: { subscription: { endpoint: subscription.endpoint, keys: subscription.keys }, timezone: 'Europe/Paris', language: 'fr-FR' },
        headers: { 'user-agent': userAgent },
        remoteAddress: `198.51.${(addressCounter >> 8) & 255}.${addressCounter & 255}`,
      });
      if (response.status !== 201) throw new Error(`subscribe failed: ${response.status} ${JSON.stringify(response.body)}`);
      return { subscriberId: response.body.data.subscriber.id, subscription };
    },
    async waitForStatus(notificationId, statuses, timeoutMs = 15_000) {
      return waitFor(
        async () => {
          const response = await t.request('GET', `/api/notifications/${notificationId}`, { token: owner.token });
          return statuses.includes(response.body.data.notification.status) ? response.body.data.notification : undefined;
        },
        { timeoutMs, intervalMs: 25 },
      );
    },
    async close() {
      await engine.close();
      await t.close();
      await push.close();
    },
  };
}

export const notificationInput = (overrides: Record<string, unknown> = {}) => ({
  type: 'ONE_TIME',
  title: 'Summer sale',
  message: 'Everything 20% off until Sunday',
  destination_url: 'https://push-shop.example/sale',
  icon_url: 'https://push-shop.example/icon.png',
  image_url: null,
  segment_id: null,
  status: 'DRAFT',
  scheduled_at: null,
  ...overrides,
});
