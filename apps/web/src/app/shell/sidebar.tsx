import { LogOut, Plus, X } from 'lucide-react';
import { Link, NavLink, useLocation, useNavigate } from 'react-router';
import { HeraldLogo } from '../../components/herald-logo';
import { RoleGatedLink } from '../../components/role-gate';
import { Button } from '../../components/ui';
import { useLogoutMutation } from '../../features/auth/api';
import { useAuthStore } from '../../lib/auth-store';
import { cn } from '../../lib/class-names';
import { clearSession } from '../../lib/session';
import { isNavItemActive, NAV_ITEMS } from './nav-items';
import { SiteSelector } from './site-selector';

export const SIDEBAR_ID = 'app-sidebar';

function initials(name: string): string {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  return ((parts[0]?.[0] ?? '') + (parts.length > 1 ? (parts[parts.length - 1]?.[0] ?? '') : '')).toUpperCase() || '?';
}

interface SidebarProps {
  /** Phones and tablets: the sidebar floats over the page and has its own close button. */
  overlay: boolean;
  onClose: () => void;
}

export function Sidebar({ overlay, onClose }: SidebarProps) {
  const { pathname } = useLocation();
  const navigate = useNavigate();
  const user = useAuthStore((s) => s.user);
  const logout = useLogoutMutation();

  function onLogout() {
    // The session ends in this browser even if the server cannot be reached.
    logout.mutate(undefined, {
      onSettled: () => {
        clearSession();
        void navigate('/login', { replace: true });
      },
    });
  }

  return (
    <aside
      id={SIDEBAR_ID}
      aria-label="Sidebar"
      className={cn(
        'flex w-72 shrink-0 flex-col border-r border-slate-200 bg-white lg:w-64',
        overlay ? 'fixed inset-y-0 left-0 z-40 shadow-xl' : 'sticky top-0 h-dvh',
      )}
    >
      <div className="flex h-16 items-center justify-between gap-2 border-b border-slate-200 px-4">
        <Link to="/dashboard" className="rounded-md" aria-label="Herald dashboard">
          <HeraldLogo />
        </Link>
        {overlay ? (
          <button
            type="button"
            onClick={onClose}
            className="inline-flex size-9 items-center justify-center rounded-lg text-slate-600 hover:bg-slate-100 hover:text-slate-900"
            aria-label="Close navigation"
          >
            <X className="size-5" aria-hidden="true" />
          </button>
        ) : null}
      </div>

      <div className="flex flex-col gap-4 border-b border-slate-200 p-4">
        <SiteSelector onChosen={overlay ? onClose : undefined} />
        <RoleGatedLink to="/notifications/new" needed="editor" action="create notifications" className="w-full" icon={<Plus className="size-4" aria-hidden="true" />}>
          New Notification
        </RoleGatedLink>
      </div>

      <nav aria-label="Main" className="flex-1 overflow-y-auto p-3">
        <ul className="flex flex-col gap-0.5">
          {NAV_ITEMS.map(({ label, to, icon: Icon }) => {
            const active = isNavItemActive(pathname, to);
            return (
              <li key={to}>
                <NavLink
                  to={to}
                  // The spec's rule decides, not the router's default matching.
                  aria-current={active ? 'page' : undefined}
                  className={cn(
                    'flex items-center gap-3 rounded-lg px-3 py-2 text-sm font-medium transition-colors',
                    active ? 'bg-indigo-50 text-indigo-700' : 'text-slate-700 hover:bg-slate-100 hover:text-slate-900',
                  )}
                >
                  <Icon className={cn('size-5 shrink-0', active ? 'text-indigo-600' : 'text-slate-500')} aria-hidden="true" />
                  {label}
                </NavLink>
              </li>
            );
          })}
        </ul>
      </nav>

      <div className="border-t border-slate-200 p-4">
        <div className="flex items-center gap-3">
          <span className="flex size-9 shrink-0 items-center justify-center rounded-full bg-indigo-100 text-sm font-semibold text-indigo-800" aria-hidden="true">
            {initials(user?.name ?? '')}
          </span>
          <Link to="/profile" className="min-w-0 flex-1 rounded hover:text-indigo-700" data-testid="profile-link" title="Your profile">
            <p className="truncate text-sm font-medium text-slate-900" data-testid="user-name">
              {user?.name}
            </p>
            <p className="truncate text-xs text-slate-600" data-testid="user-email">
              {user?.email}
            </p>
          </Link>
        </div>
        <Button
          variant="secondary"
          size="sm"
          className="mt-3 w-full"
          onClick={onLogout}
          loading={logout.isPending}
          icon={<LogOut className="size-4" aria-hidden="true" />}
          data-testid="logout-button"
        >
          Log out
        </Button>
      </div>
    </aside>
  );
}
