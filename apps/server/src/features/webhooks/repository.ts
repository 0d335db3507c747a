import { expressionBuilder, type Expression, type Insertable, type Kysely, type SqlBool, type Transaction } from 'kysely';
import { membershipsOf } from '../../db/membership';
import type { Database, WebhookAttemptsTable, WebhookDeliveriesTable, WebhooksTable } from '../../db/schema';
import type { WithMemberRole } from '../../platform/site-roles';

type Db = Kysely<Database> | Transaction<Database>;
export type WebhookRow = WebhooksTable;

export async function insertWebhook(db: Db, row: WebhookRow): Promise<void> {
  await db.insertInto('webhooks').values(row).execute();
}

export function listWebhooks(db: Db, siteId: string): Promise<WebhookRow[]> {
  return db.selectFrom('webhooks').selectAll().where('site_id', '=', siteId).orderBy('created_at').orderBy('id').execute();
}

export async function countWebhooks(db: Db, siteId: string): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('site_id', '=', siteId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A webhook of a site the user is a member of, with their role; another user's is indistinguishable from a missing one. */
export function findWebhookOfUser(db: Db, userId: string, webhookId: string): Promise<(WebhookRow & WithMemberRole) | undefined> {
  return db
    .selectFrom('webhooks')
    .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'webhooks.site_id')
    .selectAll('webhooks')
    .select('membership.role as member_role')
    .where('webhooks.id', '=', webhookId)
    .executeTakeFirst();
}

export async function deleteWebhook(db: Db, webhookId: string): Promise<boolean> {
  const result = await db.deleteFrom('webhooks').where('id', '=', webhookId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function insertDeliveries(db: Db, rows: Array<Insertable<WebhookDeliveriesTable>>): Promise<void> {
  if (rows.length) await db.insertInto('webhook_deliveries').values(rows).execute();
}

/** A delivery with what is needed to send it: its webhook's URL and secret. */
export function findDeliveryToSend(db: Db, deliveryId: string) {
  return db
    .selectFrom('webhook_deliveries')
    .innerJoin('webhooks', 'webhooks.id', 'webhook_deliveries.webhook_id')
    .select([
      'webhook_deliveries.id',
      'webhook_deliveries.webhook_id',
      'webhook_deliveries.payload',
      'webhook_deliveries.status',
      'webhook_deliveries.attempts',
      'webhook_deliveries.created_at',
      'webhook_deliveries.next_attempt_at',
      'webhooks.url',
      'webhooks.secret',
    ])
    .where('webhook_deliveries.id', '=', deliveryId)
    .executeTakeFirst();
}

/**
 * Claims up to `limit` deliveries whose attempt is due: one conditional
 * UPDATE moves next_attempt_at to the lease's end, so of two schedulers only
 * one takes a row (docs/delivery.md, "Webhooks").
 */
export async function claimDueDeliveries(db: Db, now: number, leaseUntil: number, limit: number): Promise<string[]> {
  const due = db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(limit);
  const rows = await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: leaseUntil })
    .where('id', 'in', due)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

/** Records one attempt and the delivery's new state; false when the delivery was finished meanwhile. */
export async function recordAttempt(
  db: Kysely<Database>,
  attempt: Insertable<WebhookAttemptsTable>,
  next: { status: 'pending' | 'delivered' | 'failed'; nextAttemptAt: number | null; finishedAt: number | null },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('webhook_deliveries')
      .set((eb) => ({ status: next.status, next_attempt_at: next.nextAttemptAt, finished_at: next.finishedAt, attempts: eb('attempts', '+', 1) }))
      .where('id', '=', attempt.delivery_id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (!Number(updated.numUpdatedRows)) return false;
    await trx.insertInto('webhook_attempts').values(attempt).execute();
    return true;
  });
}

/** The delivery log: attempts newest first, with their event and the event's state now. */
export function listAttempts(db: Db, webhookId: string, limit: number, attemptId?: string) {
  let query = db
    .selectFrom('webhook_attempts')
    .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
    .select([
      'webhook_attempts.id',
      'webhook_attempts.delivery_id',
      'webhook_attempts.attempt',
      'webhook_attempts.attempted_at',
      'webhook_attempts.status_code',
      'webhook_attempts.error',
      'webhook_deliveries.event_type',
      'webhook_deliveries.status',
      'webhook_deliveries.next_attempt_at',
    ])
    .where('webhook_attempts.webhook_id', '=', webhookId);
  if (attemptId) query = query.where('webhook_attempts.id', '=', attemptId);
  return query.orderBy('webhook_attempts.attempted_at', 'desc').orderBy('webhook_attempts.id', 'desc').limit(limit).execute();
}

/** The webhooks of a site that want this event type. */
export async function webhooksFor(db: Db, siteId: string, type: string): Promise<Array<{ id: string }>> {
  const rows = await db.selectFrom('webhooks').select(['id', 'events']).where('site_id', '=', siteId).execute();
  return rows.filter((row) => (JSON.parse(row.events) as string[]).includes(type));
}

/**
 * A webhook of the site of `siteId` wants events of `type` (a
 * subscriber-created hook's `concerns`). `events` holds a JSON array of
 * event names; a name in quotes matches only itself (names have no quotes).
 */
export function hasWebhookFor(siteId: Expression<string>, type: string): Expression<SqlBool> {
  const eb = expressionBuilder<Database, never>();
  return eb.exists(eb.selectFrom('webhooks').select('id').where('site_id', '=', siteId).where('events', 'like', `%${JSON.stringify(type)}%`));
}

/** The webhooks of these sites that want `type`, by site (sites with none are left out). */
export async function webhooksOfSitesFor(db: Db, siteIds: readonly string[], type: string): Promise<Map<string, Array<{ id: string }>>> {
  const bySite = new Map<string, Array<{ id: string }>>();
  if (!siteIds.length) return bySite;
  const rows = await db.selectFrom('webhooks').select(['id', 'site_id', 'events']).where('site_id', 'in', siteIds).orderBy('id').execute();
  for (const row of rows) {
    if (!(JSON.parse(row.events) as string[]).includes(type)) continue;
    bySite.set(row.site_id, [...(bySite.get(row.site_id) ?? []), { id: row.id }]);
  }
  return bySite;
}

/** What a notification.completed / notification.failed event says of its notification. */
export function findNotificationSummary(db: Db, notificationId: string): Promise<{ title: string; type: string; source: string } | undefined> {
  return db.selectFrom('notifications').select(['title', 'type', 'source']).where('id', '=', notificationId).executeTakeFirst();
}

/** Adds clicks to the tally of the next notification.clicked batch. */
export async function addClick(db: Db, webhookId: string, notificationId: string, clicks: number): Promise<void> {
  await db
    .insertInto('webhook_click_tallies')
    .values({ webhook_id: webhookId, notification_id: notificationId, clicks })
    .onConflict((oc) => oc.columns(['webhook_id', 'notification_id']).doUpdateSet((eb) => ({ clicks: eb('webhook_click_tallies.clicks', '+', eb.ref('excluded.clicks')) })))
    .execute();
}

/** Claims the webhooks whose click batch may go now (tallies waiting, a minute since the last): one conditional UPDATE. */
export async function claimClickBatches(db: Db, now: number, nextAt: number, limit: number): Promise<Array<{ id: string; site_id: string }>> {
  const due = db
    .selectFrom('webhooks')
    .select('webhooks.id')
    .where((eb) => eb.exists(eb.selectFrom('webhook_click_tallies').select('webhook_click_tallies.webhook_id').whereRef('webhook_click_tallies.webhook_id', '=', 'webhooks.id')))
    .where((eb) => eb.or([eb('clicks_next_at', 'is', null), eb('clicks_next_at', '<=', now)]))
    .limit(limit);
  return db
    .updateTable('webhooks')
    .set({ clicks_next_at: nextAt })
    .where('id', 'in', due)
    .where((eb) => eb.or([eb('clicks_next_at', 'is', null), eb('clicks_next_at', '<=', now)]))
    .returning(['id', 'site_id'])
    .execute();
}

/** Takes every tally of a webhook (deleted as read, in the caller's transaction). */
export async function takeClickTallies(db: Db, webhookId: string): Promise<Array<{ notification_id: string; clicks: number }>> {
  return db.deleteFrom('webhook_click_tallies').where('webhook_id', '=', webhookId).returning(['notification_id', 'clicks']).execute();
}

/** Deletes up to `limit` deliveries finished before `cutoff` (their attempts go with them); returns how many. */
export async function purgeFinishedDeliveries(db: Db, cutoff: number, limit: number): Promise<number> {
  const old = db.selectFrom('webhook_deliveries').select('id').where('finished_at', 'is not', null).where('finished_at', '<', cutoff).limit(limit);
  const result = await db.deleteFrom('webhook_deliveries').where('id', 'in', old).executeTakeFirst();
  return Number(result.numDeletedRows);
}
