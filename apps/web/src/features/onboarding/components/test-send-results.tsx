import type { TestSendResult } from '@herald/contracts';
import { Alert } from '../../../components/ui';

const OUTCOME_WORDS = { sent: 'sent', failed: 'failed', expired: 'subscription expired' } as const;

/** What each test device's push service said about a test push. */
export function TestSendResults({ result }: { result: TestSendResult }) {
  const allSent = result.failed === 0;
  const title = allSent
    ? `Test sent to ${result.sent} test ${result.sent === 1 ? 'device' : 'devices'}.`
    : `Test sent to ${result.sent} of ${result.devices} test devices.`;
  return (
    <Alert tone={allSent ? 'success' : 'warning'} title={title}>
      <ul className="flex flex-col gap-0.5">
        {result.results.map((item) => (
          <li key={item.subscriber_id}>
            {item.name}: {OUTCOME_WORDS[item.outcome]}
            {item.error ? ` (${item.error})` : ''}
          </li>
        ))}
      </ul>
      <p className="mt-1">Tests count nowhere: not in the notification’s figures, nor on the dashboard.</p>
    </Alert>
  );
}
