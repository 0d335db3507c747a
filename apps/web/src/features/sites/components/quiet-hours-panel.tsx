import { quietHoursNamed, type Site } from '@herald/contracts';
import { MoonStar } from 'lucide-react';
import { useState } from 'react';
import { Field, Input } from '../../../components/ui';
import { SwitchedSettingPanel, useSaveSiteSetting } from './switched-setting-panel';

const DEFAULT_WINDOW = { start: '22:00', end: '08:00' };
/** The API's rules, with the messages naming the form's fields. */
const windowForm = quietHoursNamed({ start: 'From', end: 'Until' });

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
  const { save, mutation } = useSaveSiteSetting(site.id);

  function onSubmit() {
    let window: { start: string; end: string } | null = null;
    if (enabled) {
      const parsed = windowForm.safeParse({ start, end });
      if (!parsed.success) {
        const found: { start?: string; end?: string } = {};
        for (const issue of parsed.error.issues) {
          const field = issue.path[0] === 'start' ? 'start' : 'end';
          found[field] ??= issue.message;
        }
        setErrors(found);
        return;
      }
      window = parsed.data;
    }
    setErrors({});
    save({ quietHours: window }, window ? `Quiet hours saved: ${window.start}–${window.end} in each subscriber's time zone.` : 'Quiet hours turned off.');
  }

  return (
    <SwitchedSettingPanel
      title="Quiet hours"
      icon={MoonStar}
      description={
        <>
          Don&apos;t wake your subscribers. A push due inside this window, in the subscriber&apos;s own time zone (the site&apos;s when they gave none),
          waits until the window ends there and is counted as &quot;deferred&quot; on the notification&apos;s page.
        </>
      }
      switchLabel="Hold pushes during quiet hours"
      switchDescription='Notifications marked "Send anyway", high-urgency ones, and ones whose time to live would run out before the window ends go at once.'
      enabled={enabled}
      onEnabledChange={setEnabled}
      saveLabel="Save quiet hours"
      mutation={mutation}
      onSubmit={onSubmit}
    >
      <Field label="From" required error={errors.start}>
        {(control) => <Input {...control} type="time" value={start} onChange={(event) => setStart(event.target.value)} />}
      </Field>
      <Field label="Until" required error={errors.end} hint="A window that ends before it starts runs past midnight (22:00 until 08:00).">
        {(control) => <Input {...control} type="time" value={end} onChange={(event) => setEnd(event.target.value)} />}
      </Field>
    </SwitchedSettingPanel>
  );
}
