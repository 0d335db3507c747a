import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointHash } from '../src/delivery/push-endpoints';
import { createSubscribersService } from '../src/features/subscribers/service';
import { ManualClock } from '../src/platform/clock';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// Public subscribes racing each other and the other writers of the same
// subscribers (docs/storage.md, "Subscribes are group-committed"): several
// processes' batches refreshing the same subscribers, a pushsubscriptionchange
// racing an erasure, an unsubscribe of the old endpoint racing its move. Each
// must answer truly and leave the counters equal to the rows. On PostgreSQL
// they really run at once; on SQLite (one writer at a time) they must end the
// same way.

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const keys = () => {
  const ecdh = crypto.createECDH('prime256v1');
  return { p256dh: ecdh.generateKeys().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') };
};
const endpoint = () => `https://fcm.googleapis.com/fcm/send/${crypto.randomBytes(30).toString('base64url')}`;
const shuffle = <T,>(xs: T[]) => xs.map((x) => [Math.random(), x] as const).sort((a, b) => a[0] - b[0]).map(([, x]) => x);
const body = (ep = endpoint(), extra: Record<string, unknown> = {}) => ({ subscription: { endpoint: ep, keys: keys() }, ...extra });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('subscribe batches of several processes refreshing the same subscribers', () => {
  let t: TestApp;
  afterAll(async () => t?.close());
  beforeAll(async () => {
    t = await createTestApp({ clock: new ManualClock(Date.UTC(2026, 2, 10, 9, 15)) });
  });

  // Before the known subscribers were locked by number, two batches refreshing them in their arrival orders
  // deadlocked on PostgreSQL, and a public unsubscribe caught in the cycle answered 500.
  it('three processes re-subscribing the same subscribers in different orders while some unsubscribe: no error, counters exact', async () => {
    const owner = await t.createUser();
    const sites = [await t.createSite(owner.token), await t.createSite(owner.token)];
    const procs = [createSubscribersService(t.ctx), createSubscribersService(t.ctx), createSubscribersService(t.ctx)];
    const client = { address: '127.0.0.1', userAgent: CHROME };
    const subs = Array.from({ length: 40 }, (_, i) => ({ site: sites[i % 2]!.id, body: { subscription: { endpoint: endpoint(), keys: keys() }, prompt: 'bell' } }));
    const errors: unknown[] = [];
    for (let round = 0; round < 6; round++) {
      const ops: Array<Promise<unknown>> = [];
      for (const p of procs) for (const sub of shuffle(subs)) ops.push(p.subscribe(sub.site, sub.body as never, client).catch((e) => errors.push(`subscribe: ${String(e)} DETAIL ${e?.detail}`)));
      for (const sub of shuffle(subs).slice(0, 15)) ops.push(procs[0]!.unsubscribeByEndpoint(sub.site, sub.body.subscription.endpoint).catch((e) => (e?.statusCode === 404 ? null : errors.push(`unsubscribe: ${String(e)} DETAIL ${e?.detail}`))));
      await Promise.all(ops);
    }
    expect(errors.map(String)).toEqual([]);
    for (const site of sites) {
      const active = Number((await t.ctx.db.selectFrom('subscribers').select((eb) => eb.fn.countAll<number>().as('n')).where('site_id', '=', site.id).where('is_active', '=', 1).executeTakeFirstOrThrow()).n);
      const total = Number((await t.ctx.db.selectFrom('subscribers').select((eb) => eb.fn.countAll<number>().as('n')).where('site_id', '=', site.id).executeTakeFirstOrThrow()).n);
      const counted = Number((await t.ctx.db.selectFrom('sites').select('active_subscriber_count').where('id', '=', site.id).executeTakeFirstOrThrow()).active_subscriber_count);
      const rows = await t.ctx.db.selectFrom('stats_hourly').select(['subscribed', 'unsubscribed']).where('site_id', '=', site.id).execute();
      const net = rows.reduce((n, r) => n + Number(r.subscribed) - Number(r.unsubscribed), 0);
      expect(total).toBe(20);
      expect(counted).toBe(active);
      expect(net).toBe(active);
    }
  }, 120_000);
});

describe('a pushsubscriptionchange racing an erasure', () => {
  let t: TestApp;
  let owner: TestUser;
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 9, 15));
  let address = 0;
  const post = async (url: string, payload: unknown) => {
    const r = await t.app.inject({
      method: 'POST',
      url,
      remoteAddress: `127.4.${Math.floor(++address / 250)}.${(address % 250) + 1}`,
      headers: { 'content-type': 'application/json', 'user-agent': CHROME },
      payload: JSON.stringify(payload),
    });
    return { status: r.statusCode, body: r.json() };
  };
  const subscribe = (siteId: string, payload: unknown) => post(`/api/public/sites/${siteId}/subscribers`, payload);

  beforeAll(async () => {
    t = await createTestApp({ clock });
    owner = await t.createUser();
  });
  afterAll(async () => t?.close());

  // Before, the move updated no row once the erasure committed and the subscribe still answered 200 with the erased id.
  it('a pushsubscriptionchange (previous_endpoint) answered while the old subscriber is being erased stores the new endpoint', async () => {
    const s = await t.createSite(owner.token, { name: 'Erase', url: 'https://erase.example' });
    const old = body();
    const created = await subscribe(s.id, old);
    expect(created.status).toBe(201);
    const id = created.body.data.subscriber.id as string;

    // The erase's transaction is held open (its subscriber-removed hooks run inside it, after the row is deleted).
    let entered!: () => void;
    const inErase = new Promise<void>((r) => (entered = r));
    const hooks = t.ctx.subscriberRemovedHooks ?? [];
    t.ctx.subscriberRemovedHooks = [
      ...hooks,
      async (_trx, event) => {
        if (event.subscriberId !== id) return;
        entered();
        await sleep(300);
      },
    ];
    try {
      const erase = t.request('DELETE', `/api/subscribers/${id}?erase=true`, { token: owner.token });
      await inErase;
      const renewed = body();
      const moved = await subscribe(s.id, { ...renewed, previous_endpoint: old.subscription.endpoint });
      expect((await erase).status).toBe(200);
      const stored = await t.ctx.db.selectFrom('subscribers').selectAll().where('site_id', '=', s.id).execute();
      // Answered 2xx: the subscription must be stored.
      expect(moved.status).toBeLessThan(300);
      expect(stored.map((row) => row.endpoint_hash)).toContain(endpointHash(renewed.subscription.endpoint));
      expect(stored.map((row) => row.id)).toContain(moved.body.data.subscriber.id);
    } finally {
      t.ctx.subscriberRemovedHooks = hooks;
    }
  });
});

describe('an unsubscribe of the old endpoint racing its move', () => {
  let t: TestApp;
  afterAll(async () => t?.close());
  beforeAll(async () => {
    t = await createTestApp({ clock: new ManualClock(Date.UTC(2026, 2, 10, 9, 15)) });
  });

  it('never leaves the moved subscriber inactive when the unsubscribe of the old endpoint was answered 200', async () => {
    const owner = await t.createUser();
    const s = await t.createSite(owner.token);
    const svc = createSubscribersService(t.ctx);
    const client = { address: '127.0.0.1', userAgent: CHROME };
    let impossible = 0;
    for (let i = 0; i < 60; i++) {
      const old = endpoint();
      const { subscriber } = await svc.subscribe(s.id, { subscription: { endpoint: old, keys: keys() } } as never, client);
      const renewed = endpoint();
      const [unsub, move] = await Promise.allSettled([
        i % 2 ? svc.unsubscribeByEndpoint(s.id, old) : Promise.resolve().then(() => svc.unsubscribeByEndpoint(s.id, old)),
        svc.subscribe(s.id, { subscription: { endpoint: renewed, keys: keys() }, previous_endpoint: old } as never, client),
      ]);
      expect(move.status).toBe('fulfilled');
      const row = await t.ctx.db.selectFrom('subscribers').select(['is_active', 'endpoint']).where('id', '=', subscriber.id).executeTakeFirstOrThrow();
      if (unsub.status === 'fulfilled' && row.endpoint === renewed && row.is_active === 0) impossible += 1;
    }
    expect(impossible).toBe(0);
  });
});
