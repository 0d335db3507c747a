// When the opt-in prompt may appear (Settings → Installation): from the
// visitor's Nth page view, N seconds after the page loaded, and not for N
// days after "later" (or a closed browser prompt). Kept in localStorage; with
// no storage, "later" could not be remembered, so the prompt is not shown.

export const PAGE_VIEWS_KEY = 'herald:page-views';
export const DISMISSED_AT_KEY = 'herald:prompt-dismissed-at';
export const DAY_MS = 24 * 60 * 60 * 1000;

/** Counts this page view and answers how many the visitor has made; 0 when storage is unavailable. */
export function countPageView(): number {
  try {
    const views = (Number(localStorage.getItem(PAGE_VIEWS_KEY)) || 0) + 1;
    localStorage.setItem(PAGE_VIEWS_KEY, String(views));
    return views;
  } catch {
    return 0;
  }
}

/** Whether "later" was chosen less than `days` days ago (true when storage is unavailable). */
export function dismissedWithin(days: number, now: number): boolean {
  try {
    const dismissedAt = Number(localStorage.getItem(DISMISSED_AT_KEY));
    return dismissedAt > 0 && now >= dismissedAt && now - dismissedAt < days * DAY_MS;
  } catch {
    return true;
  }
}

export function rememberDismissal(now: number): void {
  try {
    localStorage.setItem(DISMISSED_AT_KEY, String(now));
  } catch {
    // Storage unavailable: dismissedWithin() already holds the prompt back.
  }
}
