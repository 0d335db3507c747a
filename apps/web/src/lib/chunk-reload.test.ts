import { afterEach, describe, expect, it, vi } from 'vitest';
import { importOrReload, isChunkLoadError } from './chunk-reload';

// Issue 11 "no dead ends": a page chunk gone after an upgrade reloads the page
// once, instead of the error screen; a second failure right after is shown.
describe('importOrReload', () => {
  afterEach(() => window.sessionStorage.clear());

  const gone = () => Promise.reject(new TypeError('Failed to fetch dynamically imported module: http://herald.test/assets/page-abc.js'));

  it('reloads once when a page chunk cannot be fetched, and never settles meanwhile', async () => {
    const reload = vi.fn();
    let settled = false;
    void importOrReload(gone, reload).then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reload).toHaveBeenCalledTimes(1);
    expect(settled).toBe(false);
  });

  it('does not reload again right after a reload: the error reaches the error screen', async () => {
    const reload = vi.fn();
    void importOrReload(gone, reload);
    await new Promise((resolve) => setTimeout(resolve, 0));
    await expect(importOrReload(gone, reload)).rejects.toThrow('Failed to fetch dynamically imported module');
    expect(reload).toHaveBeenCalledTimes(1);
  });

  it('passes other errors and successful loads through untouched', async () => {
    const reload = vi.fn();
    await expect(importOrReload(() => Promise.reject(new Error('boom')), reload)).rejects.toThrow('boom');
    await expect(importOrReload(() => Promise.resolve('page'), reload)).resolves.toBe('page');
    expect(reload).not.toHaveBeenCalled();
  });

  it('knows the chunk errors of Chromium, Firefox and Safari', () => {
    expect(isChunkLoadError(new TypeError('Failed to fetch dynamically imported module: x'))).toBe(true);
    expect(isChunkLoadError(new TypeError('error loading dynamically imported module: x'))).toBe(true);
    expect(isChunkLoadError(new TypeError('Importing a module script failed.'))).toBe(true);
    expect(isChunkLoadError(new Error('Something else'))).toBe(false);
    expect(isChunkLoadError('text')).toBe(false);
  });
});
