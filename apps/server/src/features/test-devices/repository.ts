import type { Kysely, Transaction } from 'kysely';
import { membershipsOf } from '../../db/membership';
import type { Database, NotificationRow, SubscriberRow } from '../../db/schema';
import type { WithMemberRole } from '../../platform/site-roles';

type Db = Kysely<Database> | Transaction<Database>;

export interface TestDeviceLinkRow {
  code_hash: string;
  site_id: string;
  expires_at: number;
  used_at: number | null;
}

export async function insertLink(db: Db, row: { code_hash: string; site_id: string; created_by: string; created_at: number; expires_at: number }): Promise<void> {
  await db.insertInto('test_device_links').values({ ...row, used_at: null, subscriber_id: null }).execute();
}

/** Links of a site that no longer work (expired, or used a day ago) are forgotten when the next one is made. */
export async function deleteSpentLinks(db: Db, siteId: string, now: number): Promise<void> {
  await db
    .deleteFrom('test_device_links')
    .where('site_id', '=', siteId)
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('used_at', '<=', now - 86_400_000)]))
    .execute();
}

export function findLink(db: Db, codeHash: string): Promise<TestDeviceLinkRow | undefined> {
  return db.selectFrom('test_device_links').select(['code_hash', 'site_id', 'expires_at', 'used_at']).where('code_hash', '=', codeHash).executeTakeFirst();
}

/** Uses the link once: false when it was used (or ran out) meanwhile, so of two claims only one wins. */
export async function useLink(db: Db, codeHash: string, subscriberId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('test_device_links')
    .set({ used_at: now, subscriber_id: subscriberId })
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export function findSubscriberByEndpointHash(db: Db, siteId: string, hash: string): Promise<SubscriberRow | undefined> {
  return db.selectFrom('subscribers').selectAll().where('site_id', '=', siteId).where('endpoint_hash', '=', hash).executeTakeFirst();
}

/** The subscriber if it belongs to one of the user's sites; another user's is indistinguishable from a missing one. */
export function findSubscriberOfUser(db: Db, userId: string, subscriberId: string): Promise<(SubscriberRow & WithMemberRole) | undefined> {
  return db
    .selectFrom('subscribers')
    .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'subscribers.site_id')
    .selectAll('subscribers')
    .select('membership.role as member_role')
    .where('subscribers.id', '=', subscriberId)
    .executeTakeFirst();
}

export async function setTestDevice(db: Db, subscriberId: string, name: string | null, now: number): Promise<void> {
  await db
    .updateTable('subscribers')
    .set({ test_device: name === null ? 0 : 1, test_device_name: name, updated_at: now })
    .where('id', '=', subscriberId)
    .execute();
}

export type TestDeviceRow = Pick<SubscriberRow, 'id' | 'browser' | 'os' | 'test_device_name' | 'endpoint' | 'p256dh' | 'auth' | 'vapid_key_id'> & {
  /** The key pair it subscribed with (a test push is signed with it); null: the site's primary key. */
  vapid_public_key: string | null;
  vapid_private_key: string | null;
};

/** The site's active test devices, oldest first (the partial index on test devices), at most `limit`. */
export function listTestDevices(db: Db, siteId: string, limit: number): Promise<TestDeviceRow[]> {
  return db
    .selectFrom('subscribers')
    .leftJoin('site_vapid_keys', 'site_vapid_keys.id', 'subscribers.vapid_key_id')
    .select([
      'subscribers.id',
      'subscribers.browser',
      'subscribers.os',
      'subscribers.test_device_name',
      'subscribers.endpoint',
      'subscribers.p256dh',
      'subscribers.auth',
      'subscribers.vapid_key_id',
      'site_vapid_keys.public_key as vapid_public_key',
      'site_vapid_keys.private_key as vapid_private_key',
    ])
    .where('subscribers.site_id', '=', siteId)
    .where('subscribers.test_device', '=', 1)
    .where('subscribers.is_active', '=', 1)
    .orderBy('subscribers.subscribed_at')
    .orderBy('subscribers.id')
    .limit(limit)
    .execute();
}

/** A notification of one of the user's sites. */
export function findNotificationOfUser(db: Db, userId: string, notificationId: string): Promise<(NotificationRow & WithMemberRole) | undefined> {
  return db
    .selectFrom('notifications')
    .innerJoin(membershipsOf(db, userId), 'membership.site_id', 'notifications.site_id')
    .selectAll('notifications')
    .select('membership.role as member_role')
    .where('notifications.id', '=', notificationId)
    .executeTakeFirst();
}

export async function findUserEmail(db: Db, userId: string): Promise<string | undefined> {
  return (await db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirst())?.email;
}

export async function markTestSent(db: Db, siteId: string, now: number): Promise<void> {
  await db.updateTable('sites').set({ test_sent_at: now }).where('id', '=', siteId).execute();
}
