import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestResponse } from '../support/test-app';

// docs/security.md, "Cached answers": every answer under /api (dashboard and
// server-to-server API: tokens, keys, subscribers' data) says
// `Cache-Control: no-store`, successes and errors alike, so no browser cache,
// proxy or CDN keeps a copy. The public SDK routes (/api/public/**) carry
// nothing secret and are left alone.

describe('Cache-Control: no-store on the API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('marks every kind of private API answer no-store: tokens, account, site data, keys, errors', async () => {
    const owner = await t.createUser();
    const site = await t.createSite(owner.token);
    const answers: Array<[string, TestResponse]> = [
      ['sign-in (a session token)', await t.request('POST', '/api/auth/login', { body: { email: owner.email, password: owner.password } })],
      ['failed sign-in', await t.request('POST', '/api/auth/login', { body: { email: owner.email, password: 'wrong password' } })],
      ['the signed-in user', await t.request('GET', '/api/auth/me', { token: owner.token })],
      ['a profile change', await t.request('PATCH', '/api/auth/profile', { token: owner.token, body: { name: 'Renamed' } })],
      ['forgot-password', await t.request('POST', '/api/auth/forgot-password', { body: { email: owner.email } })],
      ['setup status', await t.request('GET', '/api/auth/setup')],
      ['sites', await t.request('GET', '/api/sites', { token: owner.token })],
      ['one site', await t.request('GET', `/api/sites/${site.id}`, { token: owner.token })],
      ['subscribers', await t.request('GET', `/api/sites/${site.id}/subscribers`, { token: owner.token })],
      ['a new API key', await t.request('POST', `/api/sites/${site.id}/api-keys`, { token: owner.token, body: { name: 'backend' } })],
      ['API keys', await t.request('GET', `/api/sites/${site.id}/api-keys`, { token: owner.token })],
      ['server-to-server API without a key', await t.request('POST', `/api/v1/sites/${site.id}/events`, { body: { event: 'x', external_id: 'u1' } })],
      ['no session', await t.request('GET', '/api/auth/me')],
      ['validation error', await t.request('POST', '/api/auth/login', { body: { email: 'not-an-email' } })],
      ["another user's id", await t.request('GET', '/api/sites/00000000-0000-4000-8000-000000000000', { token: owner.token })],
      ['an unknown API route', await t.request('GET', '/api/no-such-route?token=x', { token: owner.token })],
      ['sign-out', await t.request('POST', '/api/auth/logout', { token: owner.token })],
    ];
    for (const [label, answer] of answers) {
      expect(answer.status, label).toBeLessThan(500);
      expect(answer.headers['cache-control'], label).toBe('no-store');
    }
  });
});
