import { ROLE_LABELS, type SiteRole } from '@herald/contracts';
import type { ComponentProps, ReactNode } from 'react';
import { useLocation } from 'react-router';
import { usePermission, useSiteRole } from '../lib/site-role';
import { useSitesStore } from '../lib/sites-store';
import { Alert, Button, ButtonLink } from './ui';

/**
 * A link-styled button to a page only `needed` or higher may use; below it, the
 * same button disabled, its title saying why (e.g. "Viewers can't create
 * notifications"). The server refuses anyway: this only saves a wasted click.
 */
export function RoleGatedLink({ needed, action, ...props }: ComponentProps<typeof ButtonLink> & { needed: SiteRole; action: string }) {
  const permission = usePermission(needed, action);
  if (permission.allowed) return <ButtonLink {...props} />;
  return (
    <Button variant={props.variant} size={props.size} icon={props.icon} className={props.className} disabled title={permission.reason} aria-description={permission.reason}>
      {props.children as ReactNode}
    </Button>
  );
}

/** The same for an action button. */
export function RoleGatedButton({ needed, action, disabled, ...props }: ComponentProps<typeof Button> & { needed: SiteRole; action: string }) {
  const permission = usePermission(needed, action);
  return <Button {...props} disabled={disabled || !permission.allowed} title={permission.reason ?? props.title} aria-description={permission.reason} />;
}

/** Above every page of a site where the user is a viewer: why nothing can be changed. */
export function ViewerNotice() {
  const role = useSiteRole();
  const siteName = useSitesStore((s) => s.currentSite?.name);
  const { pathname } = useLocation();
  // The profile is the user's own, not the site's.
  if (role !== 'viewer' || pathname === '/profile') return null;
  return (
    <Alert tone="info" className="mb-6">
      You are a {ROLE_LABELS.viewer.toLowerCase()} of {siteName}: you can see everything, but not change or send anything. Ask an owner of the site for the editor
      role.
    </Alert>
  );
}
