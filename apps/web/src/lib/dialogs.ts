/**
 * The spec's "alert" and "confirm" (§2, §8) go through here, so the exact texts
 * reach the user through the browser's own accessible dialogs and tests can
 * intercept them by stubbing window.alert / window.confirm.
 */
export function notify(message: string): void {
  window.alert(message);
}

export function confirmAction(message: string): boolean {
  return window.confirm(message);
}
