import { HeraldError } from '../common/errors';
import { showBanner } from './banner';
import type { HeraldInstance } from './herald';
import { DEFAULT_PROMPT_SETTINGS } from './prompt-settings';

/** The query parameter of a test-device link (`https://shop.example/?herald_test=CODE`, made in Herald's setup checklist). */
export const TEST_DEVICE_PARAMETER = 'herald_test';

/**
 * The code of a test-device link this page was opened with, or null. It is
 * taken out of the address bar at once, so a bookmark or a shared link does
 * not carry the one-time code on.
 */
export function takeTestDeviceCode(): string | null {
  const url = new URL(location.href);
  const code = url.searchParams.get(TEST_DEVICE_PARAMETER)?.trim();
  if (!url.searchParams.has(TEST_DEVICE_PARAMETER)) return null;
  url.searchParams.delete(TEST_DEVICE_PARAMETER);
  try {
    history.replaceState(history.state, '', url.pathname + url.search + url.hash);
  } catch {
    // A sandboxed page may not rewrite its address; the code is used once anyway.
  }
  return code || null;
}

function failureMessage(error: unknown): string {
  if (error instanceof HeraldError && error.code === 'permission-denied') return error.message;
  if (error instanceof HeraldError && error.code === 'permission-dismissed') {
    return 'Notifications were not allowed, so this browser is not a test device. Open the link again to try once more.';
  }
  const message = error instanceof Error ? error.message.replace(/^Herald refused the request: /, '') : String(error);
  return `This browser could not become a test device: ${message}`;
}

/**
 * The owner opened a test-device link: offer to make this browser a test
 * device. "Make test device" subscribes (asking for permission inside that
 * click) and claims the link's code; the banner then says what happened.
 */
export function offerTestDevice(instance: HeraldInstance, code: string, onError: (error: Error) => void): HTMLElement | null {
  if (window.top !== window.self || !document.body) return null;
  const d = DEFAULT_PROMPT_SETTINGS;
  const banner = showBanner({
    headline: 'Make this browser a test device?',
    text: `You opened a test-device link from Herald. Allow notifications from ${location.hostname} to receive the tests you send from Herald here; nobody else gets them.`,
    acceptLabel: 'Make test device',
    laterLabel: 'Cancel',
    position: 'bottom',
    colors: { background: d.backgroundColor, text: d.textColor, button: d.buttonColor, buttonText: d.buttonTextColor },
    marker: 'data-herald-test-device',
  });
  if (instance.herald.permission() === 'unsupported') {
    banner.showMessage(
      'This browser cannot receive web push on this page. On iPhone and iPad, add the site to the Home Screen and open the link from there.',
    );
    return banner.host;
  }
  banner.accept.addEventListener('click', () => {
    // Inside the click: subscribeFrom() asks for permission synchronously.
    const subscribing = instance.subscribeFrom(undefined);
    banner.showMessage('Setting up this browser…');
    subscribing
      .then(() => instance.claimTestDevice(code))
      .then(
        (device) => banner.showMessage(`This browser is now a test device: ${device.name}. Use “Send test” in Herald to reach it.`),
        (error: unknown) => {
          banner.showMessage(failureMessage(error));
          if (!(error instanceof HeraldError && (error.code === 'permission-denied' || error.code === 'permission-dismissed'))) {
            onError(error instanceof Error ? error : new Error(String(error)));
          }
        },
      );
  });
  banner.later.addEventListener('click', () => banner.remove());
  return banner.host;
}
