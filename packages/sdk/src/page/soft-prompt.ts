import { HeraldError } from '../shared/errors';
import type { HeraldApi } from './herald';

/** Long enough that the visitor has seen the page first; browsers penalise prompts on arrival. */
export const PROMPT_DELAY_MS = 5000;
export const DISMISS_FOR_MS = 7 * 24 * 60 * 60 * 1000;
export const DISMISSED_AT_KEY = 'herald:prompt-dismissed-at';

function dismissedRecently(now: number): boolean {
  try {
    const dismissedAt = Number(localStorage.getItem(DISMISSED_AT_KEY));
    return dismissedAt > 0 && now - dismissedAt < DISMISS_FOR_MS;
  } catch {
    // No storage means "Not now" could not be remembered: don't ask on every page.
    return true;
  }
}

function rememberDismissal(): void {
  try {
    localStorage.setItem(DISMISSED_AT_KEY, String(Date.now()));
  } catch {
    // Storage unavailable: dismissedRecently() already holds the prompt back.
  }
}

export function shouldShowPrompt(herald: HeraldApi): boolean {
  return herald.permission() === 'default' && !dismissedRecently(Date.now()) && window.top === window.self && !!document.body;
}

// Scoped by the shadow root: nothing here reaches the host page, and `all: initial`
// on the host keeps the page's inherited styles out.
const PROMPT_CSS = `
:host{all:initial!important}
.b{position:fixed;z-index:2147483647;bottom:16px;left:16px;right:16px;max-width:380px;box-sizing:border-box;display:flex;flex-wrap:wrap;align-items:center;gap:12px;padding:16px;background:#fff;color:#111827;border:1px solid #d1d5db;border-radius:10px;box-shadow:0 8px 24px rgba(0,0,0,.18);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
p{margin:0;flex:1 1 180px;font-weight:600}
.a{display:flex;gap:8px}
button{font:inherit;font-weight:600;cursor:pointer;min-height:40px;padding:8px 16px;border-radius:8px;border:1px solid #d1d5db;background:#fff;color:#1f2937}
button.y{background:#1d4ed8;border-color:#1d4ed8;color:#fff}
button:hover{filter:brightness(.95)}
button:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}
`;

function attachStyles(root: ShadowRoot): void {
  // A constructed stylesheet is not subject to the host page's CSP style-src;
  // a <style> element is the fallback for browsers without one.
  if ('adoptedStyleSheets' in root && typeof CSSStyleSheet.prototype.replaceSync === 'function') {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(PROMPT_CSS);
    root.adoptedStyleSheets = [sheet];
    return;
  }
  const style = document.createElement('style');
  style.textContent = PROMPT_CSS;
  root.append(style);
}

function button(label: string, className: string): HTMLButtonElement {
  const element = document.createElement('button');
  element.type = 'button';
  element.className = className;
  element.textContent = label;
  return element;
}

/**
 * The soft prompt: a small non-modal banner that never takes focus. It is the
 * first element of <body> so keyboard and screen-reader users meet it first;
 * Escape inside it means "Not now". The native permission prompt only appears
 * after "Allow" (inside that click), never on page load.
 */
export function showPrompt(herald: HeraldApi, onError: (error: Error) => void): HTMLElement {
  const host = document.createElement('div');
  host.setAttribute('data-herald-prompt', '');
  const root = host.attachShadow({ mode: 'open' });
  attachStyles(root);

  const banner = document.createElement('div');
  banner.className = 'b';
  banner.setAttribute('role', 'dialog');
  banner.setAttribute('aria-labelledby', 'herald-prompt-text');
  const text = document.createElement('p');
  text.id = 'herald-prompt-text';
  text.textContent = `Get notifications from ${location.hostname}?`;
  const actions = document.createElement('div');
  actions.className = 'a';
  const allow = button('Allow', 'y');
  const later = button('Not now', 'n');
  actions.append(allow, later);
  banner.append(text, actions);
  root.append(banner);

  const notNow = () => {
    rememberDismissal();
    host.remove();
  };
  allow.addEventListener('click', () => {
    host.remove();
    // subscribe() asks for permission synchronously, within this click.
    herald.subscribe().catch((error: unknown) => {
      // The visitor's own answer is not an error; a closed native prompt counts as "Not now".
      if (error instanceof HeraldError && error.code === 'permission-dismissed') return rememberDismissal();
      if (error instanceof HeraldError && error.code === 'permission-denied') return;
      onError(error instanceof Error ? error : new Error(String(error)));
    });
  });
  later.addEventListener('click', notNow);
  banner.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') notNow();
  });

  document.body.prepend(host);
  return host;
}

export function schedulePrompt(herald: HeraldApi, onError: (error: Error) => void): void {
  setTimeout(() => {
    if (shouldShowPrompt(herald)) showPrompt(herald, onError);
  }, PROMPT_DELAY_MS);
}
