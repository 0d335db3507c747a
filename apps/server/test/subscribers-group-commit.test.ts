import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupCommit } from '../src/db/group-commit';
import { ManualClock } from '../src/platform/clock';
import { createTestApp, type TestApp } from './support/test-app';

// Subscribes arriving together are written in one transaction with their
// counters added up (features/subscribers/subscribe-batches.ts,
// docs/storage.md "Subscribes are group-committed"). Every accepted
// subscription must be stored and counted exactly once, whatever batch it
// went in, and one bad subscription must not take the others down.

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

function subscriptionBody(endpoint: string, prompt?: string) {
  const ecdh = crypto.createECDH('prime256v1');
  return { subscription: { endpoint, keys: { p256dh: ecdh.generateKeys().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') } }, ...(prompt ? { prompt } : {}) };
}
const endpoint = () => `https://fcm.googleapis.com/fcm/send/${crypto.randomBytes(30).toString('base64url')}`;

describe('group commit of public subscribes', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 9, 15));
  let sites: Array<{ id: string }>;
  let address = 0;

  const subscribe = (siteId: string, body: unknown) =>
    t.app.inject({
      method: 'POST',
      url: `/api/public/sites/${siteId}/subscribers`,
      remoteAddress: `127.1.${Math.floor(++address / 250)}.${(address % 250) + 1}`,
      headers: { 'content-type': 'application/json', 'user-agent': CHROME },
      payload: JSON.stringify(body),
    });

  beforeAll(async () => {
    t = await createTestApp({ clock });
    const owner = await t.createUser();
    sites = [await t.createSite(owner.token), await t.createSite(owner.token, { name: 'Second', url: 'https://second.example' })];
  });
  afterAll(async () => {
    await t?.close();
  });

  it('stores and counts every one of many concurrent subscribes to two sites once, a repeated endpoint included', async () => {
    const repeated = endpoint();
    const calls = Array.from({ length: 60 }, (_, i) => {
      const site = sites[i % 2]!;
      // The same browser subscribing three times at once to the first site: one subscriber.
      const body = i === 10 || i === 20 || i === 30 ? subscriptionBody(repeated, 'slide') : subscriptionBody(endpoint(), i % 3 === 0 ? 'bell' : undefined);
      return subscribe(site.id, body);
    });
    const answers = await Promise.all(calls);
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([...Array(2).fill(200), ...Array(58).fill(201)]);
    const ids = new Set(answers.map((answer) => answer.json().data.subscriber.id));
    expect(ids.size).toBe(58);
    // Each numbered once (migration 0036): the numbers a batch takes are never given twice, even to the repeats it skipped.
    const numbers = (await t.ctx.db.selectFrom('subscribers').select('seq').where('id', 'in', [...ids]).execute()).map((row) => Number(row.seq));
    expect(new Set(numbers).size).toBe(58);
    expect(numbers.every((seq) => Number.isInteger(seq) && seq > 0)).toBe(true);

    for (const [index, site] of sites.entries()) {
      const stored = await t.ctx.db.selectFrom('subscribers').select((eb) => eb.fn.countAll<number>().as('n')).where('site_id', '=', site.id).where('is_active', '=', 1).executeTakeFirstOrThrow();
      const counted = await t.ctx.db.selectFrom('sites').select('active_subscriber_count').where('id', '=', site.id).executeTakeFirstOrThrow();
      const hourly = await t.ctx.db.selectFrom('stats_hourly').select('subscribed').where('site_id', '=', site.id).execute();
      const expected = index === 0 ? 28 : 30;
      expect(Number(stored.n)).toBe(expected);
      expect(Number(counted.active_subscriber_count)).toBe(expected);
      expect(hourly.reduce((sum, row) => sum + Number(row.subscribed), 0)).toBe(expected);
    }
    // Conversions: "bell" on every third call that was not the repeated one, "slide" once (the repeated browser came in once).
    const prompts = await t.ctx.db.selectFrom('prompt_stats').select(['site_id', 'prompt', 'subscribed']).execute();
    const bellCalls = Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 3 === 0 && ![10, 20, 30].includes(i));
    const byKey = new Map(prompts.map((row) => [`${row.site_id}:${row.prompt}`, Number(row.subscribed)]));
    expect(byKey.get(`${sites[0]!.id}:slide`)).toBe(1);
    expect(byKey.get(`${sites[0]!.id}:bell`)).toBe(bellCalls.filter((i) => i % 2 === 0).length);
    expect(byKey.get(`${sites[1]!.id}:bell`)).toBe(bellCalls.filter((i) => i % 2 === 1).length);
  });

  it('in one batch: new endpoints are created, known ones refreshed, an unsubscribed one reactivated, each counted as if alone', async () => {
    const site = sites[1]!;
    const known = Array.from({ length: 4 }, () => subscriptionBody(endpoint()));
    for (const body of known) expect((await subscribe(site.id, body)).statusCode).toBe(201);
    const left = await t.app.inject({
      method: 'POST',
      url: `/api/public/sites/${site.id}/subscribers/unsubscribe`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ endpoint: known[0]!.subscription.endpoint }),
    });
    expect(left.statusCode).toBe(200);
    const activeBefore = Number((await t.ctx.db.selectFrom('sites').select('active_subscriber_count').where('id', '=', site.id).executeTakeFirstOrThrow()).active_subscriber_count);

    const fresh = Array.from({ length: 6 }, () => subscriptionBody(endpoint()));
    const answers = await Promise.all([...known, ...fresh, fresh[0]!].map((body) => subscribe(site.id, body)));
    // Known: 200 (the first one back from unsubscribing); new: 201; the new one repeated in the batch: 200, the same subscriber.
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 201, 201, 201, 201, 201, 201, 200]);
    expect(answers[10]!.json().data.subscriber.id).toBe(answers[4]!.json().data.subscriber.id);
    const activeAfter = Number((await t.ctx.db.selectFrom('sites').select('active_subscriber_count').where('id', '=', site.id).executeTakeFirstOrThrow()).active_subscriber_count);
    expect(activeAfter - activeBefore).toBe(1 + 6);
    const stored = await t.ctx.db.selectFrom('subscribers').select((eb) => eb.fn.countAll<number>().as('n')).where('site_id', '=', site.id).where('is_active', '=', 1).executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(activeAfter);
  });

  it('a subscribe for a site that is gone is answered 404 while the others in flight are stored', async () => {
    const before = await t.ctx.db.selectFrom('subscribers').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, () => subscribe(sites[0]!.id, subscriptionBody(endpoint()))),
      subscribe(crypto.randomUUID(), subscriptionBody(endpoint())),
      ...Array.from({ length: 10 }, () => subscribe(sites[1]!.id, subscriptionBody(endpoint()))),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual([...Array(10).fill(201), 404, ...Array(10).fill(201)]);
    const after = await t.ctx.db.selectFrom('subscribers').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n) - Number(before.n)).toBe(20);
  });

  it('subscriber-created hooks run once per batch with its new subscribers: a welcome campaign enrols each new subscriber of its site once, a webhook gets one event each', async () => {
    const owner = await t.createUser();
    const withCampaign = await t.createSite(owner.token, { name: 'Welcoming', url: 'https://welcoming.example' });
    const plain = await t.createSite(owner.token, { name: 'Plain', url: 'https://plain.example' });
    const campaign = await t.request('POST', `/api/sites/${withCampaign.id}/welcome-campaigns`, {
      token: owner.token,
      body: { name: 'Welcome', steps: [{ sequence_order: 1, delay_minutes: 0, notification: { title: 'Hello', message: 'Welcome aboard', destination_url: 'https://welcoming.example/' } }] },
    });
    expect(campaign.status).toBe(201);
    const webhook = await t.request('POST', `/api/sites/${withCampaign.id}/webhooks`, { token: owner.token, body: { url: 'https://hooks.welcoming.example/in', events: ['subscriber.created'] } });
    expect(webhook.status).toBe(201);

    // What the registered hooks are called with, besides what they write.
    const calls: number[] = [];
    const registered = t.ctx.subscriberCreatedHooks ?? [];
    t.ctx.subscriberCreatedHooks = [...registered, { run: async (events) => void calls.push(events.length) }];
    try {
      const repeated = endpoint();
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) => subscribe(i % 3 === 0 ? plain.id : withCampaign.id, subscriptionBody(i === 4 || i === 5 ? repeated : endpoint()))),
      );
      expect(answers.every((answer) => answer.statusCode === 201 || answer.statusCode === 200)).toBe(true);
      const createdOf = (siteId: string) =>
        answers.filter((answer, i) => answer.statusCode === 201 && (i % 3 === 0 ? plain.id : withCampaign.id) === siteId).map((answer) => answer.json().data.subscriber.id as string);
      const welcomed = createdOf(withCampaign.id);
      // 20 calls to the welcoming site, two of them the same browser.
      expect(welcomed).toHaveLength(19);
      expect(createdOf(plain.id)).toHaveLength(10);

      // Every new subscriber was told of once, in fewer calls than subscribers (batches).
      expect(calls.reduce((sum, n) => sum + n, 0)).toBe(29);
      expect(calls.length).toBeLessThan(29);
      const enrolled = await t.ctx.db.selectFrom('welcome_campaign_enrollments').select('subscriber_id').where('site_id', 'in', [withCampaign.id, plain.id]).execute();
      expect(enrolled.map((row) => row.subscriber_id).sort()).toEqual([...welcomed].sort());
      const events = await t.ctx.db.selectFrom('webhook_deliveries').select(['event_type', 'payload']).where('webhook_id', '=', webhook.body.data.webhook.id).execute();
      expect(events.every((event) => event.event_type === 'subscriber.created')).toBe(true);
      expect(events.map((event) => JSON.parse(event.payload).data.subscriber.id).sort()).toEqual([...welcomed].sort());
    } finally {
      t.ctx.subscriberCreatedHooks = registered;
    }
  });
});

describe('groupCommit', () => {
  it('writes the calls that arrive while a batch is written together, in order, and the first one at once', async () => {
    const batches: number[][] = [];
    const write = groupCommit<number, string>(
      async (items) => {
        batches.push(items);
        return items.map((item) => `stored ${item}`);
      },
      async (item) => {
        batches.push([item]);
        return `stored ${item}`;
      },
    );
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => write(i)));
    expect(results).toEqual(['stored 0', 'stored 1', 'stored 2', 'stored 3', 'stored 4']);
    expect(batches).toEqual([[0, 1, 2, 3, 4]]);
    // Alone: written as one.
    expect(await write(9)).toBe('stored 9');
    expect(batches.at(-1)).toEqual([9]);
  });

  it('a batch that fails is rolled back as a whole and each of its calls is written alone: only the bad one fails', async () => {
    const stored: number[] = [];
    const write = groupCommit<number, number>(
      async (items) => {
        if (items.includes(3)) throw new Error('a bad one in the batch');
        stored.push(...items);
        return items;
      },
      async (item) => {
        if (item === 3) throw new Error('three is bad');
        stored.push(item);
        return item;
      },
    );
    const settled = await Promise.allSettled([1, 2, 3, 4].map((item) => write(item)));
    expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((settled[2] as PromiseRejectedResult).reason).toEqual(new Error('three is bad'));
    expect(stored).toEqual([1, 2, 4]);
  });

  it('writes up to `concurrency` batches at once, and never more', async () => {
    let running = 0;
    let most = 0;
    const gates: Array<() => void> = [];
    /** A write that waits at its gate, counting how many wait at once. */
    const gated = async <T>(written: T): Promise<T> => {
      running += 1;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running -= 1;
      return written;
    };
    const write = groupCommit<number, number>(gated, gated, { concurrency: 2 });
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    // Three waves, each arriving while the batches before it are still being written.
    const calls = [write(0)];
    await turn();
    for (let i = 1; i < 6; i++) calls.push(write(i));
    await turn();
    await turn();
    for (let i = 6; i < 12; i++) calls.push(write(i));
    let answered = false;
    const all = Promise.all(calls).finally(() => (answered = true));
    // Open the gates as writes arrive, until every call is answered.
    for (let turns = 0; turns < 200 && !answered; turns++) {
      await new Promise((resolve) => setImmediate(resolve));
      gates.splice(0).forEach((open) => open());
    }
    expect(await all).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(most).toBe(2);
  });
});
