import { HeraldError } from '../common/errors';
import { attachStyles, showBanner } from './banner';
import type { HeraldPermission, PromptType } from './herald';
import type { PromptSettings } from './prompt-settings';
import { rememberDismissal } from './prompt-timing';

/** What a prompt needs from Herald; `subscribe` asks for permission synchronously, so it is called inside the click. */
export interface PromptContext {
  settings: PromptSettings;
  permission(): HeraldPermission;
  subscribe(prompt: PromptType): Promise<{ id: string }>;
  reportShown(prompt: PromptType): void;
  onError(error: Error): void;
}

export function promptHeadline(settings: PromptSettings): string {
  return settings.headline || `Get notifications from ${location.hostname}?`;
}

/**
 * Handles the outcome of a prompt's subscribe(): the visitor's own answer is
 * no error; closing the browser's prompt counts as "later". `done` runs when
 * the prompt has nothing more to offer (subscribed, blocked or dismissed).
 */
function settle(ctx: PromptContext, subscribing: Promise<unknown>, done: () => void): void {
  subscribing.then(done, (error: unknown) => {
    if (error instanceof HeraldError && error.code === 'permission-dismissed') {
      rememberDismissal(Date.now());
      return done();
    }
    if (error instanceof HeraldError && error.code === 'permission-denied') return done();
    ctx.onError(error instanceof Error ? error : new Error(String(error)));
  });
}

/**
 * The soft "slide-down" prompt: Herald's banner with the owner's texts and
 * colours. The browser's own prompt appears only after its accept button,
 * inside that click: the user gesture Safari (and Firefox) require.
 * "Later" (or Escape) hides it for the configured days.
 */
export function showSlidePrompt(ctx: PromptContext): HTMLElement {
  const { settings } = ctx;
  const banner = showBanner({
    headline: promptHeadline(settings),
    text: settings.text,
    acceptLabel: settings.acceptLabel,
    laterLabel: settings.laterLabel,
    position: settings.position,
    colors: { background: settings.backgroundColor, text: settings.textColor, button: settings.buttonColor, buttonText: settings.buttonTextColor },
    marker: 'data-herald-prompt',
  });
  ctx.reportShown('slide');
  const later = () => {
    rememberDismissal(Date.now());
    banner.remove();
  };
  banner.accept.addEventListener('click', () => {
    banner.remove();
    settle(ctx, ctx.subscribe('slide'), () => undefined);
  });
  banner.later.addEventListener('click', later);
  banner.host.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') later();
  });
  return banner.host;
}

const BELL_CSS = `
:host{all:initial!important}
button{position:fixed;z-index:2147483646;right:16px;width:56px;height:56px;border-radius:50%;border:0;display:flex;align-items:center;justify-content:center;cursor:pointer;background:var(--btn);color:var(--btn-fg);box-shadow:0 6px 18px rgba(0,0,0,.25)}
button.bottom{bottom:16px}
button.top{top:16px}
button:hover{filter:brightness(.95)}
button:focus-visible{outline:3px solid var(--btn);outline-offset:3px}
svg{width:26px;height:26px}
`;

/** A bell icon, drawn with DOM calls (no markup parsing on the customer's page). */
function bellIcon(): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('fill', 'none');
  svg.setAttribute('stroke', 'currentColor');
  svg.setAttribute('stroke-width', '2');
  svg.setAttribute('stroke-linecap', 'round');
  svg.setAttribute('aria-hidden', 'true');
  for (const d of ['M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9', 'M10.3 21a1.94 1.94 0 0 0 3.4 0']) {
    const path = document.createElementNS(ns, 'path');
    path.setAttribute('d', d);
    svg.append(path);
  }
  return svg;
}

/**
 * The bell: a round button in a corner of the page, always at hand, never in
 * the way. A click subscribes (inside that click); it goes away once the
 * visitor has answered.
 */
export function showBell(ctx: PromptContext): HTMLElement {
  const { settings } = ctx;
  const host = document.createElement('div');
  host.setAttribute('data-herald-bell', '');
  const root = host.attachShadow({ mode: 'open' });
  attachStyles(root, BELL_CSS);
  const bell = document.createElement('button');
  bell.type = 'button';
  bell.className = settings.position;
  bell.setAttribute('aria-label', promptHeadline(settings));
  bell.title = promptHeadline(settings);
  bell.style.setProperty('--btn', settings.buttonColor);
  bell.style.setProperty('--btn-fg', settings.buttonTextColor);
  bell.append(bellIcon());
  root.append(bell);
  document.body.append(host);
  ctx.reportShown('bell');
  bell.addEventListener('click', () => settle(ctx, ctx.subscribe('bell'), () => host.remove()));
  return host;
}

/**
 * The browser's own prompt. Browsers ignore (Safari, Firefox) or quieten
 * (Chrome) a permission request made without a user gesture, so it is asked
 * at the visitor's next click or key press once the timing rules are met.
 * Answers a function that disarms it.
 */
export function armNativePrompt(ctx: PromptContext): () => void {
  const disarm = () => {
    document.removeEventListener('click', onGesture, true);
    document.removeEventListener('keydown', onGesture, true);
  };
  function onGesture(event: Event): void {
    // Escape is no user activation (HTML, "activation-triggering input event"): the browser would not show its
    // prompt, and the attempt would still count as a dismissal.
    if (event instanceof KeyboardEvent && event.key === 'Escape') return;
    disarm();
    if (ctx.permission() !== 'default') return;
    // subscribe() asks for permission synchronously, within this gesture.
    const subscribing = ctx.subscribe('native');
    ctx.reportShown('native');
    settle(ctx, subscribing, () => undefined);
  }
  document.addEventListener('click', onGesture, true);
  document.addEventListener('keydown', onGesture, true);
  return disarm;
}
