import { AB_VARIANT_LETTERS, type AbTestPerformance, type AbVariantPerformance, type NotificationPerformance } from '@herald/contracts';
import { Trophy } from 'lucide-react';
import { Alert, Badge, Button, Card, CardContent, CardDescription, CardHeader, CardTitle, DateTime } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { confirmAction, notify } from '../../../lib/dialogs';
import { usePickAbWinnerMutation, useRefreshWhileTesting } from '../ab-test-api';
import { formatCount, formatPercent } from '../notification-labels';

const letter = (index: number) => AB_VARIANT_LETTERS[index] ?? String(index + 1);

/** One sentence on where the test stands. */
function statusLine(test: AbTestPerformance, timeZone: string) {
  switch (test.status) {
    case 'waiting':
      return <>Not sent yet: {test.sample_percent}% of the audience will get the variants first.</>;
    case 'testing':
      return test.decide === 'auto' && test.decides_at ? (
        <>
          Testing on a {test.sample_percent}% sample. The variant with the best click rate goes to the rest at <DateTime value={test.decides_at} timeZone={timeZone} />.
        </>
      ) : test.decide === 'auto' ? (
        <>Testing on a {test.sample_percent}% sample. The winner goes to the rest once the sample has been sent and the wait is over.</>
      ) : (
        <>Testing on a {test.sample_percent}% sample. Pick the variant the rest of the audience gets.</>
      );
    case 'decided':
      return (
        <>
          Variant {letter(test.winner_index ?? 0)} won ({test.decided_by === 'manual' ? 'picked by hand' : 'best click rate'}
          {test.decided_at ? (
            <>
              , <DateTime value={test.decided_at} timeZone={timeZone} />
            </>
          ) : null}
          ) and went to the rest of the audience.
        </>
      );
    case 'all_variants':
      return <>Every variant went to an even share of the whole audience.</>;
  }
}

/**
 * The A/B test's report (issue 14 §2): per variant reach, delivered, clicks
 * and click rate (clicks ÷ delivered), where the test stands, whether the
 * lead is significant (two-proportion z-test at 95 %), and the manual pick.
 */
export function AbTestReport({
  notificationId,
  siteId,
  performance,
  timeZone,
  canPick,
}: {
  notificationId: string;
  siteId: string;
  performance: NotificationPerformance;
  timeZone: string;
  canPick: boolean;
}) {
  const test = performance.ab_test;
  const pick = usePickAbWinnerMutation(siteId);
  useRefreshWhileTesting(notificationId, test?.status === 'testing' && test.decide === 'auto');
  if (!test) return null;
  const pickable = canPick && test.status === 'testing' && performance.status !== 'sending';
  const leader = test.status === 'decided' ? test.winner_index : test.leader_index;
  const anyDelivered = performance.variants.some((v) => v.delivered > 0);

  async function sendToRest(variant: AbVariantPerformance) {
    if (!confirmAction(`Send variant ${letter(variant.index)} ("${variant.title}") to the rest of the audience? This cannot be undone.`)) return;
    try {
      await pick.mutateAsync({ id: notificationId, variantIndex: variant.index });
    } catch (error) {
      notify(errorMessage(error, 'Could not send this variant to the rest. Try again.'));
    }
  }

  return (
    <Card data-testid="ab-test-report">
      <CardHeader>
        <CardTitle>A/B test</CardTitle>
        <CardDescription data-testid="ab-test-status">{statusLine(test, timeZone)}</CardDescription>
      </CardHeader>
      <CardContent className="min-w-0 space-y-4">
        <ul className="grid gap-3" aria-label="Variants">
          {performance.variants.map((variant) => {
            const id = letter(variant.index);
            return (
              <li key={variant.index} className="relative flex min-w-0 flex-col gap-3 rounded-lg border border-slate-200 p-3" data-testid={`ab-variant-row-${id}`}>
                <div className="flex flex-wrap items-center gap-2">
                  <span className="inline-flex size-6 shrink-0 items-center justify-center rounded-full bg-slate-100 text-xs font-semibold text-slate-700" aria-label={`Variant ${id}`}>
                    {id}
                  </span>
                  <span className="min-w-0 font-medium break-words text-slate-900">{variant.title}</span>
                  {test.status === 'decided' && test.winner_index === variant.index ? (
                    <Badge tone="success">
                      <Trophy className="size-3" aria-hidden="true" /> Winner
                    </Badge>
                  ) : test.status !== 'decided' && anyDelivered && leader === variant.index ? (
                    <Badge tone="accent">Leading</Badge>
                  ) : null}
                </div>
                <dl className="grid grid-cols-2 gap-x-4 gap-y-2 text-sm sm:grid-cols-4">
                  <VariantFigure label="Reached" value={formatCount(variant.reach)} testId={`ab-reach-${id}`} />
                  <VariantFigure label="Delivered" value={formatCount(variant.delivered)} testId={`ab-delivered-${id}`} />
                  <VariantFigure label="Clicks" value={formatCount(variant.clicked)} testId={`ab-clicks-${id}`} />
                  <VariantFigure label="Click rate" value={variant.delivered > 0 ? formatPercent(variant.click_rate) : '—'} testId={`ab-click-rate-${id}`} />
                </dl>
                {pickable ? (
                  <Button
                    size="sm"
                    variant="secondary"
                    className="self-start"
                    loading={pick.isPending && pick.variables?.variantIndex === variant.index}
                    disabled={pick.isPending}
                    onClick={() => void sendToRest(variant)}
                  >
                    Send this variant to the rest<span className="sr-only"> (variant {id})</span>
                  </Button>
                ) : null}
              </li>
            );
          })}
        </ul>
        <p className="text-xs text-slate-600">
          Reached: accepted by the push service. Click rate: clicks ÷ delivered (browsers that reported showing it).
          {test.status === 'decided' ? ' The winner’s figures include the rest of the audience; the decision used the sample’s.' : ''}
        </p>
        <SignificanceNote test={test} anyDelivered={anyDelivered} />
      </CardContent>
    </Card>
  );
}

function VariantFigure({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs text-slate-600">{label}</dt>
      <dd className="font-semibold text-slate-900 tabular-nums" data-testid={testId}>
        {value}
      </dd>
    </div>
  );
}

function SignificanceNote({ test, anyDelivered }: { test: AbTestPerformance; anyDelivered: boolean }) {
  const best = test.status === 'decided' ? test.winner_index : test.leader_index;
  if (!anyDelivered) {
    return <p className="text-sm text-slate-700" data-testid="ab-significance">Not significant yet: no variant has been delivered.</p>;
  }
  return test.significant ? (
    <Alert tone="success" title="Significant">
      <p data-testid="ab-significance">
        Variant {letter(best ?? 0)}’s click rate is ahead of the runner-up’s by more than chance would explain (two-proportion z-test, 95 % confidence)
        {test.status === 'decided' ? ', as measured when the winner was decided.' : '.'}
      </p>
    </Alert>
  ) : (
    <p className="text-sm text-slate-700" data-testid="ab-significance">
      {test.status === 'decided'
        ? 'Not significant: when the winner was decided, its lead over the runner-up could have been chance (two-proportion z-test, 95 % confidence).'
        : 'Not significant yet: the difference between the best click rate and the runner-up’s could still be chance (two-proportion z-test, 95 % confidence).'}
    </p>
  );
}
