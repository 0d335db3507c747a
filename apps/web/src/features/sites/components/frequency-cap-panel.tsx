import { frequencyCapNamed, type Site } from '@herald/contracts';
import { Gauge } from 'lucide-react';
import { useState } from 'react';
import { Field, Input } from '../../../components/ui';
import { SwitchedSettingPanel, useSaveSiteSetting } from './switched-setting-panel';

const DEFAULT_CAP = { max: 3, hours: 24 };
/** The API's rules, with the messages naming the form's fields. */
const capForm = frequencyCapNamed({ max: 'Pushes', hours: 'Hours' });

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
  const { save, mutation } = useSaveSiteSetting(site.id);

  function onSubmit() {
    let cap: { max: number; hours: number } | null = null;
    if (enabled) {
      const parsed = capForm.safeParse({ max: max.trim() === '' ? NaN : Number(max), hours: hours.trim() === '' ? NaN : Number(hours) });
      if (!parsed.success) {
        const found: { max?: string; hours?: string } = {};
        for (const issue of parsed.error.issues) {
          const field = issue.path[0] === 'hours' ? 'hours' : 'max';
          found[field] ??= issue.message;
        }
        setErrors(found);
        return;
      }
      cap = parsed.data;
    }
    setErrors({});
    save({ frequencyCap: cap }, cap ? `Frequency cap saved: at most ${cap.max} per subscriber in any ${cap.hours} hours.` : 'Frequency cap turned off.');
  }

  return (
    <SwitchedSettingPanel
      title="Frequency cap"
      icon={Gauge}
      description={
        <>
          Protect your audience from too many notifications. Every push counts, whatever sent it; a subscriber who had the cap is skipped and counted as
          &quot;skipped: frequency cap&quot; on the notification&apos;s page.
        </>
      }
      switchLabel="Cap pushes per subscriber"
      switchDescription="Notifications marked exempt (an order update the subscriber asked for) are always sent."
      enabled={enabled}
      onEnabledChange={setEnabled}
      saveLabel="Save frequency cap"
      mutation={mutation}
      onSubmit={onSubmit}
    >
      <Field label="At most (pushes)" required error={errors.max}>
        {(control) => <Input {...control} type="number" inputMode="numeric" min={1} max={100} step={1} value={max} onChange={(event) => setMax(event.target.value)} />}
      </Field>
      <Field label="In any (hours)" required error={errors.hours} hint="A rolling window: 24 means any 24 hours, not a calendar day.">
        {(control) => <Input {...control} type="number" inputMode="numeric" min={1} max={168} step={1} value={hours} onChange={(event) => setHours(event.target.value)} />}
      </Field>
    </SwitchedSettingPanel>
  );
}
