import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';
import { subscriberRow } from './support/subscriber-rows';

// The tags API (PATCH /subscribers/{id}/tags) under concurrent calls: each
// replacement locks the subscriber's row first, so on PostgreSQL they take
// turns (one set wins whole) instead of merging or colliding on the key (500).

describe('the tags API under concurrent calls', () => {
  let t: TestApp;
  let owner: TestUser;
  let siteId: string;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.createUser();
    siteId = (await t.createSite(owner.token)).id;
  });
  afterAll(async () => t.close());

  it('answers every one of several simultaneous replacements of the same tags (no 500), and the tags end as asked', async () => {
    for (let round = 0; round < 5; round++) {
      const id = crypto.randomUUID();
      await t.ctx.db.insertInto('subscribers').values(subscriberRow(siteId, { id, subscribed_at: Date.now() })).execute();
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => t.request('PATCH', `/api/subscribers/${id}/tags`, { token: owner.token, body: { tags: ['vip', 'newsletter'] } })),
      );
      const statuses = answers.map((answer) => answer.status);
      expect(statuses, JSON.stringify(answers.filter((a) => a.status !== 200).map((a) => a.body))).toEqual(statuses.map(() => 200));
      const got = await t.request('GET', `/api/sites/${siteId}/subscribers/${id}`, { token: owner.token });
      expect(got.body.data.subscriber.tags).toEqual(['newsletter', 'vip']);
    }
  });

  it('ends with one of the tag sets asked for when two replacements race (never a mix of both)', async () => {
    for (let round = 0; round < 5; round++) {
      const id = crypto.randomUUID();
      await t.ctx.db.insertInto('subscribers').values(subscriberRow(siteId, { id, subscribed_at: Date.now() })).execute();
      const answers = await Promise.all([
        t.request('PATCH', `/api/subscribers/${id}/tags`, { token: owner.token, body: { tags: ['a'] } }),
        t.request('PATCH', `/api/subscribers/${id}/tags`, { token: owner.token, body: { tags: ['b'] } }),
      ]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      const got = await t.request('GET', `/api/sites/${siteId}/subscribers/${id}`, { token: owner.token });
      expect([['a'], ['b']], `round ${round}`).toContainEqual(got.body.data.subscriber.tags);
    }
  });
});
