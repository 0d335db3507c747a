/**
 * Lets non-React code (the API client's 401 handling) read the current path
 * and navigate through the router instead of reloading the page. The router
 * registers itself at start; without one, the browser's location is used.
 */
export interface Navigator {
  pathname: () => string;
  navigate: (path: string, options: { replace: boolean }) => void;
}

const browserNavigator: Navigator = {
  pathname: () => window.location.pathname,
  navigate: (path, options) => (options.replace ? window.location.replace(path) : window.location.assign(path)),
};

let current: Navigator = browserNavigator;

export function registerNavigator(navigator: Navigator | null): void {
  current = navigator ?? browserNavigator;
}

export function currentPathname(): string {
  return current.pathname();
}

export function navigateTo(path: string, options: { replace: boolean }): void {
  current.navigate(path, options);
}
