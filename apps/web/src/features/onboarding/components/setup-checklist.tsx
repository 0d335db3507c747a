import type { SetupChecklist as Checklist, Site, TestDeviceLink } from '@herald/contracts';
import { Check, ExternalLink, Rocket, Search, Send, Smartphone, X } from 'lucide-react';
import { useId, useState, type ReactNode } from 'react';
import { Link } from 'react-router';
import { RoleGatedButton } from '../../../components/role-gate';
import { Alert, Button, Card, CardDescription, CardHeader, CardTitle, CodeBlock, DateTime, Spinner } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { cn } from '../../../lib/class-names';
import { useInstallCodeQuery } from '../../sites/api';
import {
  checklistSteps,
  useChecklistQuery,
  useDismissChecklistMutation,
  useInstallCheckMutation,
  useSendTestMutation,
  useTestDeviceLinkMutation,
  useTestDevicesQuery,
} from '../api';
import { InstallCheckList } from './install-check-list';
import { TestSendResults } from './test-send-results';

/**
 * On the dashboard: a site with no subscriber yet, until hidden. Once shown it
 * stays for the visit, so the owner sees the first subscriber arrive (and can
 * finish with a test); afterwards it lives in Settings → Installation.
 */
function wantedOnDashboard(checklist: Checklist): boolean {
  return !checklist.dismissed && checklist.first_subscriber_at === null;
}

interface StepProps {
  number: number;
  title: string;
  done: boolean;
  /** One line under the title: what is done, or what happens next. */
  status: ReactNode;
  children?: ReactNode;
}

function Step({ number, title, done, status, children }: StepProps) {
  return (
    <li className="flex gap-3 border-t border-slate-200 px-4 py-5 sm:gap-4 sm:px-6" data-step={number} data-done={done}>
      <span
        className={cn(
          'flex size-8 shrink-0 items-center justify-center rounded-full text-sm font-semibold',
          done ? 'bg-emerald-600 text-white' : 'border-2 border-indigo-600 text-indigo-700',
        )}
        aria-hidden="true"
      >
        {done ? <Check className="size-4" /> : number}
      </span>
      <div className="flex min-w-0 flex-1 flex-col gap-3">
        <div>
          <h3 className="font-semibold text-slate-900">
            {title}
            <span className="sr-only">{done ? ' (done)' : ' (not done yet)'}</span>
          </h3>
          <div className={cn('mt-0.5 text-sm', done ? 'text-emerald-800' : 'text-slate-600')}>{status}</div>
        </div>
        {children}
      </div>
    </li>
  );
}

function InstallCodeStep({ site, done, inline }: { site: Site; done: boolean; inline: boolean }) {
  const [open, setOpen] = useState(false);
  const showCode = inline && (!done || open);
  const query = useInstallCodeQuery(site.id, showCode);
  const workerUrl = new URL('/herald-sw.js', site.url).href;
  return (
    <Step
      number={1}
      title="Add Herald to your site"
      done={done}
      status={done ? 'The snippet and the service worker are in place.' : 'Two pieces: a snippet for your pages and one file at your site root.'}
    >
      {!inline ? <p className="text-sm text-slate-700">The code is below, under “Show Installation Code”.</p> : null}
      {done && inline ? (
        <Button variant="ghost" size="sm" className="self-start" onClick={() => setOpen((value) => !value)} aria-expanded={open}>
          {open ? 'Hide the code' : 'Show the code'}
        </Button>
      ) : null}
      {showCode ? (
        query.data ? (
          <div className="flex flex-col gap-3">
            {query.data.warnings.map((warning) => (
              <Alert key={warning} tone="warning" title="Herald is not on HTTPS">
                {warning}
              </Alert>
            ))}
            <p className="text-sm text-slate-700">
              Paste this just before <code className="rounded bg-slate-100 px-1 font-mono text-xs">&lt;/body&gt;</code> on every page:
            </p>
            <CodeBlock code={query.data.installCode} label="Snippet for your pages" />
            <p className="text-sm text-slate-700">
              Save this as <code className="rounded bg-slate-100 px-1 font-mono text-xs">/{query.data.serviceWorker.fileName}</code> at your site root, so it
              opens at <span className="break-all font-mono text-xs">{workerUrl}</span>:
            </p>
            <CodeBlock code={query.data.serviceWorker.content} label="Service worker file for your site root" />
          </div>
        ) : query.isError ? (
          <Alert tone="error">{errorMessage(query.error, 'Failed to load the installation code. Please try again.')}</Alert>
        ) : (
          <p className="flex items-center gap-2 text-sm text-slate-600" role="status">
            <Spinner /> Loading the code…
          </p>
        )
      ) : null}
    </Step>
  );
}

function InstallCheckStep({ site, checklist, done }: { site: Site; checklist: Checklist; done: boolean }) {
  const check = useInstallCheckMutation(site.id);
  const result = check.data ?? checklist.install_check;
  return (
    <Step
      number={2}
      title="Check the installation"
      done={done}
      status={
        result ? (
          <>
            {result.passed ? 'Nothing stops push from working.' : 'Something needs fixing; see below.'} Last checked <DateTime value={result.checked_at} timeZone={site.settings.timezone} />.
          </>
        ) : (
          `Herald loads ${site.url}, the worker file and the manifest, and says what to fix.`
        )
      }
    >
      <RoleGatedButton
        needed="editor"
        action="check the installation"
        variant={done ? 'secondary' : 'primary'}
        size="sm"
        className="self-start"
        loading={check.isPending}
        icon={<Search className="size-4" aria-hidden="true" />}
        onClick={() => check.mutate()}
      >
        {result ? 'Check again' : 'Check installation'}
      </RoleGatedButton>
      {check.isError ? <Alert tone="error">{errorMessage(check.error, 'The installation could not be checked. Please try again.')}</Alert> : null}
      {result ? <InstallCheckList checks={result.checks} /> : null}
    </Step>
  );
}

function FirstSubscriberStep({ site, checklist }: { site: Site; checklist: Checklist }) {
  const arrived = checklist.first_subscriber_at;
  return (
    <Step
      number={3}
      title={arrived ? 'First subscriber' : 'Waiting for your first subscriber…'}
      done={arrived !== null}
      status={
        arrived ? (
          <span role="status">
            Your first subscriber arrived <DateTime value={arrived} timeZone={site.settings.timezone} />. {checklist.active_subscribers} active now.{' '}
            <Link to="/subscribers" className="font-medium text-indigo-700 underline underline-offset-2">
              See subscribers
            </Link>
          </span>
        ) : (
          <span className="flex items-start gap-2" role="status">
            <Spinner className="mt-0.5" />
            <span>Open {site.url} in a browser and allow notifications: the subscriber appears here by itself.</span>
          </span>
        )
      }
    />
  );
}

function TestStep({ site, checklist, done }: { site: Site; checklist: Checklist; done: boolean }) {
  const [link, setLink] = useState<TestDeviceLink | null>(null);
  const makeLink = useTestDeviceLinkMutation(site.id);
  const devices = useTestDevicesQuery(site.id, { poll: link !== null });
  const send = useSendTestMutation(site.id);
  const deviceCount = devices.data?.length ?? checklist.test_devices;
  const listId = useId();
  return (
    <Step
      number={4}
      title="Send yourself a test"
      done={done}
      status={
        done && checklist.test_sent_at ? (
          <>
            Test sent <DateTime value={checklist.test_sent_at} timeZone={site.settings.timezone} />. Use “Send test” in the notification composer before every send.
          </>
        ) : (
          'Make your own browser a test device, then send it a test. Tests reach your test devices only and count nowhere.'
        )
      }
    >
      <div className="flex flex-col gap-2">
        <RoleGatedButton
          needed="editor"
          action="add test devices"
          variant={link ? 'secondary' : 'primary'}
          size="sm"
          className="self-start"
          loading={makeLink.isPending}
          icon={<Smartphone className="size-4" aria-hidden="true" />}
          onClick={() => makeLink.mutate(undefined, { onSuccess: setLink })}
        >
          {link ? 'Create another link' : 'Create test-device link'}
        </RoleGatedButton>
        {makeLink.isError ? <Alert tone="error">{errorMessage(makeLink.error, 'The link could not be created. Please try again.')}</Alert> : null}
        {link ? (
          <div className="flex flex-col gap-2">
            <p className="text-sm text-slate-700">
              Open this link in the browser you want to receive tests in (it works once, for an hour), and choose “Make test device” on your site:
            </p>
            <CodeBlock code={link.url} label="Test-device link" />
            <a
              href={link.url}
              target="_blank"
              rel="noopener noreferrer"
              className="inline-flex items-center gap-1.5 self-start text-sm font-medium text-indigo-700 underline underline-offset-2"
            >
              Open it in this browser <ExternalLink className="size-3.5" aria-hidden="true" />
            </a>
          </div>
        ) : null}
      </div>
      <div className="flex flex-col gap-1">
        <h4 id={listId} className="text-sm font-medium text-slate-900">
          Test devices
        </h4>
        {devices.data?.length ? (
          <ul aria-labelledby={listId} className="flex flex-wrap gap-2">
            {devices.data.map((device) => (
              <li key={device.subscriber_id} className="rounded-full bg-slate-100 px-3 py-1 text-sm text-slate-800">
                {device.name}
              </li>
            ))}
          </ul>
        ) : (
          <p className="text-sm text-slate-600">
            {link ? (
              <span className="flex items-center gap-2" role="status">
                <Spinner /> Waiting for a browser to open the link…
              </span>
            ) : (
              <>
                None yet. You can also mark subscribers as test devices on the{' '}
                <Link to="/subscribers" className="font-medium text-indigo-700 underline underline-offset-2">
                  Subscribers
                </Link>{' '}
                page.
              </>
            )}
          </p>
        )}
      </div>
      <RoleGatedButton
        needed="editor"
        action="send tests"
        size="sm"
        className="self-start"
        disabled={deviceCount === 0}
        loading={send.isPending}
        icon={<Send className="size-4" aria-hidden="true" />}
        onClick={() =>
          send.mutate({ title: 'Test from Herald', message: `Your test device for ${site.name} works.`, destination_url: site.url })
        }
      >
        Send test
      </RoleGatedButton>
      {send.isError ? <Alert tone="error">{errorMessage(send.error, 'The test could not be sent. Please try again.')}</Alert> : null}
      {send.data ? <TestSendResults result={send.data} /> : null}
    </Step>
  );
}

/**
 * The setup checklist (issue 12): from install to the first push, each step
 * done or not from the site's real state, updating by itself while it waits.
 * On the dashboard it shows for a new site until hidden; in Settings →
 * Installation it is always there.
 */
export function SetupChecklist({ site, placement }: { site: Site; placement: 'dashboard' | 'settings' }) {
  const onDashboard = placement === 'dashboard';
  // Shown once on the dashboard, it stays for this visit (the owner sees the first subscriber arrive).
  const [shownHere, setShownHere] = useState(false);
  const query = useChecklistQuery(site.id, { poll: (checklist) => !onDashboard || wantedOnDashboard(checklist) || (shownHere && !checklist.dismissed) });
  const dismiss = useDismissChecklistMutation(site.id);
  const headingId = useId();

  const checklist = query.data;
  if (!checklist) {
    return !onDashboard && query.isError ? <Alert tone="error">{errorMessage(query.error, 'The setup checklist could not be loaded.')}</Alert> : null;
  }
  const wanted = wantedOnDashboard(checklist);
  if (onDashboard && wanted && !shownHere) setShownHere(true);
  if (onDashboard && (checklist.dismissed || !(wanted || shownHere))) return null;

  const steps = checklistSteps(checklist);
  const doneCount = Object.values(steps).filter(Boolean).length;
  return (
    <Card aria-labelledby={headingId} data-testid="setup-checklist">
      <CardHeader className="flex-row flex-wrap items-start justify-between gap-3 border-b-0">
        <div className="flex min-w-0 items-start gap-3">
          <span className="flex size-9 shrink-0 items-center justify-center rounded-lg bg-indigo-50 text-indigo-700" aria-hidden="true">
            <Rocket className="size-5" />
          </span>
          <div>
            <CardTitle id={headingId}>{doneCount === 4 ? `${site.name} is all set` : `Set up ${site.name}`}</CardTitle>
            <CardDescription>
              {doneCount} of 4 done. From install to your first push in five minutes.
            </CardDescription>
          </div>
        </div>
        {onDashboard ? (
          <Button variant="ghost" size="sm" loading={dismiss.isPending} icon={<X className="size-4" aria-hidden="true" />} onClick={() => dismiss.mutate(true)}>
            Hide checklist
          </Button>
        ) : (
          <Button variant="secondary" size="sm" loading={dismiss.isPending} onClick={() => dismiss.mutate(!checklist.dismissed)}>
            {checklist.dismissed ? 'Show on dashboard' : 'Hide from dashboard'}
          </Button>
        )}
      </CardHeader>
      {dismiss.isError ? <Alert tone="error" className="mx-4 mb-4">{errorMessage(dismiss.error, 'Please try again.')}</Alert> : null}
      <ol>
        {/* In Settings → Installation the code is the panel below the checklist (spec §2 "Show Installation Code"). */}
        <InstallCodeStep site={site} done={steps.code} inline={onDashboard} />
        <InstallCheckStep site={site} checklist={checklist} done={steps.check} />
        <FirstSubscriberStep site={site} checklist={checklist} />
        <TestStep site={site} checklist={checklist} done={steps.test} />
      </ol>
    </Card>
  );
}
