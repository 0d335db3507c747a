import { quietHours, type Site } from '@herald/contracts';
import { MoonStar } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { RoleGatedButton } from '../../../components/role-gate';
import { Alert, Card, CardContent, CardDescription, CardHeader, CardTitle, Field, Input, Switch } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { notify } from '../../../lib/dialogs';
import { useUpdateSiteMutation } from '../api';

const DEFAULT_WINDOW = { start: '22:00', end: '08:00' };

/**
 * Settings → General, "Quiet hours" (issue 14 §4; docs/product.md, "Quiet
 * hours"): a window in each subscriber's local time when non-urgent pushes
 * wait. Saved on its own (PATCH /sites/{id} with settings.quietHours only),
 * like the frequency cap beside it.
 */
export function QuietHoursPanel({ site }: { site: Site }) {
  const saved = site.settings.quietHours;
  const [enabled, setEnabled] = useState(saved !== null);
  const [start, setStart] = useState((saved ?? DEFAULT_WINDOW).start);
  const [end, setEnd] = useState((saved ?? DEFAULT_WINDOW).end);
  const [errors, setErrors] = useState<{ start?: string; end?: string }>({});
  const mutation = useUpdateSiteMutation();

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    let window: { start: string; end: string } | null = null;
    if (enabled) {
      const parsed = quietHours.safeParse({ start, end });
      if (!parsed.success) {
        const found: { start?: string; end?: string } = {};
        for (const issue of parsed.error.issues) {
          const field = issue.path[0] === 'start' ? 'start' : 'end';
          found[field] ??= issue.message.includes('must differ') ? 'From and Until must differ' : issue.message.replace(/^quietHours\.(start|end)/, field === 'start' ? 'From' : 'Until');
        }
        setErrors(found);
        return;
      }
      window = parsed.data;
    }
    setErrors({});
    mutation.mutate(
      { id: site.id, changes: { settings: { quietHours: window } } },
      {
        onSuccess: () => notify(window ? `Quiet hours saved: ${window.start}–${window.end} in each subscriber's time zone.` : 'Quiet hours turned off.'),
        onError: (error) => notify(errorMessage(error, 'Failed to update settings')),
      },
    );
  }

  return (
    <form onSubmit={onSubmit} noValidate aria-label="Quiet hours">
      <Card>
        <CardHeader>
          <CardTitle className="flex items-center gap-2">
            <MoonStar className="size-5 text-slate-500" aria-hidden="true" /> Quiet hours
          </CardTitle>
          <CardDescription>
            Don&apos;t wake your subscribers. A push due inside this window, in the subscriber&apos;s own time zone (the site&apos;s when they gave
            none), waits until the window ends there and is counted as &quot;deferred&quot; on the notification&apos;s page.
          </CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-5">
          <Switch
            label="Hold pushes during quiet hours"
            checked={enabled}
            onCheckedChange={setEnabled}
            description={'Notifications marked "Send anyway", high-urgency ones, and ones whose time to live would run out before the window ends go at once.'}
          />
          {enabled ? (
            <div className="grid gap-5 sm:grid-cols-2">
              <Field label="From" required error={errors.start}>
                {(control) => <Input {...control} type="time" value={start} onChange={(event) => setStart(event.target.value)} />}
              </Field>
              <Field label="Until" required error={errors.end} hint="A window that ends before it starts runs past midnight (22:00 until 08:00).">
                {(control) => <Input {...control} type="time" value={end} onChange={(event) => setEnd(event.target.value)} />}
              </Field>
            </div>
          ) : null}
          {mutation.isError ? <Alert tone="error">{errorMessage(mutation.error, 'Failed to update settings')}</Alert> : null}
          <div>
            <RoleGatedButton needed="admin" action="change the site settings" type="submit" loading={mutation.isPending}>
              Save quiet hours
            </RoleGatedButton>
          </div>
        </CardContent>
      </Card>
    </form>
  );
}
