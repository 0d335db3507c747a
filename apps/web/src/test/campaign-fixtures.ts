import type { CampaignStep, WelcomeCampaign } from '@herald/contracts';

// Test data for the welcome campaign screens, in the API's shape (spec §3 Welcome campaign).

export function makeStep(sequence_order: number, delay_minutes: number, overrides: Partial<CampaignStep['notification']> = {}): CampaignStep {
  return {
    id: `step-${sequence_order}`,
    sequence_order,
    delay_minutes,
    notification: {
      title: `Step ${sequence_order} title`,
      message: `Step ${sequence_order} message`,
      destination_url: `https://shop.acme.example/${sequence_order}`,
      icon_url: null,
      image_url: null,
      actions: [],
      ...overrides,
    },
    stats: { targeted: 0, sent: 0, failed: 0, expired: 0, skipped: 0, pending: 0, delivered: 0, clicked: 0 },
  };
}

export function makeCampaign(overrides: Partial<WelcomeCampaign> = {}): WelcomeCampaign {
  const steps = overrides.steps ?? [makeStep(1, 0), makeStep(2, 60), makeStep(3, 1440)];
  return {
    id: 'campaign-1',
    site_id: 'site-1',
    name: 'Welcome series',
    is_active: true,
    icon_url: null,
    utm_params: null,
    segment_id: null,
    created_at: '2026-03-01T09:00:00.000Z',
    updated_at: '2026-03-01T09:00:00.000Z',
    steps_count: steps.length,
    steps,
    stats: { enrolled: 12, targeted: 32, sent: 30, failed: 2, expired: 0, skipped: 0, pending: 0, delivered: 28, clicked: 7, click_rate: 25 },
    ...overrides,
  };
}
