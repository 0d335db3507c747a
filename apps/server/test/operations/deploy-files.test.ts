// Issue 17, items 1, 2 and 6: deploy/ checks health on the health routes, gives
// every role more time to stop than Herald's own shutdown bound, and the
// Grafana dashboard reads only metrics Herald exports.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { createMetrics } from '../../src/platform/metrics';
import { repoRoot } from '../scale/herald-processes';

const deploy = (file: string) => fs.readFileSync(path.join(repoRoot, 'deploy', file), 'utf8');
const shutdownBoundSeconds = loadConfig({}).shutdownTimeoutMs / 1000;

describe('deploy/ files', () => {
  it('compose checks /readyz and waits longer than the shutdown bound', () => {
    const compose = deploy('docker-compose.yml');
    expect(compose).not.toContain('/api/docs/json');
    expect(compose).toContain("fetch('http://127.0.0.1:3000/readyz')");
    expect(compose).toContain("fetch('http://127.0.0.1:9464/readyz')");
    const grace = /stop_grace_period: (\d+)s/.exec(compose);
    expect(Number(grace?.[1])).toBeGreaterThan(shutdownBoundSeconds);
  });

  it('each systemd unit gives SIGTERM more time than the shutdown bound', () => {
    for (const unit of ['herald-serve.service', 'herald-scheduler.service', 'herald-worker@.service']) {
      const text = deploy(`systemd/${unit}`);
      expect(Number(/^TimeoutStopSec=(\d+)$/m.exec(text)?.[1]), unit).toBeGreaterThan(shutdownBoundSeconds);
      expect(text).toContain('KillSignal=SIGTERM');
    }
  });

  it('deploy/README.md states the stop times the files use', () => {
    const readme = deploy('README.md');
    const unitStop = new Set(['herald-serve.service', 'herald-scheduler.service', 'herald-worker@.service'].map((unit) => /^TimeoutStopSec=(\d+)$/m.exec(deploy(`systemd/${unit}`))?.[1]));
    expect(unitStop.size).toBe(1);
    const composeStop = /stop_grace_period: (\d+)s/.exec(deploy('docker-compose.yml'))?.[1];
    const saidUnits = [...readme.matchAll(/TimeoutStopSec=(\d+)/g)].map((m) => m[1]);
    const saidCompose = [...readme.matchAll(/stop_grace_period: (\d+)s/g)].map((m) => m[1]);
    expect(saidUnits.length).toBeGreaterThan(0);
    expect(saidCompose.length).toBeGreaterThan(0);
    expect(new Set(saidUnits)).toEqual(unitStop);
    expect(new Set(saidCompose)).toEqual(new Set([composeStop]));
    expect(readme).toContain(`\`SHUTDOWN_TIMEOUT_SECONDS\` (${shutdownBoundSeconds})`);
  });

  it('systemd starts `serve` only once /readyz answers, on the port nginx sends to, within the start timeout', () => {
    const unit = deploy('systemd/herald-serve.service');
    const post = /^ExecStartPost=(.+)$/m.exec(unit)?.[1];
    expect(post).toBeDefined();
    const words = post!.split(/\s+/);
    expect(words[0]).toBe('/usr/bin/curl');
    // --fail: a 503 from /readyz is a failure; retried (connection refused included) for a bounded time, each try bounded too.
    for (const flag of ['--fail', '--retry-connrefused', '--retry', '--retry-max-time', '--max-time']) expect(words, flag).toContain(flag);
    const retryFor = Number(words[words.indexOf('--retry-max-time') + 1]);
    const eachTry = Number(words[words.indexOf('--max-time') + 1]);
    expect(retryFor).toBeGreaterThan(0);
    expect(Number(/^TimeoutStartSec=(\d+)$/m.exec(unit)?.[1])).toBeGreaterThan(retryFor + eachTry);
    const url = new URL(words[words.length - 1]!);
    expect(url.pathname).toBe('/readyz');
    expect(url.host).toBe(`127.0.0.1:${loadConfig({}).port}`);
    expect(deploy('nginx/herald.conf')).toContain(`server ${url.host};`);
    // The other roles answer /readyz only on METRICS_PORT: the same line, ready to uncomment with it.
    for (const other of ['herald-scheduler.service', 'herald-worker@.service']) {
      const text = deploy(`systemd/${other}`);
      expect(text).toMatch(/^#Environment=METRICS_PORT=/m);
      expect(text).toMatch(/^#ExecStartPost=\/usr\/bin\/curl --fail .*--retry-connrefused http:\/\/127\.0\.0\.1:946(4|%i)\/readyz$/m);
    }
  });

  it('nginx passes the health routes and keeps /metrics private', () => {
    const nginx = deploy('nginx/herald.conf');
    expect(nginx).toMatch(/location = \/readyz \{ proxy_pass http:\/\/herald;/);
    expect(nginx).toMatch(/location = \/healthz \{ proxy_pass http:\/\/herald;/);
    expect(nginx).toContain('location = /metrics { return 404; }');
  });

  it('the Grafana dashboard queries metrics Herald exports', async () => {
    const dashboard = JSON.parse(deploy('grafana/herald-dashboard.json'));
    const exported = new Set(
      (await createMetrics().scrape()).body
        .split('\n')
        .filter((line) => line.startsWith('# TYPE '))
        .flatMap((line) => {
          const [, , name, type] = line.split(' ');
          return type === 'histogram' ? [`${name}_bucket`, `${name}_count`, `${name}_sum`] : [name!];
        }),
    );
    const used = new Set<string>();
    for (const panel of dashboard.panels) for (const target of panel.targets) for (const name of target.expr.match(/\b(herald|nodejs|process)_[a-z0-9_]+/g) ?? []) used.add(name);
    expect(used.size).toBeGreaterThan(10);
    expect([...used].filter((name) => !exported.has(name))).toEqual([]);
  });
});
