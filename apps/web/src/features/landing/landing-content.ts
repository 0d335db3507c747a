import {
  BarChart3,
  Filter,
  Rss,
  ShieldCheck,
  ShoppingCart,
  PenTool,
  Rocket,
  UserPlus,
  Zap,
  type LucideIcon,
} from 'lucide-react';

// The marketing copy of the public landing page (spec §1, §2 "/").

export interface Feature {
  title: string;
  description: string;
  icon: LucideIcon;
}

export const FEATURES: readonly Feature[] = [
  {
    title: 'Smart Notifications',
    description: 'Send one-time, scheduled, recurring and event-triggered notifications, with a live preview of how they look on each browser.',
    icon: Zap,
  },
  {
    title: 'RSS Automation',
    description: 'Connect your blog or store feed and notify subscribers about new content automatically, with a daily limit you control.',
    icon: Rss,
  },
  {
    title: 'Advanced Segmentation',
    description: 'Target subscribers by browser, operating system, country and how long they have been subscribed.',
    icon: Filter,
  },
  {
    title: 'Real-Time Analytics',
    description: 'Follow sent, delivered and clicked counts, click rates and the value your notifications generate.',
    icon: BarChart3,
  },
  {
    title: 'Welcome Campaigns',
    description: 'Greet every new subscriber with a drip sequence of notifications spaced minutes, hours or days apart.',
    icon: UserPlus,
  },
  {
    title: 'Self-Hosted & Secure',
    description: 'Run Herald on your own server. Your subscribers, keys and data never leave your infrastructure.',
    icon: ShieldCheck,
  },
];

export const BENEFITS: readonly { title: string; description: string }[] = [
  { title: 'Own your audience', description: 'Subscribers are stored in your database, not rented from a third-party platform.' },
  { title: 'Privacy by design', description: 'No tracking pixels or data resale. Only what you need to deliver and measure notifications.' },
  { title: 'No per-subscriber fees', description: 'Grow from a hundred to a hundred thousand subscribers without your bill growing with them.' },
  { title: 'Works where your visitors are', description: 'Chrome, Firefox, Safari, Edge and Opera on desktop and mobile, using the open Web Push standard.' },
  { title: 'Know what it is worth', description: 'Set a value per subscriber and per click to see the revenue your notifications bring.' },
  { title: 'Set up in minutes', description: 'Paste one snippet and add one service worker file. No app, no SDK build step.' },
];

export const AUDIENCES: readonly Feature[] = [
  {
    title: 'E-commerce',
    description: 'Announce sales, restocks and price drops, and bring shoppers back to abandoned carts.',
    icon: ShoppingCart,
  },
  {
    title: 'Content Creators',
    description: 'Tell readers the moment a new article, video or episode goes live, straight from your RSS feed.',
    icon: PenTool,
  },
  {
    title: 'SaaS Platforms',
    description: 'Onboard new users with welcome sequences and keep them informed about releases and account events.',
    icon: Rocket,
  },
];

export interface Plan {
  name: string;
  price: string;
  period: string;
  description: string;
  features: readonly string[];
  highlighted: boolean;
}

/** Spec §1 advertised plans. */
export const PLANS: readonly Plan[] = [
  {
    name: 'Self-Hosted',
    price: '$0',
    period: 'forever',
    description: 'Run Herald on your own server.',
    features: ['Unlimited notifications', 'Unlimited subscribers', 'All features included', 'Community support'],
    highlighted: false,
  },
  {
    name: 'Managed Starter',
    price: '$29',
    period: '/month',
    description: 'We host it, you send.',
    features: ['Up to 10,000 subscribers', 'Unlimited notifications', 'Priority support', '99.9% uptime SLA'],
    highlighted: true,
  },
  {
    name: 'Managed Pro',
    price: '$99',
    period: '/month',
    description: 'For large audiences.',
    features: ['Up to 100,000 subscribers', 'Unlimited notifications', 'Dedicated infrastructure', '24/7 priority support'],
    highlighted: false,
  },
];

/** Static figures for the sample dashboard picture on the landing page (not real data). */
export const DEMO_METRICS: readonly { label: string; value: string; change: string }[] = [
  { label: 'Total Subscribers', value: '24,581', change: '+12.5%' },
  { label: 'Notifications Sent', value: '142,390', change: '+8.2%' },
  { label: 'Click Rate', value: '12.8%', change: '+2.1%' },
  { label: 'Value Generated', value: '$18,420', change: '+15.3%' },
];

export const DEMO_WEEK: readonly { day: string; clicks: number }[] = [
  { day: 'Mon', clicks: 62 },
  { day: 'Tue', clicks: 78 },
  { day: 'Wed', clicks: 55 },
  { day: 'Thu', clicks: 91 },
  { day: 'Fri', clicks: 84 },
  { day: 'Sat', clicks: 46 },
  { day: 'Sun', clicks: 38 },
];
