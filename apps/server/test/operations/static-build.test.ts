// Issue 17, 7d: the dashboard build is read once and served from memory, so
// a build replaced (or removed) while `serve` runs changes nothing it
// answers, and a build caught half-replaced at start is refused clearly.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSdkBuild, readWebBuild, StaticBuildError } from '../../src/platform/static-files';
import { createTestApp, type TestApp } from '../support/test-app';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function fakeBuild(asset = 'app-1.js'): { web: string; sdk: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-build-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const web = path.join(root, 'web');
  const sdk = path.join(root, 'sdk');
  fs.mkdirSync(path.join(web, 'assets'), { recursive: true });
  fs.mkdirSync(sdk);
  fs.writeFileSync(path.join(web, 'index.html'), `<!doctype html><html><head><script type="module" src="/assets/${asset}"></script></head><body>Herald</body></html>`);
  fs.writeFileSync(path.join(web, 'assets', asset), 'console.log("dashboard")');
  fs.writeFileSync(path.join(web, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  fs.writeFileSync(path.join(sdk, 'herald.js'), 'window.Herald = {}');
  return { web, sdk };
}

async function appWith(dirs: { web: string; sdk: string }): Promise<TestApp> {
  const t = await createTestApp({ staticDirs: dirs });
  cleanups.push(() => t.close());
  return t;
}

describe('the dashboard build, read once', () => {
  it('keeps serving the dashboard, its assets and the SDK after the build folder is removed', async () => {
    const dirs = fakeBuild();
    const t = await appWith(dirs);
    const index = await t.request('GET', '/');
    expect(index.status).toBe(200);
    expect(index.body).toContain('/assets/app-1.js');

    fs.rmSync(dirs.web, { recursive: true, force: true });
    fs.rmSync(dirs.sdk, { recursive: true, force: true });

    for (const url of ['/', '/settings', '/notifications/new', '/index.html']) {
      const page = await t.request('GET', url);
      expect(page.status, url).toBe(200);
      expect(page.body).toBe(index.body);
      expect(page.headers['cache-control']).toBe('no-cache');
    }
    const asset = await t.request('GET', '/assets/app-1.js');
    expect(asset.status).toBe(200);
    expect(asset.body).toBe('console.log("dashboard")');
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const icon = await t.request('GET', '/favicon.svg');
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    const sdk = await t.request('GET', '/sdk/herald.js');
    expect(sdk.status).toBe(200);
    expect(sdk.headers['access-control-allow-origin']).toBe('*');
    expect((await t.request('GET', '/assets/missing.js')).status).toBe(404);
    expect((await t.request('GET', '/sdk/missing.js')).status).toBe(404);
    expect((await t.request('GET', '/api/nothing-here')).status).toBe(404);

    // Revalidation: the same file answers 304 to its ETag.
    const again = await t.request('GET', '/assets/app-1.js', { headers: { 'if-none-match': String(asset.headers.etag) } });
    expect(again.status).toBe(304);
  });

  it('refuses, with what to do, a build whose index.html loads assets that are not there', async () => {
    const dirs = fakeBuild();
    fs.rmSync(path.join(dirs.web, 'assets', 'app-1.js'));
    const reading = readWebBuild(dirs.web, 3, 10);
    await expect(reading).rejects.toBeInstanceOf(StaticBuildError);
    await expect(readWebBuild(dirs.web, 2, 10)).rejects.toThrow(
      `The dashboard build in ${dirs.web} changed while Herald was reading it (index.html loads /assets/app-1.js, which is not in the build). Wait for \`npm run build\` to finish, then start Herald again.`,
    );
    // As buildApp (and so `serve`) does.
    await expect(createTestApp({ staticDirs: dirs })).rejects.toThrow(/changed while Herald was reading it/);
  });

  it('reads the build again when it is caught half-replaced, and takes the finished one', async () => {
    const dirs = fakeBuild();
    // The new index.html is in place, its script not yet.
    fs.writeFileSync(path.join(dirs.web, 'index.html'), '<script type="module" src="/assets/app-2.js"></script>');
    setTimeout(() => fs.writeFileSync(path.join(dirs.web, 'assets', 'app-2.js'), 'console.log(2)'), 30);
    const files = await readWebBuild(dirs.web, 10, 50);
    expect(files.get('/assets/app-2.js')?.body.toString()).toBe('console.log(2)');
  });

  // A build being replaced: Vite empties dist/ before it writes. Taking that
  // folder as "not built" answered 503 "not built yet" for the life of the
  // process while /readyz said 200.
  it('refuses, after reading it again a few times, a dashboard folder without index.html, saying what to do', async () => {
    const dirs = fakeBuild();
    fs.rmSync(path.join(dirs.web, 'index.html'));
    const message = `The dashboard build in ${dirs.web} has no index.html: a build is still being written there, or one was interrupted. Wait for \`npm run build\` to finish (or run it again), then start Herald again.`;
    const started = Date.now();
    await expect(readWebBuild(dirs.web, 3, 100)).rejects.toThrow(new StaticBuildError(message));
    // It waited between its three reads before giving up.
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    // A folder emptied and left empty is the same.
    fs.rmSync(dirs.web, { recursive: true, force: true });
    fs.mkdirSync(dirs.web);
    await expect(readWebBuild(dirs.web, 2, 10)).rejects.toThrow(message);
    // As buildApp (and so `serve`, which prints it and exits 2) does.
    await expect(createTestApp({ staticDirs: dirs })).rejects.toThrow(message);
  });

  it('takes the dashboard build once its index.html is written while it waits', async () => {
    const dirs = fakeBuild();
    const index = fs.readFileSync(path.join(dirs.web, 'index.html'));
    fs.rmSync(path.join(dirs.web, 'index.html'));
    setTimeout(() => fs.writeFileSync(path.join(dirs.web, 'index.html'), index), 30);
    const files = await readWebBuild(dirs.web, 10, 50);
    expect(files.get('/index.html')?.body.equals(index)).toBe(true);
  });

  it('treats the SDK folder the same: without herald.js it waits, then refuses; herald.js written meanwhile is taken', async () => {
    const dirs = fakeBuild();
    fs.rmSync(path.join(dirs.sdk, 'herald.js'));
    fs.writeFileSync(path.join(dirs.sdk, 'herald-sw.js'), 'self.x = 1');
    const message = `The SDK build in ${dirs.sdk} has no herald.js: a build is still being written there, or one was interrupted. Wait for \`npm run build\` to finish (or run it again), then start Herald again.`;
    await expect(readSdkBuild(dirs.sdk, 3, 10)).rejects.toThrow(new StaticBuildError(message));
    await expect(createTestApp({ staticDirs: dirs })).rejects.toThrow(message);

    setTimeout(() => fs.writeFileSync(path.join(dirs.sdk, 'herald.js'), 'window.Herald = {}'), 30);
    const files = await readSdkBuild(dirs.sdk, 10, 50);
    expect([...files.keys()].sort()).toEqual(['/herald-sw.js', '/herald.js']);
    const t = await appWith(dirs);
    expect((await t.request('GET', '/sdk/herald.js')).body).toBe('window.Herald = {}');
  });

  it('says the dashboard is not built when there is no build at all', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-nobuild-'));
    cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
    const t = await appWith({ web: path.join(root, 'web'), sdk: path.join(root, 'sdk') });
    const page = await t.request('GET', '/settings');
    expect(page.status).toBe(503);
    expect(page.body).toMatch(/has not been built yet/);
  });
});
