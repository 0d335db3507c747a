// "No dead ends" (issue 11): after Herald is upgraded, a tab that was open
// still asks for the old build's page chunks, which are gone. Instead of the
// error screen, the page reloads once, which fetches the new build. A second
// failure soon after is a real problem: it goes to the error screen, which
// says what happened.

const RELOAD_KEY = 'herald:chunk-reload';
/** Within this long of a reload, a failing chunk is not reloaded for again (no reload loop). */
const RELOAD_GUARD_MS = 30_000;

/** The messages browsers give a dynamic import whose file failed to load. */
export function isChunkLoadError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    error.name === 'ChunkLoadError' ||
    /Failed to fetch dynamically imported module|error loading dynamically imported module|Importing a module script failed|Unable to preload CSS/i.test(error.message)
  );
}

function reloadedRecently(now: number): boolean {
  try {
    const at = Number(window.sessionStorage.getItem(RELOAD_KEY));
    return Number.isFinite(at) && now - at < RELOAD_GUARD_MS;
  } catch {
    // Storage blocked: never risk a loop.
    return true;
  }
}

/**
 * Loads a page's module; when its chunk cannot be loaded, reloads the page
 * once (the promise then never settles: the page is going away).
 */
export async function importOrReload<T>(load: () => Promise<T>, reload: () => void = () => window.location.reload()): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const now = Date.now();
    if (!isChunkLoadError(error) || reloadedRecently(now)) throw error;
    try {
      window.sessionStorage.setItem(RELOAD_KEY, String(now));
    } catch {
      throw error;
    }
    reload();
    return new Promise<T>(() => undefined);
  }
}
