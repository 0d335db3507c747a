// Spec §2 Help Center: "Tooltip help texts exist for dashboard, notification
// and settings fields". One shared module, so every screen says the same thing
// about the same field; pass a text to a Field/Label `tooltip` or a Tooltip.
import { NOTIFICATION_MESSAGE_MAX, NOTIFICATION_TITLE_MAX, SCHEDULE_MAX_DAYS_AHEAD } from '@herald/contracts';

export const DASHBOARD_HELP = {
  totalSubscribers:
    'Browsers currently subscribed to this site. The change compares today’s count with the count at the start of the period.',
  notificationsSent:
    'Pushes accepted by the browsers’ push services in the period (one per subscriber per notification). The change compares with the previous period of the same length.',
  clickRate: 'Clicks divided by delivered notifications × 100. A notification counts as delivered when the subscriber’s browser reports that it showed it.',
  valueGenerated:
    'New subscribers × value per subscriber + clicks × value per click, in the currency set under Settings → Value Goals.',
  performanceChart: 'Sent, delivered and clicked notifications per day over the last 7 days, in your site’s timezone.',
  weeklyEngagement: 'Clicks on your notifications by day of the week over the last 7 days, in your site’s timezone.',
  recentNotifications:
    'Your latest sends with their click-through rate (CTR = clicks ÷ delivered × 100), how many the push services accepted (sent) and how many failed. A send no push service accepted is listed as failed.',
  deliveryHealth:
    'How the push services answered this site’s sends, per service: accepted, failed (with the reason), expired subscriptions (404/410) and the median time from a send being due to its acceptance; below, subscriptions gained against those lost each day.',
  staleSubscribers:
    'Active subscribers who subscribed 90+ days ago and whose browser has not reported a single delivered notification in 90 days. Cleaning them up (deactivating them) is the best practice: they only inflate the audience.',
  recurringNotifications: 'Notifications that repeat on a schedule. Inactive ones are paused and send nothing.',
  welcomeCampaigns: 'Sequences sent to every new subscriber. Only one campaign can be active; changes only affect people who subscribe afterwards.',
} as const;

export const NOTIFICATION_HELP = {
  type: 'One-time: sent once, now or at a scheduled time. Recurring: repeats every N days, weeks or months. Triggered: sent automatically when your site reports an event.',
  segment: 'Who receives it: every active subscriber, or only those matching a segment’s rules when it is sent.',
  title: `The bold first line of the notification, at most ${NOTIFICATION_TITLE_MAX} characters. Shorter titles are less likely to be cut off.`,
  message: `The text under the title, at most ${NOTIFICATION_MESSAGE_MAX} characters. Lead with the benefit; some systems show only two lines.`,
  destinationUrl: 'The page that opens when the notification is clicked. It must be a complete address starting with https://.',
  icon: 'A square image shown next to the text; 192×192 pixels works everywhere. Without one, the site’s notification icon is used.',
  largeImage: 'A wide picture shown under the text in Chrome and Edge on Windows and Android; 1200×628 pixels is recommended. Other browsers ignore it.',
  actionButtons: 'Up to 2 buttons under the notification, each opening its own link. Not every browser shows them.',
  scheduledAt: `Leave empty to save as a draft, or pick a time up to ${SCHEDULE_MAX_DAYS_AHEAD} days ahead. Times are in your site’s timezone.`,
  recurringInterval: 'How often it repeats: daily, weekly or monthly.',
  recurringEvery: 'Repeat every N intervals, for example every 2 weeks. At least 1.',
  recurringStart: 'The first send, in your site’s timezone. Later sends keep the same time of day.',
  recurringEnd: 'Leave empty to continue indefinitely; no send happens after this time.',
  triggered: 'Sent automatically to a subscriber when your site reports the chosen event (herald.track() in the browser or the events API with an API key).',
} as const;

export const SETTINGS_HELP = {
  siteName: 'Your name for this site in Herald. Visitors do not see it.',
  websiteUrl: 'The address of your site, starting with https://. Push only works on secure (HTTPS) pages.',
  icon: 'The default icon of every notification from this site; 192×192 pixels recommended.',
  language: 'The language most of your subscribers read. Write your notifications in it.',
  timezone: 'Dashboard days, schedule times and recurring sends use this timezone.',
  currency: 'The currency of Value Generated on the dashboard.',
  valuePerSubscriber: 'What a new subscriber is worth to you, for example the average revenue of a subscriber. 0 leaves subscribers out of the value.',
  valuePerClick: 'What one click on a notification is worth to you, for example revenue per visit × conversion rate. 0 leaves clicks out of the value.',
  installation: 'The code to paste before the closing </body> tag, and the one-line service worker to save at the root of your site.',
  vapidPublicKey: 'Identifies this site to the browsers’ push services. It is part of the installation code and safe to share.',
  vapidPrivateKey: 'Signs every push from this site. Never share it: anyone holding it could send notifications to your subscribers.',
} as const;
