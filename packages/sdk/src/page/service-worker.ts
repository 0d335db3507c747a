import { configToQuery } from '../common/config';
import { HeraldError } from '../common/errors';
import { HERALD_WORKER_PATH, type PageSettings } from './script-settings';

/** Push needs the worker to control the whole site, so it is registered at the root. */
export const ROOT_SCOPE = '/';

export function pushSupported(): boolean {
  // `serviceWorker` is only exposed in secure contexts; iOS Safari exposes
  // PushManager only to home-screen web apps.
  return (
    typeof navigator !== 'undefined' &&
    'serviceWorker' in navigator &&
    typeof PushManager !== 'undefined' &&
    typeof Notification !== 'undefined'
  );
}

export function workerScriptUrl(settings: PageSettings): string {
  return settings.ownWorker ?? `${HERALD_WORKER_PATH}?${configToQuery(settings)}`;
}

function pathOf(url: string): string {
  return new URL(url, location.href).pathname;
}

/** The registration that controls the site root, if any. */
export function rootRegistration(): Promise<ServiceWorkerRegistration | undefined> {
  return navigator.serviceWorker.getRegistration(ROOT_SCOPE);
}

/**
 * Registers Herald's worker (or the site's own one, see data-worker) at the root
 * and resolves once it is active: PushManager.subscribe() rejects while a
 * registration has no active worker (Push API §subscribe, step 6).
 */
export async function registerWorker(settings: PageSettings): Promise<ServiceWorkerRegistration> {
  const scriptUrl = workerScriptUrl(settings);
  const existing = await rootRegistration();
  const existingWorker = existing?.active ?? existing?.waiting ?? existing?.installing;
  if (existingWorker && pathOf(existingWorker.scriptURL) !== pathOf(scriptUrl)) {
    // One scope holds one worker: registering ours would silently replace the
    // site's own (and break its offline support or its own push).
    const theirs = pathOf(existingWorker.scriptURL);
    throw new HeraldError(
      'worker-failed',
      `Another service worker (${theirs}) controls this site. Add importScripts("${settings.api}/sdk/herald-sw.js") to it and set data-worker="${theirs}" on the Herald script tag.`,
    );
  }
  let registration: ServiceWorkerRegistration;
  try {
    registration = await navigator.serviceWorker.register(
      scriptUrl,
      // updateViaCache 'none' lets a new Herald worker (an imported script)
      // reach visitors without waiting for HTTP caches; a site's own worker
      // keeps the options the site chose.
      settings.ownWorker ? { scope: ROOT_SCOPE } : { scope: ROOT_SCOPE, updateViaCache: 'none' },
    );
  } catch (error) {
    throw new HeraldError(
      'worker-failed',
      `Could not register the service worker ${pathOf(scriptUrl)}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return waitUntilActive(registration, pathOf(scriptUrl));
}

function waitUntilActive(registration: ServiceWorkerRegistration, path: string): Promise<ServiceWorkerRegistration> {
  const failed = () =>
    new HeraldError('worker-failed', `The service worker ${path} failed to install; check that it is served from the site root.`);
  if (registration.active) return Promise.resolve(registration);
  const pending = registration.installing ?? registration.waiting;
  if (!pending) return Promise.reject(failed());
  return new Promise((resolve, reject) => {
    const onStateChange = () => {
      if (registration.active) {
        pending.removeEventListener('statechange', onStateChange);
        resolve(registration);
      } else if (pending.state === 'redundant') {
        pending.removeEventListener('statechange', onStateChange);
        reject(failed());
      }
    };
    pending.addEventListener('statechange', onStateChange);
  });
}
