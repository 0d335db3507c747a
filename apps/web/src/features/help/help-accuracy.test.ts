import {
  AB_SAMPLE_PERCENT_MAX,
  DELIVERY_RETENTION_DEFAULT_DAYS,
  REPORT_COUNT_COLUMNS,
  AB_SAMPLE_PERCENT_MIN,
  AB_VARIANTS_MAX,
  AB_VARIANTS_MIN,
  API_KEY_PREFIX,
  INVITATION_TTL_DAYS,
  ROLE_LABELS,
  SITE_ROLES,
  roleNeededMessage,
  CAMPAIGN_STEP_MESSAGE_MAX,
  CAMPAIGN_STEP_TITLE_MAX,
  EVENT_DATA_MAX_CHARS,
  IDEMPOTENCY_KEY_HEADER,
  EVENT_NAME_MAX,
  NOTIFICATION_ACTIONS_MAX,
  NOTIFICATION_MESSAGE_MAX,
  NOTIFICATION_TITLE_MAX,
  RSS_CHECK_INTERVAL_MINUTES,
  RSS_ITEM_ID_SHOWN_LENGTH,
  SCHEDULE_MAX_DAYS_AHEAD,
  THROTTLE_PER_MINUTE_MAX,
  THROTTLE_PER_MINUTE_MIN,
  SEGMENT_BROWSERS,
  SEGMENT_ESTIMATE_FROM_ACTIVE,
  SEGMENT_OPERATING_SYSTEMS,
  SUBSCRIBER_EXPORT_TAG_SEPARATOR,
  subscriberExportColumns,
  TRIGGER_DELAY_MAX_MINUTES,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_SECRET_PREFIX,
  WEBHOOKS_PER_SITE_MAX,
  SUBSCRIBER_REMOVED_CAUSES,
  SUBSCRIBER_IMPORT_FIELDS,
  SUBSCRIBER_IMPORT_REJECT_REASONS,
} from '@herald/contracts';
import { describe, expect, it } from 'vitest';
import { refusalText } from '../../lib/site-role';
import { NOTIFICATIONS_PAGE_SIZE } from '../notifications/api';
import { subscriberCountText } from '../segments/segment-labels';
import { INSTALL_CHECK_LABELS } from '../onboarding/components/install-check-list';
import { SUBSCRIBER_PRIVACY_TEXTS } from '../subscribers/privacy-texts';
import { REASON_LABELS } from '../../components/send-outcome';
import { TTL_CHOICES, URGENCY_LABELS } from '../notifications/notification-form';
import { HELP_ARTICLES, findArticle } from './help-articles';

// The help centre was written while the features were built; these checks
// tie what it promises to the product's own constants and names, so a change
// on either side shows up here instead of misleading a reader.

const text = (id: string) => {
  const article = findArticle(id);
  if (!article) throw new Error(`No help article ${id}`);
  return article.content;
};
const everything = HELP_ARTICLES.map((a) => a.content).join('\n');

/** window.herald (packages/sdk/src/page/herald.ts HeraldApi). */
const SDK_METHODS = ['subscribe', 'unsubscribe', 'isSubscribed', 'permission', 'track', 'identify', 'addTags', 'removeTags'];
/** The snippet's data- attributes (packages/sdk/src/page/script-settings.ts). */
const SNIPPET_ATTRIBUTES = ['data-site-id', 'data-vapid-key', 'data-worker', 'data-prompt', 'data-api'];

/** Settings tabs (features/sites/pages/settings-page.tsx). */
const SETTINGS_TABS = ['General', 'Installation', 'VAPID Keys', 'Import', 'API Keys', 'Webhooks', 'Automation', 'Members', 'Audit log'];

describe('help articles match the product', () => {
  it('describes every role as the product does, with the refusal texts and the invitation lifetime', () => {
    const roles = text('team-members-and-roles');
    for (const role of SITE_ROLES) expect(roles, role).toContain(`- **${ROLE_LABELS[role]}**: `);
    expect(roles).toContain(`"${roleNeededMessage('editor')}"`);
    expect(roles).toContain(`"${refusalText('viewer', 'send notifications')}"`);
    expect(roles).toContain(`for **${INVITATION_TTL_DAYS} days**`);
    const audit = text('audit-log');
    expect(audit).toContain(`"${roleNeededMessage('admin')}"`);
    for (const label of ['Who (email)', 'Action', 'From', 'To', 'Apply filters', 'Load more', 'Export CSV']) expect(audit, label).toContain(`**${label}**`);
  });


  it('describes the outcome model and every failure reason by the name the dashboard shows (issue 11)', () => {
    const tracking = text('delivery-tracking');
    expect(tracking).toContain('**targeted = sent + failed + expired + skipped + pending**');
    for (const [reason, label] of Object.entries(REASON_LABELS)) {
      // 404/410 is "Expired" in the counts, not a failure reason.
      if (reason !== 'gone') expect(tracking, reason).toContain(`**${label}**`);
    }
    expect(tracking).toContain('**Reach** = delivered ÷ targeted × 100');
    expect(text('notification-statuses')).toContain('## Completed with errors');
    expect(text('notification-statuses')).toContain(`${NOTIFICATIONS_PAGE_SIZE} notifications a page`);
    expect(text('list-hygiene')).toContain('**Delivery → Clean up**');
  });


  it('says how long a delivery’s line is kept and names the CSV report’s count columns (issue 15 §1)', () => {
    const tracking = text('delivery-tracking');
    expect(tracking).toContain(`**${DELIVERY_RETENTION_DEFAULT_DAYS} days**`);
    expect(tracking).toContain('`DELIVERY_RETENTION_DAYS`');
    for (const column of REPORT_COUNT_COLUMNS) expect(tracking, column).toContain(`**${column}**`);
  });

  it('names the delivery options as the notification form does (issue 14 §6)', () => {
    const options = text('delivery-options');
    for (const label of Object.values(URGENCY_LABELS)) expect(options, label).toContain(`- **${label.replace(/ \(.*$/, '')}**`);
    for (const choice of [TTL_CHOICES[0]!, TTL_CHOICES[1]!, TTL_CHOICES.at(-1)!]) expect(options, choice.label).toContain(`**${choice.label.replace(/ \(.*$/, '')}**`);
    for (const label of ['Replace the previous notification of this campaign', 'Campaign name', 'Require interaction', 'Delivery', 'Exempt from the frequency cap']) expect(options, label).toContain(label);
    const general = text('general-settings');
    for (const label of ['Cap pushes per subscriber', 'At most (pushes)', 'In any (hours)', 'Save frequency cap', 'Exempt from the frequency cap']) expect(general, label).toContain(`**${label}**`);
  });

  it('names "Spread the send" and its bounds as the notification form does (issue 14 §5)', () => {
    const options = text('delivery-options');
    for (const label of ['Spread the send', 'Messages per minute', 'expected to finish']) expect(options, label).toContain(`**${label}**`);
    expect(options).toContain(`from ${THROTTLE_PER_MINUTE_MIN} to ${THROTTLE_PER_MINUTE_MAX.toLocaleString('en-US')}`);
  });

  it('names the local-time and quiet-hours controls as the form and the settings do (issue 14 §1, §4)', () => {
    const scheduling = text('scheduling');
    for (const label of ["At the same local time in each subscriber's zone", 'Local time', 'Local time 09:00 — 7 of 24 zones sent', 'Cancel']) expect(scheduling, label).toContain(`**${label}**`);
    const general = text('general-settings');
    for (const label of ['Hold pushes during quiet hours', 'From', 'Until', 'Save quiet hours', 'Deferred', 'Send anyway during quiet hours']) expect(general, label).toContain(`**${label}**`);
    expect(text('delivery-options')).toContain('**Send anyway during quiet hours**');
  });

  it('names every import field, reject reason and the role, as the import does (issue 13)', () => {
    const importing = text('importing-subscribers');
    for (const field of SUBSCRIBER_IMPORT_FIELDS) expect(importing, field).toContain(`**${field}**`);
    for (const reason of SUBSCRIBER_IMPORT_REJECT_REASONS) expect(importing, reason).toContain(`- **${reason}**: `);
    expect(importing).toContain(`"${roleNeededMessage('admin')}"`);
    for (const label of ['Subscribed with', 'Send them the welcome campaign', 'Import subscribers', 'Download rejected rows (CSV)', 'Rows read', 'Imported', 'Updated', 'Rejected']) expect(importing, label).toContain(`**${label}**`);
  });

  it('describes A/B tests as the form and the report name them (issue 14 §2)', () => {
    const ab = text('ab-tests');
    for (const label of ['A/B test this notification', 'Test on a sample, then the winner', 'Every variant to everyone', 'Sample size (%)', 'Decide after (minutes)', 'Automatically', 'By hand', 'Send this variant to the rest', 'Reached', 'Delivered', 'Clicks', 'Click rate', 'Not significant yet']) {
      expect(ab, label).toContain(label);
    }
    expect(ab).toContain(`**${AB_VARIANTS_MIN} to ${AB_VARIANTS_MAX} variants**`);
    expect(ab).toContain(`${AB_SAMPLE_PERCENT_MIN} to ${AB_SAMPLE_PERCENT_MAX} %`);
  });

  it('has 43 articles, each with a title, a summary and text', () => {
    expect(HELP_ARTICLES).toHaveLength(43);
    for (const article of HELP_ARTICLES) expect(article.content.length, article.id).toBeGreaterThan(200);
  });

  it('names only herald.* methods and snippet attributes the SDK has', () => {
    const methods = new Set([...everything.matchAll(/herald\.([A-Za-z]+)\(/g)].map((m) => m[1]));
    expect([...methods].filter((m) => !SDK_METHODS.includes(m!))).toEqual([]);
    const attributes = new Set([...everything.matchAll(/\bdata-[a-z-]+(?==)/g)].map((m) => m[0]));
    expect([...attributes].filter((a) => !SNIPPET_ATTRIBUTES.includes(a))).toEqual([]);
    for (const attribute of SNIPPET_ATTRIBUTES) expect(text('installing-herald'), attribute).toContain(attribute);
  });

  it('names every webhook event and removal cause, the secret prefix, the limit and who may manage them', () => {
    const webhooks = text('webhooks');
    for (const type of WEBHOOK_EVENT_TYPES) expect(webhooks, type).toContain(`- **${type}**: `);
    for (const cause of SUBSCRIBER_REMOVED_CAUSES) expect(webhooks, cause).toContain(`**${cause}**`);
    expect(webhooks).toContain(`**${WEBHOOK_SECRET_PREFIX}**`);
    expect(webhooks).toContain(`at most **${WEBHOOKS_PER_SITE_MAX}** webhooks`);
    expect(webhooks).toContain(`"${roleNeededMessage('admin')}"`);
  });

  it('points only to Settings tabs that exist', () => {
    // "Windows Settings → Notifications" and "System Settings → …" are the operating system's.
    const tabs = [...everything.matchAll(/(?<!Windows |System )Settings → ([A-Z][A-Za-z]*(?: Keys| log)?)/g)].map((m) => m[1]);
    expect(tabs.length).toBeGreaterThan(10);
    expect(tabs.filter((tab) => !SETTINGS_TABS.includes(tab!))).toEqual([]);
  });

  it('states the notification, campaign and schedule limits', () => {
    expect(text('writing-notifications')).toContain(`at most **${NOTIFICATION_TITLE_MAX} characters**`);
    expect(text('writing-notifications')).toContain(`at most **${NOTIFICATION_MESSAGE_MAX} characters**`);
    expect(text('writing-notifications')).toContain(`Up to **${NOTIFICATION_ACTIONS_MAX}** buttons`);
    expect(text('scheduling')).toContain(`up to **${SCHEDULE_MAX_DAYS_AHEAD} days** ahead`);
    expect(text('welcome-campaigns')).toContain(`**title** (up to ${CAMPAIGN_STEP_TITLE_MAX} characters), **message** (up to ${CAMPAIGN_STEP_MESSAGE_MAX})`);
  });

  it('describes RSS checks, the daily maximum (skipped, not drafted) and the item id as the product does', () => {
    expect(text('rss-automation')).toContain(`every ${RSS_CHECK_INTERVAL_MINUTES} minutes`);
    expect(text('rss-automation')).toContain(`its first ${RSS_ITEM_ID_SHOWN_LENGTH} characters`);
    expect(text('rss-automation')).toContain('it is not sent later and not saved as a draft');
    expect(text('rss-troubleshooting')).toContain('is skipped: it is not sent the next day, nor saved as a draft');
  });

  it('documents the events API: key prefix, path, body fields and limits', () => {
    const triggered = text('triggered-notifications');
    expect(triggered).toContain(`starts with **${API_KEY_PREFIX}**`);
    expect(triggered).toContain('POST https://herald.example.com/api/v1/sites/YOUR_SITE_ID/events');
    for (const field of ['event', 'external_id', 'subscriber_id', 'data', 'idempotency_key']) expect(triggered).toContain(`**${field}**`);
    expect(triggered).toContain(`as the **${IDEMPOTENCY_KEY_HEADER}** header`);
    expect(triggered).toContain(`up to ${EVENT_NAME_MAX} characters`);
    expect(triggered).toContain(`at most ${EVENT_DATA_MAX_CHARS} characters as JSON`);
    expect(triggered).toContain(`(${TRIGGER_DELAY_MAX_MINUTES} minutes)`);
    expect(text('api-keys-and-automation')).toContain('POST /api/v1/sites/{siteId}/events');
  });

  it('describes the subscriber export and erasure with the file’s columns, the page’s labels and the v1 route', () => {
    const article = text('export-and-erase');
    for (const column of subscriberExportColumns(true)) expect(article, column).toContain(`\`${column}\``);
    expect(article).toContain(`joined with \`${SUBSCRIBER_EXPORT_TAG_SEPARATOR}\``);
    for (const label of [SUBSCRIBER_PRIVACY_TEXTS.exportButton, SUBSCRIBER_PRIVACY_TEXTS.includeKeys, SUBSCRIBER_PRIVACY_TEXTS.downloadData, SUBSCRIBER_PRIVACY_TEXTS.erase]) {
      expect(article, label).toContain(`**${label}**`);
    }
    expect(article).toContain('curl -X DELETE "https://herald.example.com/api/v1/sites/YOUR_SITE_ID/subscribers?external_id=');
    expect(text('team-members-and-roles')).toContain('removing, exporting and erasing subscribers');
  });

  it('says from how many subscribers segment counts are estimated, in the words the Segments page shows', () => {
    const article = text('creating-segments');
    expect(article).toContain(`${SEGMENT_ESTIMATE_FROM_ACTIVE.toLocaleString('en-US')} or more active subscribers`);
    expect(article).toContain(`"${subscriberCountText(512000, 11702)}"`);
  });

  it('lists every segment browser and operating system', () => {
    for (const value of [...SEGMENT_BROWSERS, ...SEGMENT_OPERATING_SYSTEMS]) expect(text('creating-segments'), value).toContain(value);
  });

  it('keeps the spec §9 benchmarks and supported browsers', () => {
    const practices = text('push-best-practices');
    for (const benchmark of ['Excellent: 15% or more', 'Good: 10–15%', 'Average: 5–10%', 'Poor: under 5%', 'Excellent: 95% or more', 'Excellent: under 0.5%']) {
      expect(practices).toContain(benchmark);
    }
    expect(practices).toContain('**1–2 pushes per day at most**');
    expect(practices).toContain('**Clean inactive subscribers at 90+ days**');
    expect(practices).toContain('Chrome 42+, Firefox 44+, Safari 16+');
    expect(practices).toContain('Edge 17+ and Opera 29+');
  });

  it('sends owners to test devices for a test, never to a send to everyone', () => {
    expect(everything).not.toMatch(/test from Notifications → New Notification/i);
    expect(text('installing-herald')).toContain('Send test');
    expect(text('installing-herald')).toContain('test device');
    expect(text('first-notification')).toContain('counts nowhere');
  });

  it('explains iPhone and iPad: the Home Screen, the manifest, what owners must do', () => {
    const ios = text('iphone-and-ipad');
    expect(ios).toContain('Add to Home Screen');
    expect(ios).toContain('"display": "standalone"');
    expect(ios).toContain('16.4');
    expect(ios).toContain(INSTALL_CHECK_LABELS.manifest);
  });
});
