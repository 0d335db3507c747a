import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../apps/server/test/support/pg-cluster';
import { repoRoot } from './support/herald-server';

// `npm run dev` (CONTRIBUTING.md): the API server in watch mode and the Vite
// dev server together, the dashboard served by Vite with the API proxied.
describe('the daily loop: npm run dev', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-dev-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('starts both servers; the dashboard page and the proxied API answer on the Vite port, and Ctrl-C stops both', async () => {
    const [apiPort, webPort] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, [path.join(repoRoot, 'scripts/dev.mjs')], {
      cwd: repoRoot,
      env: { ...process.env, PORT: String(apiPort), HOST: '127.0.0.1', DEV_WEB_PORT: String(webPort), DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    try {
      const web = `http://localhost:${webPort}`;
      const deadline = Date.now() + 90_000;
      let page = '';
      let setup: { success?: boolean } = {};
      while (Date.now() < deadline) {
        try {
          page = await (await fetch(`${web}/`)).text();
          setup = (await (await fetch(`${web}/api/auth/setup`)).json()) as { success?: boolean };
          if (setup.success) break;
        } catch {
          // not listening yet
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(page, output).toContain('<div id="root">');
      // Vite's client script: the page is served with hot module replacement.
      expect(page).toContain('/@vite/client');
      expect(setup.success, output).toBe(true);
    } finally {
      child.kill('SIGINT');
      await exited;
    }
    // Both children are gone: nothing answers on either port any more.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await expect(fetch(`http://127.0.0.1:${apiPort}/api/auth/setup`)).rejects.toThrow();
  });
});
