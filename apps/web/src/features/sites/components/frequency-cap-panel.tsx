import { frequencyCap, type Site } from '@herald/contracts';
import { Gauge } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { RoleGatedButton } from '../../../components/role-gate';
import { Alert, Card, CardContent, CardDescription, CardHeader, CardTitle, Field, Input, Switch } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { notify } from '../../../lib/dialogs';
import { useUpdateSiteMutation } from '../api';

const DEFAULT_CAP = { max: 3, hours: 24 };

/**
 * Settings → General, "Frequency cap" (issue 14 §3; docs/product.md,
 * "Frequency cap"): at most N pushes per subscriber in any H hours. Saved on
 * its own (PATCH /sites/{id} with settings.frequencyCap only), so the spec's
 * general settings form sends what it always sent.
 */
export function FrequencyCapPanel({ site }: { site: Site }) {
  const saved = site.settings.frequencyCap;
  const [enabled, setEnabled] = useState(saved !== null);
  const [max, setMax] = useState(String((saved ?? DEFAULT_CAP).max));
  const [hours, setHours] = useState(String((saved ?? DEFAULT_CAP).hours));
  const [errors, setErrors] = useState<{ max?: string; hours?: string }>({});
  const mutation = useUpdateSiteMutation();

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    let cap: { max: number; hours: number } | null = null;
    if (enabled) {
      const parsed = frequencyCap.safeParse({ max: max.trim() === '' ? NaN : Number(max), hours: hours.trim() === '' ? NaN : Number(hours) });
      if (!parsed.success) {
        const found: { max?: string; hours?: string } = {};
        for (const issue of parsed.error.issues) {
          const field = issue.path[0] === 'hours' ? 'hours' : 'max';
          found[field] ??= issue.message.replace(/^frequencyCap\.(max|hours)/, field === 'max' ? 'Pushes' : 'Hours');
        }
        setErrors(found);
        return;
      }
      cap = parsed.data;
    }
    setErrors({});
    mutation.mutate(
      { id: site.id, changes: { settings: { frequencyCap: cap } } },
      {
        onSuccess: () => notify(cap ? `Frequency cap saved: at most ${cap.max} per subscriber in any ${cap.hours} hours.` : 'Frequency cap turned off.'),
        onError: (error) => notify(errorMessage(error, 'Failed to update settings')),
      },
    );
  }

  return (
    <form onSubmit={onSubmit} noValidate aria-label="Frequency cap">
      <Card>
        <CardHeader>
          <CardTitle className="flex items-center gap-2">
            <Gauge className="size-5 text-slate-500" aria-hidden="true" /> Frequency cap
          </CardTitle>
          <CardDescription>
            Protect your audience from too many notifications. Every push counts, whatever sent it; a subscriber who had the cap is skipped and
            counted as &quot;skipped: frequency cap&quot; on the notification&apos;s page.
          </CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-5">
          <Switch label="Cap pushes per subscriber" checked={enabled} onCheckedChange={setEnabled} description="Notifications marked exempt (an order update the subscriber asked for) are always sent." />
          {enabled ? (
            <div className="grid gap-5 sm:grid-cols-2">
              <Field label="At most (pushes)" required error={errors.max}>
                {(control) => <Input {...control} type="number" inputMode="numeric" min={1} max={100} step={1} value={max} onChange={(event) => setMax(event.target.value)} />}
              </Field>
              <Field label="In any (hours)" required error={errors.hours} hint="A rolling window: 24 means any 24 hours, not a calendar day.">
                {(control) => <Input {...control} type="number" inputMode="numeric" min={1} max={168} step={1} value={hours} onChange={(event) => setHours(event.target.value)} />}
              </Field>
            </div>
          ) : null}
          {mutation.isError ? <Alert tone="error">{errorMessage(mutation.error, 'Failed to update settings')}</Alert> : null}
          <div>
            <RoleGatedButton needed="admin" action="change the site settings" type="submit" loading={mutation.isPending}>
              Save frequency cap
            </RoleGatedButton>
          </div>
        </CardContent>
      </Card>
    </form>
  );
}
