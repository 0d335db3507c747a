import type { ChartDay, EngagementDay } from '@herald/contracts';

// Spec §2 Dashboard: "placeholder sample data when the server gives none".
// Shown only while the site has sent nothing (hasData false), always under a
// "Sample data" label, on the real dates so the axes read right.

const SAMPLE_SENT = [1200, 1350, 980, 1500, 1420, 1100, 1650];
const SAMPLE_DELIVERY_RATE = [0.94, 0.95, 0.93, 0.96, 0.95, 0.94, 0.96];
const SAMPLE_CLICK_RATE = [0.11, 0.12, 0.09, 0.13, 0.12, 0.1, 0.14];
const SAMPLE_WEEKDAY_CLICKS = [145, 162, 171, 158, 139, 96, 88];

export function sampleChart(days: ChartDay[]): ChartDay[] {
  return days.map((day, i) => {
    const sent = SAMPLE_SENT[i % SAMPLE_SENT.length]!;
    const delivered = Math.round(sent * SAMPLE_DELIVERY_RATE[i % SAMPLE_DELIVERY_RATE.length]!);
    return { date: day.date, sent, delivered, clicked: Math.round(delivered * SAMPLE_CLICK_RATE[i % SAMPLE_CLICK_RATE.length]!) };
  });
}

export function sampleEngagement(days: EngagementDay[]): EngagementDay[] {
  return days.map((day, i) => ({ name: day.name, clicks: SAMPLE_WEEKDAY_CLICKS[i % SAMPLE_WEEKDAY_CLICKS.length]! }));
}
