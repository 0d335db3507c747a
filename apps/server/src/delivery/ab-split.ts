// A/B sends in the engine (docs/delivery.md, "A/B tests"): which subscribers
// of a page a run of an A/B notification takes and which variant each gets
// (fan-out), and the payload of each variant (send-batch). A notification
// without an `ab_tests` row costs nothing here: no query at fan-out beyond
// one lookup, none at sending unless a delivery carries a variant.
import crypto from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { runSeqsOfNotification } from '../db/run-seq';
import type { AbTestRow, Database, NotificationRow, RunRow, SiteRow } from '../db/schema';
import type { DeliveryDeps } from './engine-deps';
import { notificationContent } from './notification-content';
import { createPayloadTemplate, type PayloadTemplate } from './payload';
import type { AudienceMember } from './ports';

type Db = Kysely<Database> | Transaction<Database>;

/** What the dedupe key of the run that sends the winner to the rest starts with; the notification's id follows. */
export const AB_REST_RUN_KEY_PREFIX = 'ab-rest:';

/** The dedupe key of the run that sends the winner to the rest (docs/delivery.md, "Dedupe keys"). */
export function abRestRunKey(notificationId: string): string {
  return `${AB_REST_RUN_KEY_PREFIX}${notificationId}`;
}

export interface StoredAbVariant {
  title: string;
  message: string;
  destination_url: string;
  image_url: string | null;
}

export function variantsOf(row: Pick<AbTestRow, 'variants'>): StoredAbVariant[] {
  return JSON.parse(row.variants) as StoredAbVariant[];
}

/** A uniform draw in [0, 1) fixed by (notification, subscriber): the same subscriber draws the same number on every re-run. */
export function abDraw(notificationId: string, subscriberId: string): number {
  const digest = crypto.createHash('sha256').update(`${notificationId}\n${subscriberId}`).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/** How many of an audience of `audience` the sample takes: round(audience × percent), at least one per variant while the audience allows. */
export function abSampleSize(audience: number, percent: number, variants: number): number {
  return Math.min(audience, Math.max(Math.round((audience * percent) / 100), variants));
}

export interface AbPagePick {
  subscribers: AudienceMember[];
  /** By subscriber id. */
  variantOf: Map<string, number>;
  /** Stores the draw's progress with the page (call inside the page's transaction). */
  commit(trx: Db): Promise<void>;
}

/** Picks a fan-out page's subscribers and variants for one run of an A/B notification. */
export interface AbFanOut {
  pick(subscribers: AudienceMember[]): Promise<AbPagePick>;
}

/** Whether the notification carries variants (its sends are not split by zone: zone-runs.ts). */
export async function hasAbTest(db: DeliveryDeps['db'], notificationId: string): Promise<boolean> {
  return (await db.selectFrom('ab_tests').select('notification_id').where('notification_id', '=', notificationId).executeTakeFirst()) !== undefined;
}

/**
 * What a run of an A/B notification takes of each audience page, or
 * undefined for a single message:
 * - the remainder's run (`ab-rest:` key): everyone not already sent this
 *   notification (no delivery of another of its runs), all with the winner;
 * - no sample (`sample_percent` null): everyone, variants in turn;
 * - the sample: exactly round(N × percent) of the audience of N, drawn by
 *   selection sampling (Knuth's algorithm S) over the pages in id order with
 *   each subscriber's fixed draw, variants in turn among those taken. N is
 *   counted once, at the first page (one count query), and the draw's
 *   progress is stored with each page, so a resumed fan-out takes the same
 *   subscribers.
 */
export async function abFanOutFor(deps: Pick<DeliveryDeps, 'db' | 'deliveryPorts'>, run: RunRow): Promise<AbFanOut | undefined> {
  const { db } = deps;
  let test = await db.selectFrom('ab_tests').selectAll().where('notification_id', '=', run.notification_id).executeTakeFirst();
  if (!test) return undefined;
  const variantCount = variantsOf(test).length;

  if (run.dedupe_key === abRestRunKey(run.notification_id)) {
    const winner = test.winner_index ?? 0;
    return {
      async pick(subscribers) {
        const already = new Set(
          (
            await db
              .selectFrom('deliveries')
              .select('subscriber_seq')
              .where('run_seq', 'in', runSeqsOfNotification(run.notification_id))
              .where('run_seq', '!=', run.seq)
              .where('subscriber_seq', 'in', subscribers.map((subscriber) => subscriber.seq))
              .execute()
          ).map((row) => Number(row.subscriber_seq)),
        );
        const rest = subscribers.filter((subscriber) => !already.has(subscriber.seq));
        return { subscribers: rest, variantOf: new Map(rest.map((subscriber) => [subscriber.id, winner])), commit: async () => {} };
      },
    };
  }

  if (test.sample_percent === null) {
    let next = run.total_count;
    return {
      async pick(subscribers) {
        const variantOf = new Map(subscribers.map((subscriber, i) => [subscriber.id, (next + i) % variantCount]));
        return {
          subscribers,
          variantOf,
          commit: async () => {
            next += subscribers.length;
          },
        };
      },
    };
  }

  if (test.sample_audience === null) {
    // One count of the audience the pages will walk (an A/B send is never split by zone: every zone's count, added);
    // a segment that is gone counts nobody, as its pages would.
    const audience = (await deps.deliveryPorts.countAudienceByZone(db, run)).reduce((sum, zone) => sum + zone.subscribers, 0);
    // The first fan-out to count fixes N; a rival's count (or a resumed one's) reads it back.
    await db.updateTable('ab_tests').set({ sample_audience: audience }).where('notification_id', '=', run.notification_id).where('sample_audience', 'is', null).execute();
    test = await db.selectFrom('ab_tests').selectAll().where('notification_id', '=', run.notification_id).executeTakeFirstOrThrow();
  }
  const audience = test.sample_audience!;
  const size = abSampleSize(audience, test.sample_percent!, variantCount);
  let seen = test.sample_seen;
  let picked = test.sample_picked;
  return {
    async pick(subscribers) {
      let pageSeen = seen;
      let pagePicked = picked;
      const chosen: AudienceMember[] = [];
      const variantOf = new Map<string, number>();
      for (const subscriber of subscribers) {
        const id = subscriber.id;
        const left = Math.max(0, audience - pageSeen);
        const wanted = size - pagePicked;
        pageSeen += 1;
        // Algorithm S: take this one with probability wanted ÷ left (all of them once the audience shrank below what is wanted).
        if (wanted > 0 && (left <= wanted || abDraw(run.notification_id, id) * left < wanted)) {
          chosen.push(subscriber);
          variantOf.set(id, pagePicked % variantCount);
          pagePicked += 1;
        }
      }
      return {
        subscribers: chosen,
        variantOf,
        async commit(trx) {
          await trx.updateTable('ab_tests').set({ sample_seen: pageSeen, sample_picked: pagePicked }).where('notification_id', '=', run.notification_id).execute();
          seen = pageSeen;
          picked = pagePicked;
        },
      };
    },
  };
}

/** The variants of a batch's notification when any claimed delivery carries one (else nothing is read). */
export async function abVariantsOfBatch(db: Db, notificationId: string, claimed: ReadonlyArray<{ variant_index: number | null }>): Promise<StoredAbVariant[] | undefined> {
  if (claimed.every((c) => c.variant_index === null)) return undefined;
  const test = await db.selectFrom('ab_tests').select('variants').where('notification_id', '=', notificationId).executeTakeFirst();
  return test ? variantsOf(test) : undefined;
}

/**
 * The payload template of each variant (one per variant per batch), or an
 * empty map for a single message: the batch then renders the notification's
 * own template as before. Throws as createPayloadTemplate does.
 */
export function abVariantTemplates(variants: StoredAbVariant[] | undefined, notification: NotificationRow, site: SiteRow, publicUrl: string): Map<number, PayloadTemplate> {
  const templates = new Map<number, PayloadTemplate>();
  if (!variants) return templates;
  const base = notificationContent(notification, site);
  variants.forEach((variant, index) => {
    templates.set(index, createPayloadTemplate({ ...base, title: variant.title, body: variant.message, url: variant.destination_url, image: variant.image_url }, publicUrl));
  });
  return templates;
}
