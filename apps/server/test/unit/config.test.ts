import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config';

describe('configuration from the environment', () => {
  it('has working defaults: port 3000, SQLite in ./data, PUBLIC_URL from the port, registration closed', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.database).toMatchObject({ kind: 'sqlite' });
    expect((config.database as { file: string }).file).toMatch(/data[/\\]herald\.db$/);
    expect(config.publicUrl).toBe('http://localhost:3000');
    expect(config.allowRegistration).toBe(false);
    expect(config.redisUrl).toBeUndefined();
    expect(config.rssPollIntervalSeconds).toBe(900);
  });

  it('switches to PostgreSQL with a postgres:// URL and reads the lists', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://herald:pw@db:5432/herald',
      REDIS_URL: 'redis://cache:6379',
      PORT: '8080',
      PUBLIC_URL: 'https://push.example.com/',
      ALLOW_REGISTRATION: 'true',
      EXTRA_PUSH_ORIGINS: 'http://127.0.0.1:9911, https://push.internal',
      OUTBOUND_ALLOW_HOSTS: 'Intranet.Example, 127.0.0.1',
      ADMIN_EMAIL: 'Owner@Example.com',
      ADMIN_PASSWORD: 'long enough',
    });
    expect(config.database).toEqual({ kind: 'postgres', url: 'postgres://herald:pw@db:5432/herald' });
    expect(config.publicUrl).toBe('https://push.example.com');
    expect(config.extraPushOrigins).toEqual(['http://127.0.0.1:9911', 'https://push.internal']);
    expect(config.outboundAllowHosts).toEqual(['intranet.example', '127.0.0.1']);
    expect(config.admin).toEqual({ email: 'owner@example.com', password: 'long enough', name: 'Owner' });
    expect(config.allowRegistration).toBe(true);
    expect(config.mailFrom).toBe('Herald <no-reply@push.example.com>');
  });

  it('refuses bad values with one clear line per problem, naming the variable', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', PUBLIC_URL: 'ftp://x', ALLOW_REGISTRATION: 'maybe', EXTRA_PUSH_ORIGINS: 'not a url', SECRET_KEY: 'short' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/^PORT: must be a number .*"eighty"/m);
    expect(problems).toMatch(/^DATABASE_URL: must start with postgres:\/\//m);
    expect(problems).toMatch(/^PUBLIC_URL: must be an http:\/\/ or https:\/\/ URL/m);
    expect(problems).toMatch(/^ALLOW_REGISTRATION: must be true or false/m);
    expect(problems).toMatch(/^EXTRA_PUSH_ORIGINS: "not a url" is not an http\(s\) origin/m);
    expect(problems).toMatch(/^SECRET_KEY: must be at least 32 characters$/m);
    // Secrets are never echoed.
    expect(problems).not.toContain('short');
  });

  it('reads PUSH_CONNECTIONS (256 per push service by default, at most 1024) and PUSH_CONCURRENCY (512 by default)', () => {
    // Enough for a push service 50 ms away (README, "Performance": the send at a round trip).
    expect(loadConfig({}).pushConnections).toBe(256);
    expect(loadConfig({}).pushConcurrency).toBe(512);
    expect(loadConfig({ PUSH_CONNECTIONS: '32', PUSH_CONCURRENCY: '200' })).toMatchObject({ pushConnections: 32, pushConcurrency: 200 });
    expect(() => loadConfig({ PUSH_CONNECTIONS: '0' })).toThrow(/- PUSH_CONNECTIONS: /);
    expect(() => loadConfig({ PUSH_CONNECTIONS: '5000' })).toThrow(/PUSH_CONNECTIONS: must be at most 1024/);
  });

  it('needs ADMIN_PASSWORD with ADMIN_EMAIL, of at least 8 characters', () => {
    expect(() => loadConfig({ ADMIN_EMAIL: 'a@example.com' })).toThrow(/ADMIN_PASSWORD: must be set when ADMIN_EMAIL is set/);
    expect(() => loadConfig({ ADMIN_EMAIL: 'a@example.com', ADMIN_PASSWORD: 'short' })).toThrow(/at least 8 characters/);
  });

  it('reads the abuse limits: feeds per user, "Check now" per hour, upload quota in MB (200 MB by default)', () => {
    const defaults = loadConfig({});
    expect(defaults.rssFeedsPerUser).toBe(50);
    expect(defaults.rssChecksPerUserPerHour).toBe(30);
    expect(defaults.uploadQuotaBytes).toBe(200 * 1024 * 1024);
    const set = loadConfig({ RSS_FEEDS_PER_USER: '10', RSS_CHECKS_PER_USER_PER_HOUR: '5', UPLOAD_QUOTA_MB: '1' });
    expect([set.rssFeedsPerUser, set.rssChecksPerUserPerHour, set.uploadQuotaBytes]).toEqual([10, 5, 1024 * 1024]);

    let error: unknown;
    try {
      loadConfig({ UPLOAD_QUOTA_MB: 'lots', RSS_FEEDS_PER_USER: '0', RSS_CHECKS_PER_USER_PER_HOUR: '2.5' });
    } catch (e) {
      error = e;
    }
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/^UPLOAD_QUOTA_MB: must be a number \(megabytes\) \(got "lots"\)$/m);
    expect(problems).toMatch(/^RSS_FEEDS_PER_USER: must be above 0/m);
    expect(problems).toMatch(/^RSS_CHECKS_PER_USER_PER_HOUR: must be a whole number/m);
    expect(() => loadConfig({ UPLOAD_QUOTA_MB: '2000000' })).toThrow(/UPLOAD_QUOTA_MB: must be at most 1048576/);
  });

  it('reads VAPID_SUBJECT and refuses one push services reject, at start, naming the variable', () => {
    expect(loadConfig({}).vapidSubject).toBeUndefined();
    expect(loadConfig({ VAPID_SUBJECT: 'mailto:push@herald.example' }).vapidSubject).toBe('mailto:push@herald.example');
    expect(loadConfig({ VAPID_SUBJECT: 'https://herald.example' }).vapidSubject).toBe('https://herald.example');
    for (const [value, reason] of [
      ['mailto:admin@localhost', /VAPID_SUBJECT: must be an address at a real domain/],
      ['mailto: admin@herald.example', /VAPID_SUBJECT: must be mailto: followed directly by an email address/],
      ['http://herald.example', /VAPID_SUBJECT: must be a mailto: address or an https: URL/],
      ['https://localhost:8443', /VAPID_SUBJECT: must be an https: URL at a real domain/],
    ] as const) {
      let error: unknown;
      try {
        loadConfig({ VAPID_SUBJECT: value });
      } catch (caught) {
        error = caught;
      }
      expect(error, value).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.join('\n')).toMatch(reason);
    }
  });
});
