// Starts the built Herald (apps/server/dist/main.js) as a real process on
// 127.0.0.1 with a throwaway data folder, for journeys through the product.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../apps/server/test/support/pg-cluster';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');

export interface HeraldProcess {
  url: string;
  port: number;
  dataDir: string;
  /** Everything the process printed so far. */
  output(): string;
  /** Mails written to DATA_DIR/mail (no SMTP_URL), oldest first. */
  mails(): string[];
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Removes the data folder this process was started with (when the test created it). */
  cleanUp(): void;
}

export async function startHerald(env: Record<string, string> = {}, args: string[] = ['serve']): Promise<HeraldProcess> {
  const main = path.join(repoRoot, 'apps/server/dist/main.js');
  if (!fs.existsSync(main)) throw new Error('Build first: npm run build');
  const port = Number(env.PORT ?? (await freePort()));
  const ownsDataDir = !env.DATA_DIR;
  const dataDir = env.DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'herald-e2e-'));
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child: ChildProcess = spawn(process.execPath, [main, ...args], {
    cwd: repoRoot,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Herald exited with ${child.exitCode}:\n${output}`);
    try {
      const response = await fetch(`${url}/api/docs/json`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`Herald did not start in time:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    url,
    port,
    dataDir,
    output: () => output,
    mails() {
      const dir = path.join(dataDir, 'mail');
      if (!fs.existsSync(dir)) return [];
      return fs.readdirSync(dir).sort().map((f) => fs.readFileSync(path.join(dir, f), 'utf8'));
    },
    cleanUp() {
      if (ownsDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
