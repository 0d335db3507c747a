// Issue 17, items 1, 2 and 6: deploy/ checks health on the health routes, gives
// every role more time to stop than Herald's own shutdown bound, and the
// Grafana dashboard reads only metrics Herald exports.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { createMetrics } from '../../src/platform/metrics';
import { repoRoot } from '../scale/herald-processes';
import { findDirectives, parseNginx } from '../support/nginx-config';

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

  // Reset, verification and invitation links carry one-time tokens in their
  // query, and their pages send that address as Referer with every request.
  it('nginx logs paths without their query and Referers cut at "?", so no one-time link reaches the access log', () => {
    const config = parseNginx(deploy('nginx/herald.conf'));
    const formats = config.filter((d) => d.name === 'log_format');
    expect(formats.map((d) => d.args[0])).toEqual(['herald_no_query']);
    const format = formats[0]!.args.slice(1).join('');
    // Exactly these variables: combined's fields, with the request line rebuilt from $uri and the Referer from the map below.
    expect([...format.matchAll(/\$([a-z_]+)/g)].map((m) => m[1])).toEqual([
      'remote_addr',
      'remote_user',
      'time_local',
      'request_method',
      'uri',
      'server_protocol',
      'status',
      'body_bytes_sent',
      'herald_referer_without_query',
      'http_user_agent',
    ]);
    expect(format).toContain('"$request_method $uri $server_protocol"');

    // The map, read as nginx does: the first matching regular expression gives the value (its named captures filled in), else the default.
    const map = config.find((d) => d.name === 'map' && d.args[1] === '$herald_referer_without_query');
    expect(map?.args[0]).toBe('$http_referer');
    const referer = (value: string) => {
      for (const entry of map!.block!) {
        if (!entry.name.startsWith('~')) continue;
        const match = new RegExp(entry.name.slice(1)).exec(value);
        if (match) return entry.args[0]!.replace(/\$([a-z_]+)/g, (_, name: string) => match.groups?.[name] ?? '');
      }
      return map!.block!.find((entry) => entry.name === 'default')!.args[0];
    };
    expect(referer('https://push.example.com/reset-password?token=s3cret')).toBe('https://push.example.com/reset-password');
    expect(referer('https://push.example.com/invitation?token=s3cret#top')).toBe('https://push.example.com/invitation');
    expect(referer('https://push.example.com/verify-email?token=s3cret')).toBe('https://push.example.com/verify-email');
    expect(referer('https://shop.example/sale?colour=blue&herald_test=s3cret')).toBe('https://shop.example/sale');
    expect(referer('https://push.example.com/settings')).toBe('https://push.example.com/settings');
    expect(referer('')).toBe('-');
    expect(referer('?token=s3cret')).toBe('-');

    // Every server writes its access log in that format (none falls back to the http block's "combined"); a location may only turn it off.
    const servers = config.filter((d) => d.name === 'server');
    expect(servers).toHaveLength(2);
    for (const server of servers) expect(server.block!.some((d) => d.name === 'access_log'), server.args.join(' ')).toBe(true);
    const logs = findDirectives(config, 'access_log');
    for (const { directive } of logs) {
      if (directive.args[0] === 'off') continue;
      expect(directive.args[1], directive.args.join(' ')).toBe('herald_no_query');
    }
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
