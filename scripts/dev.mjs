// `npm run dev`: the API server in watch mode (tsx restarts it on every change
// under apps/server and packages/) and the Vite dev server with hot reload,
// together in one terminal. Open the Vite address it prints (DEV_WEB_PORT,
// 5173 by default): it proxies /api, /sdk and /uploads to the API server on
// PORT (3000). Ctrl-C stops both.
// (The npm script builds the SDK bundle first: the API server serves it from
// packages/sdk/dist.)
import { spawn } from 'node:child_process';

// The dashboard's dev server port (DEV_WEB_PORT, default 5173); the API keeps PORT.
const webPort = process.env.DEV_WEB_PORT ?? '5173';

const children = [
  { name: 'server', args: ['run', 'dev', '-w', '@herald/server'] },
  { name: 'web', args: ['run', 'dev', '-w', '@herald/web', '--', '--port', webPort, '--strictPort'] },
].map(({ name, args }) => {
  // Each in its own process group, so stopping it reaches npm, tsx watch and the server below it.
  const child = spawn('npm', args, { stdio: 'inherit', detached: true, env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '1' } });
  child.on('exit', (code, signal) => {
    if (stopping) return;
    console.error(`\n[dev] ${name} exited (${signal ?? code}); stopping the other one.`);
    stop(code ?? 1);
  });
  return child;
});

let stopping = false;
function stop(code) {
  if (stopping) return;
  stopping = true;
  const running = children.filter((child) => child.exitCode === null && child.signalCode === null);
  for (const child of running) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  // Exit once both are down (the API server finishes in-flight work first), or after 10 s.
  Promise.all(running.map((child) => new Promise((resolve) => child.once('exit', resolve)))).then(() => process.exit(code));
  setTimeout(() => process.exit(code), 10_000).unref();
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
