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
