// The one definition of "this user's role on a site" (docs/security.md,
// "Tenancy"). Every lookup "of a user" joins it on the resource's site id and
// selects `membership.role as member_role`, so a resource comes back together
// with the caller's role, and a site the caller is no member of comes back as
// nothing at all (the caller answers 404).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema';

type Db = Kysely<Database> | Transaction<Database>;

/** The sites the user is a member of with their role, as a table `membership(site_id, role)` to join. */
export function membershipsOf(db: Db, userId: string) {
  return db.selectFrom('site_members').select(['site_members.site_id', 'site_members.role']).where('site_members.user_id', '=', userId).as('membership');
}
