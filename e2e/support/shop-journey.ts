// What most dashboard journeys start from: the local push service, a Herald
// `serve` process with its owner (the scheduler ticking every 250 ms), the
// owner's API signed in, one site in UTC, and a fresh Chromium. close() stops
// them all, whatever was started.
import { PushService } from '../../apps/server/test/support/push-service';
import { launchChromium, type BrowserSession } from './browser';
import { startHerald, type HeraldProcess } from './herald-server';
import { ownerApi } from './journey';

export const JOURNEY_OWNER = { email: 'owner@example.com', password: 'owner-password', name: 'Olive Owner' };

export interface ShopJourney {
  push: PushService;
  herald: HeraldProcess;
  api: ReturnType<typeof ownerApi>;
  site: { id: string; vapid_public_key: string };
  browser: BrowserSession;
  close(): Promise<void>;
}

export async function openShopJourney(options: {
  site: { name: string; url: string };
  /** More push-service origins Herald may send to (besides the local push service's). */
  extraPushOrigins?: string[];
  env?: Record<string, string>;
}): Promise<ShopJourney> {
  const started: Partial<ShopJourney> = {};
  const close = async () => {
    await started.browser?.close();
    await started.herald?.stop();
    started.herald?.cleanUp();
    await started.push?.close();
  };
  try {
    const push = (started.push = await PushService.start());
    const herald = (started.herald = await startHerald({
      ADMIN_EMAIL: JOURNEY_OWNER.email,
      ADMIN_PASSWORD: JOURNEY_OWNER.password,
      ADMIN_NAME: JOURNEY_OWNER.name,
      EXTRA_PUSH_ORIGINS: [push.origin, ...(options.extraPushOrigins ?? [])].join(','),
      SCHEDULER_INTERVAL_MS: '250',
      ...options.env,
    }));
    const api = ownerApi(herald.url);
    await api.signIn(JOURNEY_OWNER.email, JOURNEY_OWNER.password);
    const site = (await api.call('POST', '/sites', { name: options.site.name, url: options.site.url, settings: { timezone: 'UTC' } })).data.site;
    const browser = (started.browser = await launchChromium());
    return { push, herald, api, site, browser, close };
  } catch (error) {
    await close();
    throw error;
  }
}
