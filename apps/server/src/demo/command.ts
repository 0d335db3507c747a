// `herald demo [--data-dir DIR] [--password P] [--serve]` (see USAGE).
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config';
import { ManualClock } from '../platform/clock';
import { runRole } from '../roles';
import { openRuntime } from '../runtime';
import { DEMO_EMAIL, DEMO_SITE } from './content';
import { DemoTargetNotEmptyError, seedDemo, type DemoSeeded } from './seed';

const DEMO_USAGE = `Usage: herald demo [--data-dir DIR] [--password P] [--serve]

Fills an EMPTY Herald database with a demo site, "${DEMO_SITE.name}" (${DEMO_SITE.url}):
3,000 subscribers over 90 days, notifications of every type with their history,
a welcome campaign, segments, a (paused) RSS feed, an API key and site events.
The same demo every time, apart from ids, keys and the password.

  --data-dir DIR   the data folder to fill (default: DATA_DIR, else ./data);
                   with DATABASE_URL set, the demo goes into that database
  --password P     the demo account's password (default: a random one, printed)
  --serve          then start Herald on it, listening on 127.0.0.1 unless HOST is set;
                   a database that already holds only the demo is served as it is
  --help           this text

A database holding any account or site is never touched: the command says so
and exits with status 1. For a fresh demo, delete the folder and run it again.`;

const NOT_REAL_BROWSERS =
  'Demo subscribers are not real browsers: a send to them fails at the push service (unreachable or rejected), including the scheduled sends and welcome steps still to come.';

function describeTarget(config: Config): string {
  return config.database.kind === 'sqlite' ? config.database.file : 'the PostgreSQL database of DATABASE_URL';
}

const count = (n: number) => n.toLocaleString('en-US');

function printSeeded(seeded: DemoSeeded, config: Config): void {
  const t = seeded.totals;
  console.log(`${DEMO_SITE.name} is ready in ${describeTarget(config)} (${(seeded.elapsedMs / 1000).toFixed(1)} s):`);
  console.log(
    `  ${count(t.subscribers)} subscribers (${count(t.activeSubscribers)} active), ${t.notifications} notifications, ${count(t.deliveries)} deliveries, ` +
      `${t.segments} segments, ${t.welcomeCampaigns} welcome campaign, ${t.rssFeeds} RSS feed (paused), ${t.apiKeys} API key, ${count(t.siteEvents)} site events`,
  );
  console.log(NOT_REAL_BROWSERS);
}

function printLogin(config: Config, password: string): void {
  console.log(`Open:     ${config.publicUrl}`);
  console.log(`Email:    ${DEMO_EMAIL}`);
  console.log(`Password: ${password}`);
}

/** Runs `herald demo`; returns the exit status, or -1 when it went on to serve (the process keeps running). */
export async function demoCommand(args: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  let values: { 'data-dir'?: string; password?: string; serve?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: { 'data-dir': { type: 'string' }, password: { type: 'string' }, serve: { type: 'boolean' }, help: { type: 'boolean' } },
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${DEMO_USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(DEMO_USAGE);
    return 0;
  }
  if (values.password !== undefined && values.password.length < 8) {
    console.error('Password must be at least 8 characters long');
    return 2;
  }

  let config: Config;
  try {
    config = loadConfig({
      ...env,
      ...(values['data-dir'] ? { DATA_DIR: values['data-dir'] } : {}),
      // A demo with a printed password is for this machine only, unless asked otherwise.
      ...(values.serve && !env.HOST ? { HOST: '127.0.0.1' } : {}),
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 78; // EX_CONFIG
    }
    throw error;
  }

  const password = values.password ?? crypto.randomBytes(12).toString('base64url');
  const clock = new ManualClock(Date.now());
  const runtime = await openRuntime({ ...config, logLevel: 'warn' }, { clock });
  let servePassword = password;
  try {
    printSeeded(await seedDemo(runtime.ctx, clock, { password }), config);
  } catch (error) {
    if (!(error instanceof DemoTargetNotEmptyError)) {
      console.error(`The demo stopped half-way, leaving ${describeTarget(config)} partly filled: empty it (delete the folder) before trying again.`);
      throw error;
    }
    if (!values.serve || !error.onlyDemo) {
      const advice = config.database.kind === 'sqlite' ? 'give --data-dir a new folder' : 'point DATABASE_URL at an empty database';
      console.error(`Not filling ${describeTarget(config)}: ${error.message}. The demo fills only an empty database; ${advice}.`);
      return 1;
    }
    console.log(`${describeTarget(config)} already holds the demo: serving it as it is (delete the folder for a fresh one).`);
    servePassword = values.password ?? '(the one printed when the demo was created)';
  } finally {
    await runtime.close();
  }

  if (!values.serve) {
    console.log(`Start Herald on it: DATA_DIR=${config.dataDir} node apps/server/dist/main.js serve`);
    printLogin(config, password);
    return 0;
  }
  await runRole(config, 'serve');
  // The server's own log lines are written asynchronously: let them out first,
  // so the login is what the terminal shows last.
  await new Promise((resolve) => setTimeout(resolve, 200));
  printLogin(config, servePassword);
  return -1;
}
