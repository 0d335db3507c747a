// Which variant of an A/B test is ahead, and whether that is more than chance
// (docs/product.md, "A/B tests"): click rate = clicked ÷ delivered; a
// two-proportion z-test at 95 % between the best and the runner-up.

export interface VariantCounts {
  index: number;
  delivered: number;
  clicked: number;
}

/** The two-sided 95 % critical value of the standard normal distribution. */
export const Z_95 = 1.959963984540054;

/**
 * The pooled two-proportion z statistic of clicks1/delivered1 against
 * clicks2/delivered2, or null when it cannot be computed (a variant delivered
 * to nobody, or every rate 0 or every rate 100 %: no spread to test).
 */
export function twoProportionZ(a: Pick<VariantCounts, 'delivered' | 'clicked'>, b: Pick<VariantCounts, 'delivered' | 'clicked'>): number | null {
  if (a.delivered === 0 || b.delivered === 0) return null;
  const pooled = (a.clicked + b.clicked) / (a.delivered + b.delivered);
  if (pooled === 0 || pooled === 1) return null;
  const standardError = Math.sqrt(pooled * (1 - pooled) * (1 / a.delivered + 1 / b.delivered));
  return (a.clicked / a.delivered - b.clicked / b.delivered) / standardError;
}

export interface AbVerdict {
  /** The best click rate; ties go to the lower index; variants delivered to nobody come last. Nobody delivered: variant A (0). */
  leader: number;
  /** The runner-up, if there are two variants with deliveries. */
  runnerUp: number | null;
  /** The leader's rate is above the runner-up's with |z| ≥ 1.96. */
  significant: boolean;
}

export function abVerdict(counts: readonly VariantCounts[]): AbVerdict {
  const rateOf = (c: VariantCounts) => (c.delivered > 0 ? c.clicked / c.delivered : -1);
  const ranked = [...counts].sort((a, b) => rateOf(b) - rateOf(a) || a.index - b.index);
  const best = ranked[0];
  if (!best || best.delivered === 0) return { leader: 0, runnerUp: null, significant: false };
  const second = ranked[1];
  if (!second || second.delivered === 0) return { leader: best.index, runnerUp: null, significant: false };
  const z = twoProportionZ(best, second);
  return { leader: best.index, runnerUp: second.index, significant: z !== null && z >= Z_95 };
}
