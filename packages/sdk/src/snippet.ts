/**
 * Herald's page script, served as /sdk/herald.js and loaded with
 * <script src=".../sdk/herald.js" data-site-id="…" data-vapid-key="…" async>
 * (apps/server/src/features/sites/install-code.ts). It exposes `window.herald`
 * and then fires `herald:ready` on window, since an async script may run after
 * the site's own code.
 */
import { HeraldError } from './common/errors';
import { createHerald, emit, reportError, type HeraldApi, type HeraldInstance } from './page/herald';
import { startPrompt } from './page/prompts';
import { readScriptSettings, type PageSettings } from './page/script-settings';
import { offerTestDevice, takeTestDeviceCode } from './page/test-device-link';

declare global {
  interface Window {
    herald?: HeraldApi;
  }
}

function heraldScript(): HTMLScriptElement | null {
  const current = document.currentScript;
  if (current instanceof HTMLScriptElement && current.hasAttribute('data-site-id')) return current;
  return document.querySelector<HTMLScriptElement>('script[data-site-id][data-vapid-key]');
}

function start(): void {
  // Included twice: the first copy owns window.herald.
  if (window.herald) return;
  const script = heraldScript();
  if (!script) return;
  let instance: HeraldInstance;
  let settings: PageSettings;
  try {
    settings = readScriptSettings(script);
    instance = createHerald(settings);
  } catch (error) {
    console.error(`Herald: ${error instanceof HeraldError ? error.message : String(error)}`);
    return;
  }
  window.herald = instance.herald;
  emit('herald:ready', instance.herald);
  // A test-device link (made in Herald's setup checklist) takes the place of the prompt, even with data-prompt="manual".
  const testDeviceCode = takeTestDeviceCode();
  if (testDeviceCode) offerTestDevice(instance, testDeviceCode, reportError);
  else if (settings.prompt === 'auto') startPrompt(instance, settings, reportError);
}

start();
