import type { HeraldInstance } from './herald';
import type { PageSettings } from './script-settings';
import { fetchPromptSettings, reportPromptShown } from './prompt-settings';
import { countPageView, dismissedWithin } from './prompt-timing';
import { armNativePrompt, showBell, showSlidePrompt, type PromptContext } from './soft-prompt';

function mayAsk(instance: HeraldInstance): boolean {
  // Not inside iframes: a prompt there would ask for the embedding site's visitors on someone else's page.
  return instance.herald.permission() === 'default' && window.top === window.self && !!document.body;
}

/**
 * data-prompt="auto": the prompt the owner chose (Settings → Installation),
 * from the visitor's Nth page view on, N seconds after the page loaded (and
 * the settings arrived, a few milliseconds later), not
 * for N days after "later". No prompt is fetched or shown once permission is
 * answered (or where push is unsupported); a granted visitor is the page-load
 * refresh's (herald.ts). Herald never asks on page load.
 */
export function startPrompt(instance: HeraldInstance, config: PageSettings, onError: (error: Error) => void): void {
  if (!mayAsk(instance)) return;
  const views = countPageView();
  void fetchPromptSettings(config).then((settings) => {
    if (views < settings.pageViews || dismissedWithin(settings.dismissDays, Date.now())) return;
    const ctx: PromptContext = {
      settings,
      permission: () => instance.herald.permission(),
      subscribe: (prompt) => instance.subscribeFrom(prompt),
      reportShown: (prompt) => void reportPromptShown(config, prompt),
      onError,
    };
    setTimeout(() => {
      if (!mayAsk(instance) || dismissedWithin(settings.dismissDays, Date.now())) return;
      if (settings.type === 'native') armNativePrompt(ctx);
      else if (settings.type === 'bell') showBell(ctx);
      else showSlidePrompt(ctx);
    }, settings.delaySeconds * 1000);
  });
}
