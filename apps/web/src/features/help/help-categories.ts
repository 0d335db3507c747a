import { Bell, BookOpen, CircleAlert, Filter, LayoutDashboard, Megaphone, Rocket, Rss, Settings, Users, type LucideIcon } from 'lucide-react';
import type { HelpCategoryId } from './help-types';

export interface HelpCategory {
  id: HelpCategoryId;
  title: string;
  description: string;
  icon: LucideIcon;
}

/** Spec §2 Help Center: browse by topic. */
export const HELP_CATEGORIES: readonly HelpCategory[] = [
  { id: 'getting-started', title: 'Getting Started', description: 'Install Herald on your site and send your first notification.', icon: Rocket },
  { id: 'dashboard', title: 'Dashboard', description: 'What the metric cards, charts and panels tell you.', icon: LayoutDashboard },
  { id: 'notifications', title: 'Notifications', description: 'Types, statuses, scheduling, triggers and how delivery is counted.', icon: Bell },
  { id: 'campaigns', title: 'Welcome Campaigns', description: 'Drip sequences that greet every new subscriber.', icon: Megaphone },
  { id: 'subscribers', title: 'Subscribers', description: 'Find, filter and remove subscribers.', icon: Users },
  { id: 'segments', title: 'Segments', description: 'Target subscribers by browser, system, country, age and tags.', icon: Filter },
  { id: 'rss-feeds', title: 'RSS Feeds', description: 'Notify subscribers automatically about new posts.', icon: Rss },
  { id: 'settings', title: 'Settings', description: 'Site details, value goals, installation code, VAPID keys and API keys.', icon: Settings },
  { id: 'troubleshooting', title: 'Troubleshooting', description: 'HTTPS, the service worker, API errors and CORS.', icon: CircleAlert },
  { id: 'best-practices', title: 'Best Practices', description: 'Benchmarks and habits of lists that stay healthy.', icon: BookOpen },
];
