import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock';
import { fcmEndpoint, nextAddress, pushKeys } from './security/support/fixtures';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// The audit log records changes, not calls: removing a subscriber twice, or a
// v1 tags call that changes nothing, adds no entry (docs/security.md, "Audit log").
describe('audit log entries for subscriber removals and the v1 API', () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
  let t: TestApp;
  let owner: TestUser;
  let site: any;
  let key: string;
  let keyId: string;
  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
    site = await t.createSite(owner.token, { name: 'Audit', url: 'https://audit.example' });
    const created = await t.request('POST', `/api/sites/${site.id}/api-keys`, { token: owner.token, body: { name: 'Backend' } });
    key = created.body.data.key;
    keyId = created.body.data.api_key.id;
    await t.request('PATCH', `/api/sites/${site.id}`, { token: owner.token, body: { settings: { identityVerification: false } } });
  });
  afterAll(async () => t.close());

  const subscribe = async () => {
    const endpoint = fcmEndpoint();
    const response = await t.request('POST', `/api/public/sites/${site.id}/subscribers`, { body: { subscription: { endpoint, keys: pushKeys() } }, remoteAddress: nextAddress() });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return { id: response.body.data.subscriber.id as string, endpoint };
  };
  const entriesFor = async (subjectId: string) =>
    ((await t.request('GET', `/api/sites/${site.id}/audit-log?limit=200`, { token: owner.token })).body.data.entries as any[]).filter((e) => e.subject.id === subjectId);

  it('removing a subscriber is one entry: removing it again changes nothing and records nothing', async () => {
    const s = await subscribe();
    const first = await t.request('DELETE', `/api/subscribers/${s.id}`, { token: owner.token });
    expect(first.status).toBe(200);
    clock.advance(1000);
    const again = await t.request('DELETE', `/api/subscribers/${s.id}`, { token: owner.token });
    expect(again.status).toBe(200);
    expect(again.body.data.subscriber.is_active).toBe(false);
    const entries = await entriesFor(s.id);
    expect(entries.map((e) => e.action)).toEqual(['deleted']);
  });

  it('v1 tags and the v1 erase name the API key as the actor', async () => {
    const s = await subscribe();
    const identify = await t.request('POST', `/api/public/sites/${site.id}/identify`, { body: { endpoint: s.endpoint, external_id: 'person-7' }, remoteAddress: nextAddress() });
    expect(identify.status, JSON.stringify(identify.body)).toBe(200);
    const tags = await t.request('POST', `/api/v1/sites/${site.id}/subscribers/tags`, { body: { external_id: 'person-7', add: ['vip'] }, headers: { authorization: `Bearer ${key}` } });
    expect(tags.status, JSON.stringify(tags.body)).toBe(200);
    expect(tags.body.data.subscribers).toEqual([{ id: s.id, tags: ['vip'] }]);
    const erase = await t.request('DELETE', `/api/v1/sites/${site.id}/subscribers?external_id=person-7`, { headers: { authorization: `Bearer ${key}` } });
    expect(erase.status).toBe(200);
    expect(erase.body.data.erased).toBe(1);
    const entries = await entriesFor(s.id);
    expect(entries.map((e) => [e.action, e.actor.type, e.actor.id, e.actor.label])).toEqual([
      ['deleted', 'api_key', keyId, 'API key Backend'],
      ['updated', 'api_key', keyId, 'API key Backend'],
    ]);
  });
});

describe('v1 tags calls in the audit log', () => {
  let t: TestApp;
  let owner: TestUser;
  let site: any;
  let key: string;
  beforeAll(async () => {
    t = await createTestApp({ env: { OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
    owner = await t.createUser();
    site = await t.createSite(owner.token, { name: 'Back', url: 'https://back.example' });
    key = (await t.request('POST', `/api/sites/${site.id}/api-keys`, { token: owner.token, body: { name: 'Backend' } })).body.data.key;
    await t.request('PATCH', `/api/sites/${site.id}`, { token: owner.token, body: { settings: { identityVerification: false } } });
  });
  afterAll(async () => t.close());

  it('a v1 tags call that changes nothing records no "updated" entry', async () => {
    const endpoint = fcmEndpoint();
    const s = await t.request('POST', `/api/public/sites/${site.id}/subscribers`, { body: { subscription: { endpoint, keys: pushKeys() } }, remoteAddress: nextAddress() });
    const id = s.body.data.subscriber.id;
    const call = () => t.request('POST', `/api/v1/sites/${site.id}/subscribers/tags`, { body: { subscriber_id: id, add: ['vip'] }, headers: { authorization: `Bearer ${key}` } });
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(200);
    const entries = ((await t.request('GET', `/api/sites/${site.id}/audit-log?limit=200`, { token: owner.token })).body.data.entries as any[]).filter((e) => e.subject.id === id);
    expect(entries).toHaveLength(1);
  });
});
