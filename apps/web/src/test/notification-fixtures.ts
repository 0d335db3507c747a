import type { Notification, NotificationPerformance } from '@herald/contracts';

// Test data shaped exactly like the server's responses (contracts' Notification).

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
    last_error: null,
    runs: [],
    ...overrides,
  };
}
