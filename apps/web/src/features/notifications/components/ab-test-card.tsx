import { AB_DECIDE_AFTER_MAX_MINUTES, AB_SAMPLE_PERCENT_MAX, AB_SAMPLE_PERCENT_MIN, AB_VARIANT_LETTERS, NOTIFICATION_MESSAGE_MAX, NOTIFICATION_TITLE_MAX } from '@herald/contracts';
import { Info, Plus, Trash2 } from 'lucide-react';
import { Controller, useFieldArray, type Control, type FieldErrors, type UseFormRegister } from 'react-hook-form';
import { Button, Card, CardContent, CardDescription, CardHeader, CardTitle, Field, Input, Select, Switch, Textarea, ToggleGroup } from '../../../components/ui';
import { AB_EXTRA_VARIANTS_MAX, AB_SAMPLE_HINT, EMPTY_VARIANT, waitLabel, type AbMode } from '../ab-test-form';
import type { NotificationFormValues } from '../notification-form';

interface AbTestCardProps {
  control: Control<NotificationFormValues>;
  register: UseFormRegister<NotificationFormValues>;
  errors: FieldErrors<NotificationFormValues>;
  values: Pick<NotificationFormValues, 'ab_enabled' | 'ab_mode' | 'ab_wait_minutes' | 'ab_sample_percent' | 'ab_decide'>;
}

const MODES: Array<{ value: AbMode; label: string }> = [
  { value: 'sample', label: 'Test on a sample, then the winner' },
  { value: 'all', label: 'Every variant to everyone' },
];

/**
 * The A/B test of a one-time notification (issue 14 §2; docs/product.md,
 * "A/B tests"): variant A is the content above; B to D here, with how the
 * test runs.
 */
export function AbTestCard({ control, register, errors, values }: AbTestCardProps) {
  const { fields, append, remove } = useFieldArray({ control, name: 'ab_variants' });
  const wait = waitLabel(values.ab_wait_minutes);
  return (
    <Card data-testid="ab-test-card">
      <CardHeader>
        <CardTitle>A/B test</CardTitle>
        <CardDescription>Try 2 to 4 versions of this notification and see which one gets clicked most.</CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-5">
        <Controller
          control={control}
          name="ab_enabled"
          render={({ field }) => (
            <Switch
              label="A/B test this notification"
              description="The content above is variant A. Each subscriber gets one variant."
              checked={field.value}
              onCheckedChange={(checked) => {
                field.onChange(checked);
                if (checked && !fields.length) append({ ...EMPTY_VARIANT });
              }}
            />
          )}
        />
        {values.ab_enabled ? (
          <>
            {fields.map((field, index) => {
              const letter = AB_VARIANT_LETTERS[index + 1];
              const fieldErrors = errors.ab_variants?.[index];
              return (
                <fieldset key={field.id} className="grid gap-3 rounded-lg border border-slate-200 p-3" data-testid={`ab-variant-${letter}`}>
                  <legend className="px-1 text-xs font-semibold tracking-wide text-slate-600 uppercase">Variant {letter}</legend>
                  <Field label={`Variant ${letter} title`} required error={fieldErrors?.title?.message}>
                    {(props) => <Input {...props} {...register(`ab_variants.${index}.title`)} maxLength={NOTIFICATION_TITLE_MAX + 10} autoComplete="off" />}
                  </Field>
                  <Field label={`Variant ${letter} message`} required error={fieldErrors?.message?.message}>
                    {(props) => <Textarea {...props} {...register(`ab_variants.${index}.message`)} rows={2} maxLength={NOTIFICATION_MESSAGE_MAX + 20} />}
                  </Field>
                  <Field label={`Variant ${letter} destination URL`} required error={fieldErrors?.destination_url?.message}>
                    {(props) => <Input {...props} {...register(`ab_variants.${index}.destination_url`)} type="url" inputMode="url" placeholder="https://example.com/sale" />}
                  </Field>
                  <Field label={`Variant ${letter} image URL`} error={fieldErrors?.image_url?.message} hint="Optional: a large image for this variant.">
                    {(props) => <Input {...props} {...register(`ab_variants.${index}.image_url`)} type="url" inputMode="url" placeholder="https://example.com/banner.png" />}
                  </Field>
                  <Button
                    variant="danger-ghost"
                    size="sm"
                    className="justify-self-start"
                    onClick={() => remove(index)}
                    icon={<Trash2 className="size-4" aria-hidden="true" />}
                    aria-label={`Remove variant ${letter}`}
                  >
                    Remove variant {letter}
                  </Button>
                </fieldset>
              );
            })}
            {errors.ab_variants?.message || errors.ab_variants?.root?.message ? <p className="text-sm text-red-700">{errors.ab_variants?.message ?? errors.ab_variants?.root?.message}</p> : null}
            {fields.length < AB_EXTRA_VARIANTS_MAX ? (
              <Button variant="secondary" size="sm" className="self-start" onClick={() => append({ ...EMPTY_VARIANT })} icon={<Plus className="size-4" aria-hidden="true" />}>
                Add variant {AB_VARIANT_LETTERS[fields.length + 1]}
              </Button>
            ) : (
              <p className="flex items-center gap-1.5 text-xs text-slate-600">
                <Info className="size-3.5" aria-hidden="true" /> At most 4 variants (A to D).
              </p>
            )}

            <div className="flex flex-col gap-2">
              <span className="text-sm font-medium text-slate-800">How to send</span>
              <Controller
                control={control}
                name="ab_mode"
                render={({ field }) => <ToggleGroup label="How to send the variants" items={MODES} value={field.value} onValueChange={field.onChange} />}
              />
              <p className="text-xs text-slate-600">
                {values.ab_mode === 'sample'
                  ? 'A sample gets the variants first; the rest of the audience then gets the winner.'
                  : 'The whole audience is split evenly among the variants; the report compares them.'}
              </p>
            </div>
            {values.ab_mode === 'sample' ? (
              <div className="grid gap-5 sm:grid-cols-3">
                <Field label="Sample size (%)" required error={errors.ab_sample_percent?.message} hint={AB_SAMPLE_HINT}>
                  {(props) => <Input {...props} {...register('ab_sample_percent')} type="number" inputMode="numeric" min={AB_SAMPLE_PERCENT_MIN} max={AB_SAMPLE_PERCENT_MAX} step={1} />}
                </Field>
                <Field label="Pick the winner" error={errors.ab_decide?.message} hint={values.ab_decide === 'auto' ? 'The best click rate (clicks ÷ delivered) in the sample.' : 'You choose on the notification’s page once the sample is out.'}>
                  {(props) => (
                    <Select {...props} {...register('ab_decide')}>
                      <option value="auto">Automatically</option>
                      <option value="manual">By hand</option>
                    </Select>
                  )}
                </Field>
                {values.ab_decide === 'auto' ? (
                  <Field
                    label="Decide after (minutes)"
                    required
                    error={errors.ab_wait_minutes?.message}
                    hint={`1 minute to 24 hours (${AB_DECIDE_AFTER_MAX_MINUTES}) after the sample starts${wait ? `: ${wait}` : ''}.`}
                  >
                    {(props) => <Input {...props} {...register('ab_wait_minutes')} type="number" inputMode="numeric" min={1} max={AB_DECIDE_AFTER_MAX_MINUTES} step={1} />}
                  </Field>
                ) : null}
              </div>
            ) : null}
          </>
        ) : null}
      </CardContent>
    </Card>
  );
}
