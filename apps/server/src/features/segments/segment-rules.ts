// The one definition of "a subscriber matches a segment" (spec §2 Segments:
// rules combine with AND; only non-empty rules count). Counting a segment,
// estimating it from the sample and sending to it all take their condition
// from segmentRulesMatch, so an estimate and a send can never disagree about
// who is in.
import { countryCodesOf, segmentRules, type SegmentRules } from '@herald/contracts';
import { type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
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
 * `hasTag`: how the query tells that the subscriber has a tag, when not by
 * looking the subscriber's tag row up (the estimate reads the tag's sampled
 * holders: repository.ts).
 */
function segmentRuleConditions(eb: ExpressionBuilder<Database, 'subscribers'>, rules: SegmentRules, now: number, hasTag?: HasTag): Array<Expression<SqlBool>> {
  const conditions: Array<Expression<SqlBool>> = [];
  if (rules.browser) conditions.push(eb('subscribers.browser', '=', rules.browser));
  if (rules.os) conditions.push(eb('subscribers.os', '=', rules.os));
  if (rules.country) {
    const codes = countryCodesOf(rules.country);
    // A stored rule always has a code; an empty list would be `IN ()`, invalid SQL.
    if (codes.length) conditions.push(eb('subscribers.country', 'in', codes));
  }
  const subscribedBy = subscribedByOf(rules, now);
  if (subscribedBy !== undefined) conditions.push(eb('subscribers.subscribed_at', '<=', subscribedBy));
  for (const tag of rules.tags ?? []) {
    conditions.push(
      hasTag
        ? hasTag(tag, eb)
        : eb.exists(
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

/** The latest `subscribed_at` the rules accept at `now` (subscribed_days_ago), if they have that rule. */
export function subscribedByOf(rules: SegmentRules, now: number): number | undefined {
  return rules.subscribed_days_ago === undefined ? undefined : now - rules.subscribed_days_ago * DAY_MS;
}

/** True when segmentRuleConditions adds any condition: rules that add none match every active subscriber. */
export function hasRules(rules: SegmentRules): boolean {
  const countries = rules.country ? countryCodesOf(rules.country) : [];
  return Boolean(rules.browser || rules.os || countries.length || rules.subscribed_days_ago !== undefined || rules.tags?.length);
}

/** How a query tells that the subscriber has a tag (segmentRuleConditions). */
export type HasTag = (tag: string, eb: ExpressionBuilder<Database, 'subscribers'>) => Expression<SqlBool>;

/**
 * The condition "matches the segment's rules at `now`" (epoch ms, from the
 * clock — or the run's start when sending) on a query over `subscribers`:
 * every rule's condition, or true for rules that set none.
 */
export function segmentRulesMatch(eb: ExpressionBuilder<Database, 'subscribers'>, rules: SegmentRules, now: number, hasTag?: HasTag): Expression<SqlBool> {
  const conditions = segmentRuleConditions(eb, rules, now, hasTag);
  return conditions.length ? eb.and(conditions) : eb.lit(true);
}

/**
 * Narrows a query over `subscribers` to those matching the segment's rules
 * at `now`. Site and active state are the caller's: this adds the rules only.
 */
export function applySegmentRules<O>(query: SelectQueryBuilder<Database, 'subscribers', O>, rules: SegmentRules, now: number, hasTag?: HasTag): SelectQueryBuilder<Database, 'subscribers', O> {
  return query.where((eb) => segmentRulesMatch(eb, rules, now, hasTag));
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
