import { NOTIFICATION_TOPIC_MAX, NOTIFICATION_URGENCIES, THROTTLE_PER_MINUTE_MAX, THROTTLE_PER_MINUTE_MIN } from '@herald/contracts';
import { Controller, type Control, type FieldErrors, type UseFormRegister } from 'react-hook-form';
import { Card, CardContent, CardDescription, CardHeader, CardTitle, Field, Input, Select, Switch } from '../../../components/ui';
import { spreads, ttlChoices, URGENCY_LABELS, type NotificationFormValues } from '../notification-form';

interface DeliveryOptionsCardProps {
  control: Control<NotificationFormValues>;
  register: UseFormRegister<NotificationFormValues>;
  errors: FieldErrors<NotificationFormValues>;
  values: Pick<NotificationFormValues, 'ttl_seconds' | 'topic_enabled' | 'type' | 'throttle_enabled'>;
}

/** An on/off option of the form, as a switch. */
function FlagSwitch({
  control,
  name,
  label,
  description,
  className,
}: {
  control: Control<NotificationFormValues>;
  name: 'topic_enabled' | 'require_interaction' | 'frequency_cap_exempt' | 'throttle_enabled' | 'quiet_hours_exempt';
  label: string;
  description: string;
  className?: string;
}) {
  return (
    <Controller
      control={control}
      name={name}
      render={({ field }) => <Switch className={className} label={label} description={description} checked={field.value} onCheckedChange={field.onChange} />}
    />
  );
}

/**
 * How push services and browsers handle the notification (issue 14 §6;
 * docs/web-push.md, "TTL, Urgency and Topic"; docs/product.md, "Delivery
 * options"). The defaults are what every send had before: a day, normal.
 */
export function DeliveryOptionsCard({ control, register, errors, values }: DeliveryOptionsCardProps) {
  return (
    <Card>
      <CardHeader>
        <CardTitle>Delivery</CardTitle>
        <CardDescription>How long push services keep it for browsers that are offline, and how it behaves on screen.</CardDescription>
      </CardHeader>
      <CardContent className="grid gap-5 sm:grid-cols-2">
        <Field label="Time to live" error={errors.ttl_seconds?.message} hint="A browser that comes online later than this never receives it.">
          {(field) => (
            <Select {...field} {...register('ttl_seconds')}>
              {ttlChoices(values.ttl_seconds).map((choice) => (
                <option key={choice.seconds} value={String(choice.seconds)}>
                  {choice.label}
                </option>
              ))}
            </Select>
          )}
        </Field>
        <Field label="Urgency" error={errors.urgency?.message} hint="Devices saving battery may hold low-urgency notifications back.">
          {(field) => (
            <Select {...field} {...register('urgency')}>
              {NOTIFICATION_URGENCIES.map((urgency) => (
                <option key={urgency} value={urgency}>
                  {URGENCY_LABELS[urgency]}
                </option>
              ))}
            </Select>
          )}
        </Field>
        <div className="flex flex-col gap-3 sm:col-span-2">
          <FlagSwitch
            control={control}
            name="topic_enabled"
            label="Replace the previous notification of this campaign"
            description="Sends with the same campaign name replace each other: a browser shows only the latest, even if it was offline for several."
          />
          {values.topic_enabled ? (
            <Field label="Campaign name" required error={errors.topic?.message} hint="Letters, digits, spaces, dots, dashes and underscores, e.g. flash-sale">
              {(field) => <Input {...field} {...register('topic')} maxLength={NOTIFICATION_TOPIC_MAX} autoComplete="off" placeholder="flash-sale" />}
            </Field>
          ) : null}
        </div>
        <FlagSwitch
          control={control}
          name="require_interaction"
          className="sm:col-span-2"
          label="Require interaction"
          description="Keeps it on screen until the visitor clicks or dismisses it, where the browser allows (Chrome and Edge on desktop)."
        />
        <FlagSwitch
          control={control}
          name="frequency_cap_exempt"
          className="sm:col-span-2"
          label="Exempt from the frequency cap"
          description="Sent even to subscribers who already had the site's frequency cap (Settings → General): for messages they asked for, like an order update."
        />
        {values.type !== 'TRIGGERED' ? (
          <div className="flex flex-col gap-3 sm:col-span-2">
            <FlagSwitch
              control={control}
              name="throttle_enabled"
              label="Spread the send"
              description="Limits how many messages go out each minute, retries included, so the visitors who click do not all arrive on the site at once. The notification page shows when the send should finish."
            />
            {spreads(values) ? (
              <Field label="Messages per minute" required error={errors.throttle_per_minute?.message} hint={`A whole number from ${THROTTLE_PER_MINUTE_MIN} to ${THROTTLE_PER_MINUTE_MAX.toLocaleString('en-US')}.`}>
                {(field) => <Input {...field} {...register('throttle_per_minute')} inputMode="numeric" autoComplete="off" className="sm:max-w-48" />}
              </Field>
            ) : null}
          </div>
        ) : null}
        <FlagSwitch
          control={control}
          name="quiet_hours_exempt"
          className="sm:col-span-2"
          label="Send anyway during quiet hours"
          description="Sent at once even to subscribers inside the site's quiet hours (Settings → General). High-urgency notifications always are."
        />
      </CardContent>
    </Card>
  );
}
