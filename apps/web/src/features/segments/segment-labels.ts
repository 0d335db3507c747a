import type { SegmentRules } from '@herald/contracts';

/**
 * Spec §2 Segments list: "{estimated_count} subscribers"; on a large site,
 * where the count is estimated from a sample, "≈ 12,300 subscribers (estimated
 * from a sample of 11,702)" (docs/product.md, "Segments").
 */
export function subscriberCountText(count: number, sampleSize: number | null = null): string {
  const text = `${count.toLocaleString('en-US')} ${count === 1 ? 'subscriber' : 'subscribers'}`;
  return sampleSize === null ? text : `≈ ${text} ${sampleText(sampleSize)}`;
}

/** The second half of an estimated count, shown smaller under it on a narrow screen. */
export function sampleText(sampleSize: number): string {
  return `(estimated from a sample of ${sampleSize.toLocaleString('en-US')})`;
}

/** One chip per rule that is set, in the form's order; a segment without rules is everyone. */
export function ruleChips(rules: SegmentRules): string[] {
  const chips: string[] = [];
  if (rules.browser) chips.push(`Browser: ${rules.browser}`);
  if (rules.os) chips.push(`OS: ${rules.os}`);
  if (rules.country) chips.push(`Country: ${rules.country}`);
  if (rules.subscribed_days_ago !== undefined) chips.push(`Subscribed ${rules.subscribed_days_ago}+ ${rules.subscribed_days_ago === 1 ? 'day' : 'days'} ago`);
  if (rules.tags?.length) chips.push(`${rules.tags.length === 1 ? 'Tag' : 'Tags'}: ${rules.tags.join(', ')}`);
  return chips.length ? chips : ['All subscribers'];
}

/** "Nov 22, 2026" in the site's timezone. */
export function formatDate(iso: string, timeZone: string): string {
  const date = new Date(iso);
  try {
    return new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone }).format(date);
  } catch {
    return new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' }).format(date);
  }
}
