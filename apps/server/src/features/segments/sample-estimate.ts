// A segment's count on a large site, estimated from a stable sample and
// labelled so (docs/product.md, "Segments": "every figure on screen is true;
// an estimate says so"; issue 15 part 5, measured by `npm run bench:lists`).
//
// Counting exactly which of a million subscribers match a browser, a country
// list, a subscription age and tags reads every one of them (hundreds of
// milliseconds per segment, and the segments list shows a count per
// segment). A site with at least ESTIMATE_FROM_ACTIVE active subscribers has
// its segment counts estimated instead: the share of matching subscribers in
// a fixed sample of about 1 in 85 (index subscribers_site_sample, migration
// 0030), times the site's exact active counter, rounded to three significant
// figures, with the sample's size in the answer. The sample is the same
// subscribers every time (chosen by their random id), so a count does not
// jump between refreshes. A segment matching fewer than MIN_SAMPLE_MATCHES
// sampled subscribers is counted exactly: a rare segment's estimate would be
// mostly noise (and "≈ 0" would hide the few it has). A send never uses the
// estimate: its audience is applySegmentRules over every subscriber. The
// rules are here; the counts they read are in repository.ts.
import { SEGMENT_ESTIMATE_FROM_ACTIVE, type SegmentRules } from '@herald/contracts';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema';
import { readActiveSubscriberCount } from '../analytics/site-counters';
import { countSampledActive, countSampledMatching, countSampledMatchingEach } from './repository';
import { hasRules } from './segment-rules';

type Db = Kysely<Database> | Transaction<Database>;

/** Active subscribers from which a site's segment counts are estimated. */
export const ESTIMATE_FROM_ACTIVE = SEGMENT_ESTIMATE_FROM_ACTIVE;
/** Fewer sampled subscribers than this (an unlucky id spread): counted exactly. */
const MIN_SAMPLE = 1_000;
const MIN_SAMPLE_MATCHES = 50;
/**
 * Up to this many segments, each is counted in the sample on its own: an
 * index range of it where the rules allow, a few milliseconds. More are
 * counted in one read of the whole sample, grouped (repository.ts,
 * countSampledMatchingEach), which costs about what four (PostgreSQL) to
 * eight (SQLite) single counts do: 15 and 22 ms on the million-subscriber
 * site of bench:lists, where 40 single counts took 151 and 210 ms.
 */
const READ_ALONE_UP_TO = 8;

/** A segment's count: exact (sample_size null) or estimated from `sample_size` sampled active subscribers. */
export interface SegmentCount {
  count: number;
  sample_size: number | null;
}

/**
 * What a site's counts are scaled from: its exact active counter and, on a
 * site large enough to estimate, how many active subscribers the sample
 * holds. Read once per answer: the segments list counts every segment
 * against the same two figures.
 */
export interface EstimateBasis {
  active: number;
  /** Active subscribers in the sample; 0 on a site below ESTIMATE_FROM_ACTIVE (not read). */
  sampled: number;
}

export async function estimateBasis(db: Db, siteId: string): Promise<EstimateBasis> {
  const active = await readActiveSubscriberCount(db, siteId);
  if (active < ESTIMATE_FROM_ACTIVE) return { active, sampled: 0 };
  return { active, sampled: await countSampledActive(db, siteId) };
}

/** Three significant figures: an estimate does not pretend to more. */
export function roundEstimate(value: number): number {
  return value < 1 ? 0 : Number(value.toPrecision(3));
}

/**
 * Active subscribers of the site matching each of several segments' rules at
 * `now`, in the rules' order: exact on a site below ESTIMATE_FROM_ACTIVE
 * (and for rules that match everyone, from the exact counter), else
 * estimated from the sample (see above): each segment on its own, or, for
 * more than READ_ALONE_UP_TO (a long segments list), all of them in one read
 * of the sample. A segment too rare in the sample is then counted exactly on
 * its own.
 */
export async function countSegments(
  db: Db,
  siteId: string,
  rulesList: readonly SegmentRules[],
  now: number,
  basis: EstimateBasis,
  countExactly: (rules: SegmentRules) => Promise<number>,
): Promise<SegmentCount[]> {
  const estimating = basis.active >= ESTIMATE_FROM_ACTIVE && basis.sampled >= MIN_SAMPLE;
  const withRules = estimating ? rulesList.filter(hasRules) : [];
  let sampled: number[] = [];
  if (withRules.length > READ_ALONE_UP_TO) sampled = await countSampledMatchingEach(db, siteId, withRules, now);
  // One at a time: a pool has few connections and other requests need them.
  else for (const rules of withRules) sampled.push(await countSampledMatching(db, siteId, rules, now));
  const matchingOf = new Map(withRules.map((rules, i) => [rules, sampled[i]]));
  const counts: SegmentCount[] = [];
  for (const rules of rulesList) {
    if (!hasRules(rules)) {
      counts.push({ count: basis.active, sample_size: null });
      continue;
    }
    const matching = matchingOf.get(rules);
    if (matching !== undefined && matching >= MIN_SAMPLE_MATCHES) counts.push({ count: roundEstimate((matching * basis.active) / basis.sampled), sample_size: basis.sampled });
    else counts.push({ count: await countExactly(rules), sample_size: null });
  }
  return counts;
}
