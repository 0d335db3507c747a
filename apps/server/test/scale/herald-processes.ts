// Real processes of the built product (apps/server/dist/main.js) for
// multi-process tests: one `serve`, several `scheduler` and `worker`
// processes sharing one database and one Redis, as a deployment runs them.
//
// Every process is started in its own process group (detached), so stopping
// it also stops anything it started; a test stops them all in afterAll, and
// whatever is still running when the test runner exits is killed then.
// Output is kept in memory (pino JSON lines) for the tests to read.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../support/pg-cluster';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..', '..', '..');
const serverDir = path.join(repoRoot, 'apps/server');
const mainJs = path.join(serverDir, 'dist/main.js');

let built = false;

/**
 * Bundles the server (esbuild, about a second) so the tests run the product
 * as shipped, even in a fresh clone where `npm run build` has not run yet.
 */
export function buildServer(): void {
  if (built) return;
  execFileSync(process.execPath, ['build.mjs'], { cwd: serverDir, stdio: 'inherit' });
  built = true;
}

/** A long-running role, or a command that runs to its end (migrate, doctor, backup, restore). */
export type HeraldRole = 'serve' | 'scheduler' | 'worker' | 'migrate' | 'doctor' | 'backup' | 'restore';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

const running = new Set<HeraldProcess>();

export class HeraldProcess {
  private text = '';
  private readonly lines: LogLine[] = [];
  readonly exited: Promise<number | null>;
  /** Set once the process has exited: its code, or the signal that ended it. */
  exitCode: number | null = null;
  exitSignal: NodeJS.Signals | null = null;
  /** True once the test asked it to stop (a process that ends without being asked is a crash). */
  stopRequested = false;

  private constructor(
    readonly name: string,
    readonly role: HeraldRole,
    private readonly child: ChildProcess,
    /** http://127.0.0.1:port for `serve`. */
    readonly url: string,
  ) {
    let partial = '';
    const take = (chunk: Buffer) => {
      const text = chunk.toString();
      this.text += text;
      partial += text;
      const parts = partial.split('\n');
      partial = parts.pop() ?? '';
      for (const part of parts) {
        if (!part.startsWith('{')) continue;
        try {
          this.lines.push(JSON.parse(part) as LogLine);
        } catch {
          // not a log line
        }
      }
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exitCode = code;
        this.exitSignal = signal;
        running.delete(this);
        resolve(code);
      }),
    );
    running.add(this);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** True when it ended without being asked to. */
  get crashed(): boolean {
    return !this.alive && !this.stopRequested;
  }

  /** Everything the process printed. */
  output(): string {
    return this.text;
  }

  /** Its pino log lines (JSON), parsed. */
  logs(msg?: string): LogLine[] {
    return msg === undefined ? [...this.lines] : this.lines.filter((l) => l.msg === msg);
  }

  /**
   * Starts one role of the built product. Resolves once it said it started
   * (`serve`: once the API answers); rejects with its output if it exits or
   * takes longer than `timeoutMs`.
   */
  static async start(name: string, role: HeraldRole, env: Record<string, string>, args: string[] = [], timeoutMs = 60_000): Promise<HeraldProcess> {
    buildServer();
    // Only `serve` listens; the others get a port too, as PUBLIC_URL's default is built from it.
    const port = Number(env.PORT) || (await freePort());
    const url = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, [mainJs, role, ...args], {
      cwd: repoRoot,
      env: { ...process.env, HOST: '127.0.0.1', PUBLIC_URL: url, LOG_LEVEL: 'info', ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: stop() signals the group.
      detached: true,
    });
    const herald = new HeraldProcess(name, role, child, url);
    if (role !== 'serve' && role !== 'scheduler' && role !== 'worker') return herald;
    const deadline = Date.now() + timeoutMs;
    const started = `Herald ${role} started`;
    for (;;) {
      if (!herald.alive) throw new Error(`${name} (${role}) exited with ${herald.exitCode ?? herald.exitSignal}:\n${herald.output()}`);
      // `serve` is up when its API answers (whatever LOG_LEVEL); the others say so at info level.
      if (role === 'serve' ? await herald.answers() : herald.lines.some((l) => typeof l.msg === 'string' && l.msg.startsWith(started))) return herald;
      if (Date.now() > deadline) {
        await herald.kill();
        throw new Error(`${name} (${role}) did not start within ${timeoutMs} ms:\n${herald.output()}`);
      }
      await sleep(50);
    }
  }

  /** Runs `migrate` to the end; throws with its output if it fails. */
  static async migrate(env: Record<string, string>, timeoutMs = 60_000): Promise<void> {
    const herald = await HeraldProcess.start('migrate', 'migrate', env);
    const code = await Promise.race([herald.exited, sleep(timeoutMs).then(() => 'timeout' as const)]);
    if (code !== 0) {
      await herald.kill();
      throw new Error(`migrate ended with ${code}:\n${herald.output()}`);
    }
  }

  private async answers(): Promise<boolean> {
    try {
      return (await fetch(`${this.url}/api/docs/json`)).ok;
    } catch {
      return false;
    }
  }

  /**
   * Sends `signal` to the process group and waits for the exit; after
   * `graceMs` the group is killed (SIGKILL). Resolves with the exit code
   * (null when a signal ended it).
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 20_000): Promise<number | null> {
    if (!this.alive) return this.exitCode;
    this.stopRequested = true;
    signalGroup(this.pid, signal);
    const timer = setTimeout(() => signalGroup(this.pid, 'SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  kill(): Promise<number | null> {
    return this.stop('SIGKILL', 5_000);
  }

  /** Resident memory of the process now, in MB (Linux /proc). */
  rssMb(): number {
    const status = readProc(`/proc/${this.pid}/status`);
    const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
    return match ? Number(match[1]) / 1024 : 0;
  }

  /** Its open TCP connections (Linux /proc): all of them, or those to one port on 127.0.0.1. */
  tcpConnections(remotePort?: number): TcpConnection[] {
    const inodes = new Set<string>();
    let fds: string[] = [];
    try {
      fds = fs.readdirSync(`/proc/${this.pid}/fd`);
    } catch {
      return [];
    }
    for (const fd of fds) {
      try {
        const target = fs.readlinkSync(`/proc/${this.pid}/fd/${fd}`);
        const match = /^socket:\[(\d+)\]$/.exec(target);
        if (match) inodes.add(match[1]!);
      } catch {
        // closed meanwhile
      }
    }
    return tcpTable().filter((c) => inodes.has(c.inode) && c.state !== 'LISTEN' && (remotePort === undefined || c.remotePort === remotePort));
  }

  /** File descriptors that are sockets (TCP, Unix, anything). */
  socketCount(): number {
    try {
      return fs.readdirSync(`/proc/${this.pid}/fd`).filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/${this.pid}/fd/${fd}`).startsWith('socket:');
        } catch {
          return false;
        }
      }).length;
    } catch {
      return 0;
    }
  }
}

export interface TcpConnection {
  localPort: number;
  remotePort: number;
  state: string;
  inode: string;
}

/** The TCP states of /proc/net/tcp (include/net/tcp_states.h). */
const TCP_STATES: Record<string, string> = {
  '01': 'ESTABLISHED',
  '02': 'SYN_SENT',
  '03': 'SYN_RECV',
  '04': 'FIN_WAIT1',
  '05': 'FIN_WAIT2',
  '06': 'TIME_WAIT',
  '07': 'CLOSE',
  '08': 'CLOSE_WAIT',
  '09': 'LAST_ACK',
  '0A': 'LISTEN',
  '0B': 'CLOSING',
};

function tcpTable(): TcpConnection[] {
  const rows: TcpConnection[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = readProc(file).split('\n').slice(1);
    for (const line of lines) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      rows.push({
        localPort: parseInt(cols[1]!.split(':')[1]!, 16),
        remotePort: parseInt(cols[2]!.split(':')[1]!, 16),
        state: TCP_STATES[cols[3]!] ?? cols[3]!,
        inode: cols[9]!,
      });
    }
  }
  return rows;
}

function readProc(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns something truthy; throws after `timeoutMs` naming `what`. */
export async function waitUntil<T>(what: string, probe: () => T | Promise<T>, timeoutMs: number, intervalMs = 100): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Stops every process still running (SIGTERM, then SIGKILL after `graceMs`). */
export async function stopAll(graceMs = 15_000): Promise<void> {
  await Promise.all([...running].map((p) => p.stop('SIGTERM', graceMs)));
}

// If the runner itself goes away, take the process groups with it.
process.once('exit', () => {
  for (const p of running) signalGroup(p.pid, 'SIGKILL');
});
