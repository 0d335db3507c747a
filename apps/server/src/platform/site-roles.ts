import { roleAllows, roleNeededMessage, type SiteRole } from '@herald/contracts';
import { HttpError, notFound } from './errors';

/** A row looked up together with the caller's role on its site (db/membership.ts). */
export interface WithMemberRole {
  member_role: SiteRole;
}

/**
 * docs/security.md, "Tenancy": a resource of a site the caller is no member
 * of answers 404 (never reveal another tenant's ids); a member whose role is
 * below `needed` gets 403 naming the role needed. Checked before any write,
 * so a refused request changes nothing.
 */
export function checkSiteRole<T extends WithMemberRole>(found: T | undefined, needed: SiteRole, what: string): T {
  if (!found) throw notFound(what);
  if (!roleAllows(found.member_role, needed)) throw new HttpError(403, roleNeededMessage(needed), 'role_required');
  return found;
}
