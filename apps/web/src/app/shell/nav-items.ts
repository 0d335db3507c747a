import { Bell, CircleHelp, Filter, LayoutDashboard, Megaphone, Rss, Settings, Users, type LucideIcon } from 'lucide-react';

export interface NavItem {
  label: string;
  to: string;
  icon: LucideIcon;
}

/** Spec §2 Shell: the sidebar entries, in order. Pages are added to the router separately. */
export const NAV_ITEMS: readonly NavItem[] = [
  { label: 'Dashboard', to: '/dashboard', icon: LayoutDashboard },
  { label: 'Notifications', to: '/notifications', icon: Bell },
  { label: 'Subscribers', to: '/subscribers', icon: Users },
  { label: 'Campaigns', to: '/campaigns', icon: Megaphone },
  { label: 'Segments', to: '/segments', icon: Filter },
  { label: 'RSS Feeds', to: '/rss-feeds', icon: Rss },
  { label: 'Settings', to: '/settings', icon: Settings },
  { label: 'Help', to: '/help', icon: CircleHelp },
];

/** Spec §2: an entry is highlighted when the path equals it or starts with it plus a slash. */
export function isNavItemActive(pathname: string, to: string): boolean {
  return pathname === to || pathname.startsWith(`${to}/`);
}
