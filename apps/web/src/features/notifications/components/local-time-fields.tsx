import { Controller, type Control, type FieldErrors, type UseFormRegister } from 'react-hook-form';
import { Field, Input, Switch } from '../../../components/ui';
import type { NotificationFormValues } from '../notification-form';

interface LocalTimeFieldsProps {
  control: Control<NotificationFormValues>;
  register: UseFormRegister<NotificationFormValues>;
  errors: FieldErrors<NotificationFormValues>;
  values: Pick<NotificationFormValues, 'type' | 'local_time_enabled'>;
  timeZone: string;
}

/**
 * The Scheduling card's "at the same local time in each subscriber's zone"
 * (issue 14 §1; docs/product.md, "Local-time delivery"): one-time and
 * recurring notifications only; a triggered one goes when its event fires.
 */
export function LocalTimeFields({ control, register, errors, values, timeZone }: LocalTimeFieldsProps) {
  if (values.type === 'TRIGGERED') return null;
  const when = values.type === 'ONE_TIME' ? 'Once it is sent (now, or at the schedule time)' : 'At each occurrence';
  return (
    <div className="flex flex-col gap-3 sm:col-span-2">
      <Controller
        control={control}
        name="local_time_enabled"
        render={({ field }) => (
          <Switch
            label="At the same local time in each subscriber's zone"
            description={`${when}, each subscriber gets it at this time of day in their own time zone (${timeZone} for those without one): zone by zone, over up to a day.`}
            checked={field.value}
            onCheckedChange={field.onChange}
          />
        )}
      />
      {values.local_time_enabled ? (
        <Field label="Local time" required error={errors.local_time?.message} hint="The time of day in each subscriber's zone, e.g. 09:00">
          {(field) => (
            <span className="block w-40">
              <Input {...field} {...register('local_time')} type="time" />
            </span>
          )}
        </Field>
      ) : null}
    </div>
  );
}
