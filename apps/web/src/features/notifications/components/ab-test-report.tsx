import { AB_VARIANT_LETTERS, type AbTestPerformance, type AbVariantPerformance, type NotificationPerformance } from '@herald/contracts';
import { Trophy } from 'lucide-react';
import { Alert, Badge, Button, Card, CardContent, CardDescription, CardHeader, CardTitle, DateTime } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { confirmAction, notify } from '../../../lib/dialogs';
import { usePickAbWinnerMutation } from '../ab-test-api';
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
export function AbTestReport({ notificationId, performance, timeZone, canPick }: { notificationId: string; performance: NotificationPerformance; timeZone: string; canPick: boolean }) {
  const test = performance.ab_test;
  const pick = usePickAbWinnerMutation();
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
      <CardContent className="flex flex-col gap-4">
        <div className="overflow-x-auto rounded-lg border border-slate-200" tabIndex={0} role="region" aria-label="Variants">
          <table className="min-w-full text-left text-sm">
            <caption className="sr-only">Each variant’s figures</caption>
            <thead className="bg-slate-50 text-xs text-slate-600 uppercase">
              <tr>
                <th scope="col" className="px-3 py-2 font-semibold">Variant</th>
                <th scope="col" className="px-3 py-2 text-right font-semibold" title="Accepted by the push service">Reached</th>
                <th scope="col" className="px-3 py-2 text-right font-semibold">Delivered</th>
                <th scope="col" className="px-3 py-2 text-right font-semibold">Clicks</th>
                <th scope="col" className="px-3 py-2 text-right font-semibold">Click rate</th>
                {pickable ? <th scope="col" className="px-3 py-2 font-semibold"><span className="sr-only">Pick</span></th> : null}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-200">
              {performance.variants.map((variant) => (
                <tr key={variant.index} data-testid={`ab-variant-row-${letter(variant.index)}`}>
                  <th scope="row" className="px-3 py-2 font-normal">
                    <span className="flex flex-wrap items-center gap-2">
                      <span className="font-semibold">{letter(variant.index)}</span>
                      <span className="min-w-0 break-words">{variant.title}</span>
                      {test.status === 'decided' && test.winner_index === variant.index ? (
                        <Badge tone="success">
                          <Trophy className="size-3" aria-hidden="true" /> Winner
                        </Badge>
                      ) : test.status !== 'decided' && anyDelivered && leader === variant.index ? (
                        <Badge tone="accent">Leading</Badge>
                      ) : null}
                    </span>
                  </th>
                  <td className="px-3 py-2 text-right tabular-nums">{formatCount(variant.reach)}</td>
                  <td className="px-3 py-2 text-right tabular-nums">{formatCount(variant.delivered)}</td>
                  <td className="px-3 py-2 text-right tabular-nums">{formatCount(variant.clicked)}</td>
                  <td className="px-3 py-2 text-right tabular-nums" data-testid={`ab-click-rate-${letter(variant.index)}`}>
                    {variant.delivered > 0 ? formatPercent(variant.click_rate) : '—'}
                  </td>
                  {pickable ? (
                    <td className="px-3 py-2 text-right">
                      <Button size="sm" variant="secondary" loading={pick.isPending && pick.variables?.variantIndex === variant.index} disabled={pick.isPending} onClick={() => void sendToRest(variant)}>
                        Send this variant to the rest
                      </Button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p className="text-xs text-slate-600">
          Reached: accepted by the push service. Click rate: clicks ÷ delivered (browsers that reported showing it).
          {test.status === 'decided' ? ' The winner’s figures include the rest of the audience; the decision used the sample’s.' : ''}
        </p>
        <SignificanceNote test={test} anyDelivered={anyDelivered} />
      </CardContent>
    </Card>
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
      Not significant yet: the difference between the best click rate and the runner-up’s could still be chance (two-proportion z-test, 95 % confidence)
      {test.status === 'decided' ? ' when the winner was decided.' : '.'}
    </p>
  );
}
