import { ROLE_LABELS, roleAllows, type SiteRole } from '@herald/contracts';
import { useSitesStore } from './sites-store';

// What the signed-in user may do on the current site (docs/product.md,
// "Teams"). The server decides; the dashboard only hides or disables what it
// would refuse, and says why.

/** The user's role on the current site, or null with no site. */
export function useSiteRole(): SiteRole | null {
  return useSitesStore((s) => s.currentSite?.role ?? null);
}

export interface Permission {
  allowed: boolean;
  /** Why not, e.g. "Viewers can't send notifications": shown on the disabled control. */
  reason: string | undefined;
}

/** The reason text for a role that cannot do `action` (e.g. "send notifications"). */
export function refusalText(role: SiteRole, action: string): string {
  return `${ROLE_LABELS[role]}s can't ${action}`;
}

export function permissionOf(role: SiteRole | null, needed: SiteRole, action: string): Permission {
  // No site chosen (or the list not loaded yet): nothing to refuse; the pages say a site is needed.
  if (!role) return { allowed: true, reason: undefined };
  const allowed = roleAllows(role, needed);
  return { allowed, reason: allowed ? undefined : refusalText(role, action) };
}

/** Whether the current site's role allows `needed`, with the reason when it does not. */
export function usePermission(needed: SiteRole, action: string): Permission {
  return permissionOf(useSiteRole(), needed, action);
}
