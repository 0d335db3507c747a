import type { Site, TestSendContentBody, TestSendResult } from '@herald/contracts';
import { Send } from 'lucide-react';
import { useState } from 'react';
import { RoleGatedButton } from '../../../components/role-gate';
import { errorMessage } from '../../../lib/api-client';
import { useSendNotificationTestMutation, useSendTestMutation } from '../../onboarding/api';
import { testSendLines, testSendTitle } from '../../onboarding/components/test-send-results';
import { cn } from '../../../lib/class-names';

interface SendTestButtonProps {
  site: Site;
  /** The saved notification, in edit mode. */
  notificationId?: string;
  /** The form differs from what is saved: the typed content is sent instead. */
  dirty: boolean;
  /** Checks the content fields and answers them, or null when they have errors (shown on the form). */
  content: () => Promise<TestSendContentBody | null>;
}

/**
 * "Send test" (issue 12): the composer's current content to the site's test
 * devices only, also before saving. A test never changes the notification's
 * status and counts nowhere.
 */
export function SendTestButton({ site, notificationId, dirty, content }: SendTestButtonProps) {
  const saved = useSendNotificationTestMutation(site.id);
  const typed = useSendTestMutation(site.id);
  const [result, setResult] = useState<{ ok: TestSendResult } | { error: unknown } | null>(null);
  const pending = saved.isPending || typed.isPending;

  const send = async () => {
    setResult(null);
    const done = { onSuccess: (ok: TestSendResult) => setResult({ ok }), onError: (error: unknown) => setResult({ error }) };
    if (notificationId && !dirty) {
      saved.mutate(notificationId, done);
      return;
    }
    const body = await content();
    if (body) typed.mutate(body, done);
  };

  return (
    <div className="mr-auto flex max-w-xl min-w-0 flex-wrap items-center gap-x-3 gap-y-1">
      <RoleGatedButton needed="editor" action="send tests" variant="secondary" onClick={() => void send()} loading={pending} icon={<Send className="size-4" aria-hidden="true" />} data-testid="send-test">
        Send test
      </RoleGatedButton>
      {/* One short line beside the button: the save buttons stay where they are. */}
      {result && 'ok' in result ? (
        <p role="status" className={cn('min-w-0 text-sm', result.ok.failed === 0 ? 'text-emerald-800' : 'text-amber-900')}>
          {testSendTitle(result.ok)} {testSendLines(result.ok).join(' · ')}
        </p>
      ) : null}
      {result && 'error' in result ? (
        <p role="alert" className="min-w-0 text-sm text-red-700">
          {errorMessage(result.error, 'The test could not be sent. Please try again.')}
        </p>
      ) : null}
    </div>
  );
}
