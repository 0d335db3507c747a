import type { TestSendResult } from '@herald/contracts';
import { Alert } from '../../../components/ui';

const OUTCOME_WORDS = { sent: 'sent', failed: 'failed', expired: 'subscription expired' } as const;

/** "Test sent to 1 test device." / "Test sent to 1 of 2 test devices." */
export function testSendTitle(result: TestSendResult): string {
  return result.failed === 0
    ? `Test sent to ${result.sent} test ${result.sent === 1 ? 'device' : 'devices'}.`
    : `Test sent to ${result.sent} of ${result.devices} test devices.`;
}

/** "Firefox on Linux: sent" per device, with the push service's reason when it failed. */
export function testSendLines(result: TestSendResult): string[] {
  return result.results.map((item) => `${item.name}: ${OUTCOME_WORDS[item.outcome]}${item.error ? ` (${item.error})` : ''}`);
}

/** What each test device's push service said about a test push. */
export function TestSendResults({ result }: { result: TestSendResult }) {
  return (
    <Alert tone={result.failed === 0 ? 'success' : 'warning'} title={testSendTitle(result)}>
      <ul className="flex flex-col gap-0.5">
        {testSendLines(result).map((line, index) => (
          <li key={result.results[index]!.subscriber_id}>{line}</li>
        ))}
      </ul>
      <p className="mt-1">Tests count nowhere: not in the notification’s figures, nor on the dashboard.</p>
    </Alert>
  );
}
