// The one definition of "a subscriber matches a segment" (spec §2 Segments:
// rules combine with AND; only non-empty rules count). Counting a segment and
// sending to it both go through applySegmentRules, so an estimate and a send
// can never disagree about who is in.
import { countryCodesOf, segmentRules, type SegmentRules } from '@herald/contracts';
import { sql, type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { TAG_SAMPLE_PREDICATE } from '../../db/migrations/0032_subscriber_tags_sample';
import type { Database } from '../../db/schema';

const DAY_MS = 86_400_000;

/**
 * The conditions of the rules that are set, on `subscribers` columns:
 * - browser / os: the family names subscribers are filed under (user-agent.ts);
 * - country: any of the listed ISO codes (the rule is stored normalised, upper case);
 * - subscribed_days_ago N: subscribed at least N whole days (N × 24 h) before `now`
 *   (spec hint: "7 for users subscribed 7+ days ago");
 * - tags: the subscriber has every listed tag (subscriber_tags, exact match).
 *
 * `sampleOfSite`: the query counts only the estimate sample of that site
 * (sample-estimate.ts). A sampled subscriber's tag rows are in the tags'
 * sample too (both are chosen by the subscriber's id), so saying so changes
 * no answer; it lets the small partial index subscriber_tags_sample
 * (migration 0032) serve the tag conditions.
 */
export function segmentRuleConditions(
  eb: ExpressionBuilder<Database, 'subscribers'>,
  rules: SegmentRules,
  now: number,
  sampleOfSite?: string,
): Array<Expression<SqlBool>> {
  const conditions: Array<Expression<SqlBool>> = [];
  if (rules.browser) conditions.push(eb('subscribers.browser', '=', rules.browser));
  if (rules.os) conditions.push(eb('subscribers.os', '=', rules.os));
  if (rules.country) {
    const codes = countryCodesOf(rules.country);
    // A stored rule always has a code; an empty list would be `IN ()`, invalid SQL.
    if (codes.length) conditions.push(eb('subscribers.country', 'in', codes));
  }
  if (rules.subscribed_days_ago !== undefined) conditions.push(eb('subscribers.subscribed_at', '<=', now - rules.subscribed_days_ago * DAY_MS));
  for (const tag of rules.tags ?? []) {
    if (sampleOfSite !== undefined) {
      // As a list (the tag's sampled holders, a few thousand at most), which SQLite reads once
      // and looks up by id, where a correlated EXISTS would probe subscriber_tags per sampled row.
      conditions.push(
        eb(
          'subscribers.id',
          'in',
          eb
            .selectFrom('subscriber_tags')
            .select('subscriber_tags.subscriber_id')
            .where('subscriber_tags.site_id', '=', sampleOfSite)
            .where('subscriber_tags.tag', '=', tag)
            .where(sql.raw<SqlBool>(TAG_SAMPLE_PREDICATE)),
        ),
      );
      continue;
    }
    conditions.push(
      eb.exists(
        eb
          .selectFrom('subscriber_tags')
          .select('subscriber_tags.tag')
          .whereRef('subscriber_tags.subscriber_id', '=', 'subscribers.id')
          .where('subscriber_tags.tag', '=', tag),
      ),
    );
  }
  return conditions;
}

/** True when segmentRuleConditions adds any condition: rules that add none match every active subscriber. */
export function hasRules(rules: SegmentRules): boolean {
  const countries = rules.country ? countryCodesOf(rules.country) : [];
  return Boolean(rules.browser || rules.os || countries.length || rules.subscribed_days_ago !== undefined || rules.tags?.length);
}

/**
 * Narrows a query over `subscribers` to those matching the segment's rules
 * at `now` (epoch ms, from the clock — or the run's start when sending).
 * Site and active state are the caller's: this adds the rules only
 * (`sampleOfSite`: see segmentRuleConditions).
 */
export function applySegmentRules<O>(
  query: SelectQueryBuilder<Database, 'subscribers', O>,
  rules: SegmentRules,
  now: number,
  sampleOfSite?: string,
): SelectQueryBuilder<Database, 'subscribers', O> {
  return query.where((eb) => {
    const conditions = segmentRuleConditions(eb, rules, now, sampleOfSite);
    return conditions.length ? eb.and(conditions) : eb.lit(true);
  });
}

/** The rules stored in segments.rules, or undefined when the document is unreadable. */
export function parseStoredRules(json: string): SegmentRules | undefined {
  try {
    const parsed = segmentRules.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
