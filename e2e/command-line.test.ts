import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot, startHerald } from './support/herald-server';

const run = promisify(execFile);
const main = path.join(repoRoot, 'apps/server/dist/main.js');

// The self-hoster's other doors: migrate, create a user, reset a password,
// and a clear refusal of a bad configuration.
describe('the herald command line', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-cli-'));
  const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('migrates, creates a user, resets their password, and that user signs in', async () => {
    const migrated = await run(process.execPath, [main, 'migrate'], { env });
    expect(migrated.stdout).toMatch(/Applied: 0001_accounts_and_sites/);
    expect((await run(process.execPath, [main, 'migrate'], { env })).stdout).toMatch(/up to date/);
    // docs/security.md "Secrets on disk": the database and the secret are for Herald's user only.
    for (const file of ['herald.db', 'secret.key']) expect((fs.statSync(path.join(dataDir, file)).mode & 0o777).toString(8), file).toBe('600');
    expect((fs.statSync(dataDir).mode & 0o777).toString(8)).toBe('700');

    const created = await run(process.execPath, [main, 'user', 'create', '--email', 'Cli@Example.com', '--name', 'Cli User', '--password', 'first-password'], { env });
    expect(created.stdout).toMatch(/Created user cli@example.com/);
    const reset = await run(process.execPath, [main, 'user', 'reset-password', '--email', 'cli@example.com'], { env: { ...env, HERALD_PASSWORD: 'second-password' } });
    expect(reset.stdout).toMatch(/Password reset for cli@example.com/);

    const herald = await startHerald({ DATA_DIR: dataDir });
    try {
      const login = (password: string) =>
        fetch(`${herald.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'cli@example.com', password }) });
      expect((await login('first-password')).status).toBe(401);
      expect((await login('second-password')).status).toBe(200);
      // A user exists, so no setup link is printed.
      expect(herald.output()).not.toContain('/setup?token=');
    } finally {
      await herald.stop();
    }
  });

  it('prints the one-time setup link on a line of its own for a person at a terminal, and as a JSON field for a log file', async () => {
    // LOG_FORMAT=pretty is what a terminal (TTY) gets by default; a pipe gets JSON lines.
    const pretty = await startHerald({ LOG_FORMAT: 'pretty' });
    try {
      const lines = pretty.output().split('\n');
      const linkLine = lines.find((line) => line.includes('/setup?token='));
      expect(linkLine?.trim()).toMatch(new RegExp(`^${pretty.url.replace(/[.]/g, '\\.')}/setup\\?token=[\\w-]+$`));
      expect(pretty.output()).not.toMatch(/^\{"level"/m);
    } finally {
      await pretty.stop();
      pretty.cleanUp();
    }
    const json = await startHerald();
    try {
      const lines = json.output().split('\n').filter((line) => line.startsWith('{'));
      expect(lines.length).toBeGreaterThan(0);
      const setup = lines.map((line) => JSON.parse(line) as { setupUrl?: string }).find((entry) => entry.setupUrl);
      expect(setup?.setupUrl).toMatch(new RegExp(`^${json.url.replace(/[.]/g, '\\.')}/setup\\?token=[\\w-]+$`));
    } finally {
      await json.stop();
      json.cleanUp();
    }
  });

  it('refuses a bad configuration with the variable named, and an unknown user', async () => {
    const bad = await run(process.execPath, [main, 'serve'], { env: { ...env, PORT: 'eighty' } }).catch((error: { code: number; stderr: string }) => error);
    expect((bad as { code: number }).code).toBe(78);
    expect((bad as { stderr: string }).stderr).toMatch(/Invalid configuration:\n {2}- PORT: must be a number/);
    const unknown = await run(process.execPath, [main, 'user', 'reset-password', '--email', 'nobody@example.com', '--password', 'whatever-123'], { env }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect((unknown as { code: number }).code).toBe(1);
    expect((unknown as { stderr: string }).stderr).toMatch(/No user with email nobody@example.com/);
    const worker = await run(process.execPath, [main, 'worker'], { env }).catch((error: { code: number; stderr: string }) => error);
    expect((worker as { stderr: string }).stderr).toMatch(/set REDIS_URL/);
  });
});
