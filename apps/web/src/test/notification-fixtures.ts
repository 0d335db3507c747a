import { pendingOf, type Notification, type NotificationPerformance, type OutcomeCounts, type RecentNotification } from '@herald/contracts';

// Test data shaped exactly like the server's responses (contracts' Notification).

/** Outcome counts; `pending` follows from the others unless given. */
export function makeCounts(overrides: Partial<OutcomeCounts> = {}): OutcomeCounts {
  const base = { targeted: 0, sent: 0, failed: 0, expired: 0, skipped: 0, delivered: 0, clicked: 0, ...overrides };
  return { ...base, pending: overrides.pending ?? pendingOf(base) };
}

/** A dashboard Recent Notifications entry, completed unless told otherwise. */
export function makeRecent(overrides: Partial<RecentNotification> & Pick<RecentNotification, 'id' | 'title'>): RecentNotification {
  const counts = overrides.counts ?? makeCounts({ targeted: overrides.sent_count ?? 0, sent: overrides.sent_count ?? 0 });
  return {
    message: 'A message',
    sent_at: '2026-05-01T12:00:00.000Z',
    finished_at: '2026-05-01T12:01:00.000Z',
    click_rate: 0,
    sent_count: counts.sent,
    status: 'completed',
    failed_count: counts.failed,
    counts,
    ...overrides,
  };
}

export function makeNotification(overrides: Partial<Notification> = {}): Notification {
  return {
    id: 'n-1',
    site_id: 'site-1',
    type: 'ONE_TIME',
    source: 'dashboard',
    title: 'Flash sale',
    message: 'Everything is half price until midnight.',
    destination_url: 'https://shop.acme.example/sale',
    icon_url: null,
    image_url: null,
    segment_id: null,
    actions: [],
    ttl_seconds: 86_400,
    urgency: 'normal',
    topic: null,
    require_interaction: false,
    frequency_cap_exempt: false,
    throttle_per_minute: null,
    delivery: { mode: 'at_once', local_time: null },
    quiet_hours_exempt: false,
    local_time_progress: null,
    quiet_hours_deferred: 0,
    deliveries_compacted: false,
    variants: null,
    ab_test: null,
    status: 'draft',
    scheduled_at: null,
    sent_at: null,
    completed_at: null,
    created_at: '2026-03-01T10:00:00.000Z',
    updated_at: '2026-03-01T10:00:00.000Z',
    last_error: null,
    recurringSchedule: null,
    trigger: null,
    stats: { total: 0, sent: 0, delivered: 0, clicked: 0, failed: 0 },
    counts: makeCounts(),
    fire_count: overrides.type === 'TRIGGERED' ? 0 : null,
    ...overrides,
  };
}

export function makePerformance(overrides: Partial<NotificationPerformance> = {}): NotificationPerformance {
  return {
    notification_id: 'n-1',
    total: 0,
    sent: 0,
    delivered: 0,
    clicked: 0,
    failed: 0,
    click_rate: 0,
    delivery_rate: 0,
    reach_rate: 0,
    failure_rate: 0,
    status: 'completed',
    last_error: null,
    counts: makeCounts(),
    failures: [],
    retrying: [],
    skipped: { inactive: 0, frequency_cap: 0, quiet_hours_deferred: 0 },
    runs: [],
    variants: [],
    ab_test: null,
    ...overrides,
  };
}
