/**
 * Herald's page script, served as /sdk/herald.js and loaded with
 * <script src=".../sdk/herald.js" data-site-id="…" data-vapid-key="…" async>
 * (apps/server/src/features/sites/install-code.ts). It exposes `window.herald`
 * and then fires `herald:ready` on window, since an async script may run after
 * the site's own code.
 */
import { HeraldError } from './shared/errors';
import { createHerald, emit, reportError, type HeraldApi } from './page/herald';
import { readScriptSettings } from './page/script-settings';
import { schedulePrompt } from './page/soft-prompt';

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
  let herald: HeraldApi;
  let prompt: 'auto' | 'manual';
  try {
    const settings = readScriptSettings(script);
    herald = createHerald(settings).herald;
    prompt = settings.prompt;
  } catch (error) {
    console.error(`Herald: ${error instanceof HeraldError ? error.message : String(error)}`);
    return;
  }
  window.herald = herald;
  emit('herald:ready', herald);
  if (prompt === 'auto') {
    schedulePrompt(herald, reportError);
  }
}

start();
