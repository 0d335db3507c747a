import {
  NOTIFICATION_ACTIONS_MAX,
  NOTIFICATION_MESSAGE_MAX,
  NOTIFICATION_TITLE_MAX,
  NOTIFICATION_TYPES,
  RECURRING_INTERVALS,
  type Notification,
  type NotificationType,
  type Site,
} from '@herald/contracts';
import { zodResolver } from '@hookform/resolvers/zod';
import { CalendarClock, Info, Plus, Send, Trash2 } from 'lucide-react';
import { useMemo, useRef, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { Controller, useFieldArray, useForm, useWatch, type Control, type FieldErrors, type UseFormRegister } from 'react-hook-form';
import { Link, useNavigate } from 'react-router';
import { ImagePicker } from '../../../components/image-picker';
import { SegmentSelectField } from '../../../components/segment-select';
import { Alert, Button, ButtonLink, Card, CardContent, CardDescription, CardHeader, CardTitle, Field, Input, Select, Switch, Textarea } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { NOTIFICATION_HELP } from '../../../lib/help-texts';
import { cn } from '../../../lib/class-names';
import { audienceKey, type Reach } from '../../../lib/audience';
import { confirmAction, notify } from '../../../lib/dialogs';
import { useCreateNotificationMutation, useNotificationCommandMutation, useUpdateNotificationMutation } from '../api';
import {
  DEFAULT_FORM_VALUES,
  EMPTY_ACTION,
  notificationFormSchema,
  scheduleBounds,
  toFormValues,
  toNotificationBody,
  type NotificationFormValues,
} from '../notification-form';
import { INTERVAL_LABELS, intervalUnit, TYPE_LABELS } from '../notification-labels';
import { AbTestCard } from './ab-test-card';
import { DeliveryOptionsCard } from './delivery-options-card';
import { LocalTimeFields } from './local-time-fields';
import { NotificationPreview } from './notification-preview';
import { SendTestButton } from './send-test-button';

interface NotificationFormProps {
  /** The site the notification belongs to; null when none is selected (submitting then says so). */
  site: Site | null;
  /** Edit mode when given (spec §2: /notifications/{id}/edit is the same form). */
  notification?: Notification;
  /** A new notification's type, e.g. from the dashboard's "+ New" recurring link (/notifications/new?type=RECURRING). */
  initialType?: NotificationType;
}

/** "12/50": how much of a limit is used; red past the limit. */
function Counter({ length, max, testId }: { length: number; max: number; testId: string }) {
  return (
    <span className={cn('tabular-nums', length > max && 'font-medium text-red-700')} data-testid={testId}>
      {length}/{max}
    </span>
  );
}

/** What the submit was for: save (a draft, or scheduled when a time is given), schedule (a time is required), or send now. */
type Intent = 'save' | 'schedule' | 'send';

/**
 * Spec §2 Notification form (create and edit) with its live preview. Submits
 * the §3 payload with status "DRAFT"; the server makes it "scheduled" when a
 * schedule time is given. A one-time draft can also be scheduled or sent
 * from here (issue 11), with the list's Send Now confirm and alert (spec §2).
 */
export function NotificationForm({ site, notification, initialType }: NotificationFormProps) {
  const navigate = useNavigate();
  const timeZone = site?.settings.timezone ?? 'UTC';
  const schema = useMemo(() => notificationFormSchema(timeZone), [timeZone]);
  const form = useForm<NotificationFormValues>({
    resolver: zodResolver(schema),
    defaultValues: notification ? toFormValues(notification, timeZone) : { ...DEFAULT_FORM_VALUES, type: initialType ?? DEFAULT_FORM_VALUES.type },
  });
  const { errors } = form.formState;
  const values = useWatch({ control: form.control }) as NotificationFormValues;
  const create = useCreateNotificationMutation();
  const update = useUpdateNotificationMutation();
  const command = useNotificationCommandMutation();
  const queryClient = useQueryClient();
  const pending = create.isPending || update.isPending || command.isPending;
  const bounds = scheduleBounds(timeZone);
  const intent = useRef<Intent>('save');
  /** The intent being carried out, for the button that shows it working. */
  const [running, setRunning] = useState<Intent | null>(null);
  // Schedule and Send Now are for one-time notifications that are (or will be) drafts.
  const canSendFromHere = values.type === 'ONE_TIME' && (!notification || notification.status === 'draft' || notification.status === 'scheduled');

  /** Issue 11: a target of nobody warns before it is saved or sent (when its reach is known). */
  function reachConfirmed(segmentId: string): boolean {
    if (!site) return true;
    const reach = queryClient.getQueryData<Reach>(audienceKey(site.id, segmentId || null));
    return reach?.count !== 0 || confirmAction('This notification would reach 0 subscribers right now. Save it anyway?');
  }

  const submit = form.handleSubmit(async (formValues) => {
    if (!site) return;
    const chosen = intent.current;
    intent.current = 'save';
    setRunning(chosen);
    try {
      await carryOut(chosen, formValues);
    } finally {
      setRunning(null);
    }
  });

  async function carryOut(chosen: Intent, formValues: NotificationFormValues): Promise<void> {
    if (!site) return;
    if (chosen === 'schedule' && !formValues.scheduled_at) {
      form.setError('scheduled_at', { message: 'Pick a time to schedule it for' }, { shouldFocus: true });
      return;
    }
    if (chosen === 'send' && !confirmAction('Are you sure you want to send this notification?')) return;
    if (!reachConfirmed(formValues.segment_id)) return;
    // Sent now, it goes out as a draft first (the server sends drafts only).
    const body = toNotificationBody(chosen === 'send' ? { ...formValues, scheduled_at: '' } : formValues, form.formState.defaultValues as NotificationFormValues);
    let saved: Notification;
    try {
      saved = notification ? await update.mutateAsync({ id: notification.id, changes: body }) : await create.mutateAsync({ siteId: site.id, body });
    } catch (error) {
      notify(errorMessage(error, notification ? 'Failed to update notification' : 'Failed to create notification'));
      return;
    }
    if (chosen !== 'send') {
      notify(notification ? 'Notification updated successfully!' : 'Notification created successfully!');
      void navigate('/notifications');
      return;
    }
    try {
      await command.mutateAsync({ id: saved.id, command: 'send' });
    } catch (error) {
      // Saved as a draft: its page says so and offers Send Now again.
      notify(errorMessage(error, 'Failed to send notification'));
      void navigate(`/notifications/${encodeURIComponent(saved.id)}`);
      return;
    }
    notify('Notification sent successfully!');
    // Its page shows the send as it happens: accepted, failed, pending.
    void navigate(`/notifications/${encodeURIComponent(saved.id)}`);
  }

  return (
    <form
      noValidate
      aria-label={notification ? 'Edit notification' : 'Create notification'}
      onSubmit={(event) => {
        // Spec §2: without a site there is nothing to send to.
        if (!site) {
          event.preventDefault();
          notify('Please select a site');
          return;
        }
        void submit(event);
      }}
      className="flex flex-col gap-6"
    >
      {!site ? <Alert tone="warning" title="Please select a site">Choose a site in the sidebar (or create one) before saving a notification.</Alert> : null}

      <div className="grid gap-6 lg:grid-cols-5">
        <div className="flex min-w-0 flex-col gap-6 lg:col-span-3">
          <Card>
            <CardHeader>
              <CardTitle>Type and audience</CardTitle>
            </CardHeader>
            <CardContent className="grid gap-5 sm:grid-cols-2">
              <Field
                label="Notification Type"
                error={errors.type?.message}
                tooltip={NOTIFICATION_HELP.type}
              >
                {(control) => (
                  <Select {...control} {...form.register('type')} disabled={notification ? notification.status !== 'draft' : false}>
                    {NOTIFICATION_TYPES.map((type) => (
                      <option key={type} value={type}>
                        {TYPE_LABELS[type]}
                      </option>
                    ))}
                  </Select>
                )}
              </Field>
              <Controller
                control={form.control}
                name="segment_id"
                render={({ field, fieldState }) => (
                  <SegmentSelectField
                    siteId={site?.id}
                    showReach
                    tooltip={NOTIFICATION_HELP.segment}
                    name={field.name}
                    value={field.value}
                    onChange={field.onChange}
                    onBlur={field.onBlur}
                    error={fieldState.error?.message}
                  />
                )}
              />
            </CardContent>
          </Card>

          <Card>
            <CardHeader>
              <CardTitle>Content</CardTitle>
              <CardDescription>What subscribers see, and where a click takes them.</CardDescription>
            </CardHeader>
            <CardContent className="flex flex-col gap-5">
              <Field label="Title" required tooltip={NOTIFICATION_HELP.title} error={errors.title?.message} hint={<Counter length={values.title.length} max={NOTIFICATION_TITLE_MAX} testId="title-counter" />}>
                {(control) => <Input {...control} {...form.register('title')} placeholder="Flash sale: 50% off today" autoComplete="off" />}
              </Field>
              <Field
                label="Message"
                required
                tooltip={NOTIFICATION_HELP.message}
                error={errors.message?.message}
                hint={<Counter length={values.message.length} max={NOTIFICATION_MESSAGE_MAX} testId="message-counter" />}
              >
                {(control) => <Textarea {...control} {...form.register('message')} rows={3} placeholder="Everything in the store is half price until midnight." />}
              </Field>
              <Field
                label="Destination URL"
                required
                tooltip={NOTIFICATION_HELP.destinationUrl}
                error={errors.destination_url?.message}
                hint="The complete page address a click opens, starting with https://"
              >
                {(control) => <Input {...control} {...form.register('destination_url')} type="url" inputMode="url" placeholder="https://example.com/sale" />}
              </Field>

              <Controller
                control={form.control}
                name="icon_url"
                render={({ field, fieldState }) => (
                  <ImagePicker label="Icon" value={field.value} onChange={field.onChange} error={fieldState.error?.message} hint="Recommended size: 192x192 pixels (square)." />
                )}
              />

              <div className="flex flex-col gap-4 border-t border-slate-200 pt-5">
                <Controller
                  control={form.control}
                  name="image_enabled"
                  render={({ field }) => (
                    <Switch
                      label="Large Image"
                      description="A big picture under the text (Chrome and Android)."
                      tooltip={NOTIFICATION_HELP.largeImage}
                      checked={field.value}
                      onCheckedChange={field.onChange}
                    />
                  )}
                />
                {values.image_enabled ? (
                  <Controller
                    control={form.control}
                    name="image_url"
                    render={({ field, fieldState }) => (
                      <ImagePicker label="Large Image" hideLabel value={field.value} onChange={field.onChange} error={fieldState.error?.message} hint="Recommended size: 1200x628 pixels." />
                    )}
                  />
                ) : null}
              </div>

              <div className="flex flex-col gap-4 border-t border-slate-200 pt-5">
                <Controller
                  control={form.control}
                  name="actions_enabled"
                  render={({ field }) => (
                    <Switch
                      label="Action Buttons"
                      tooltip={NOTIFICATION_HELP.actionButtons}
                      description={`Up to ${NOTIFICATION_ACTIONS_MAX} buttons, each opening its own page.`}
                      checked={field.value}
                      onCheckedChange={(on) => {
                        field.onChange(on);
                        if (on && form.getValues('actions').length === 0) form.setValue('actions', [{ ...EMPTY_ACTION }]);
                      }}
                    />
                  )}
                />
                {values.actions_enabled ? <ActionButtonsEditor control={form.control} register={form.register} errors={errors.actions} /> : null}
              </div>
            </CardContent>
          </Card>

          <Card>
            <CardHeader>
              <CardTitle>Scheduling</CardTitle>
              <CardDescription>
                Times are in the site&apos;s timezone, <span className="font-medium text-slate-800">{timeZone}</span>.
              </CardDescription>
            </CardHeader>
            <CardContent className="grid gap-5 sm:grid-cols-2">
              {values.type === 'ONE_TIME' ? (
                <Field
                  label={`Schedule Time (${timeZone})`}
                  tooltip={NOTIFICATION_HELP.scheduledAt}
                  error={errors.scheduled_at?.message}
                  hint="Leave empty to save as draft, or schedule for a specific time"
                  className="sm:col-span-2"
                >
                  {(control) => <Input {...control} {...form.register('scheduled_at')} type="datetime-local" min={bounds.min} max={bounds.max} />}
                </Field>
              ) : null}
              <LocalTimeFields control={form.control} register={form.register} errors={errors} values={values} timeZone={timeZone} />

              {values.type === 'RECURRING' ? (
                <>
                  <Field label="Repeat" tooltip={NOTIFICATION_HELP.recurringInterval} error={errors.interval_type?.message}>
                    {(control) => (
                      <Select {...control} {...form.register('interval_type')}>
                        {RECURRING_INTERVALS.map((interval) => (
                          <option key={interval} value={interval}>
                            {INTERVAL_LABELS[interval]}
                          </option>
                        ))}
                      </Select>
                    )}
                  </Field>
                  <Field label="Repeat Every" required tooltip={NOTIFICATION_HELP.recurringEvery} error={errors.interval_value?.message}>
                    {(control) => (
                      <span className="flex items-center gap-2">
                        <span className="w-28">
                          <Input {...control} {...form.register('interval_value')} type="number" inputMode="numeric" min={1} step={1} />
                        </span>
                        <span className="text-sm text-slate-700">{intervalUnit(values.interval_type, Number.parseInt(values.interval_value, 10) || 0)}</span>
                      </span>
                    )}
                  </Field>
                  <Field label={`Start Date & Time (${timeZone})`} required tooltip={NOTIFICATION_HELP.recurringStart} error={errors.start_date?.message}>
                    {(control) => <Input {...control} {...form.register('start_date')} type="datetime-local" />}
                  </Field>
                  <Field
                    label={`End Date & Time (${timeZone})`}
                    tooltip={NOTIFICATION_HELP.recurringEnd}
                    error={errors.end_date?.message}
                    hint="Leave empty to continue indefinitely"
                  >
                    {(control) => <Input {...control} {...form.register('end_date')} type="datetime-local" min={values.start_date || undefined} />}
                  </Field>
                </>
              ) : null}

              {values.type === 'TRIGGERED' ? (
                <>
                  <div className="sm:col-span-2">
                    <Alert tone="info">
                      Triggered notifications are sent automatically when the events configured in the{' '}
                      <Link to="/settings?tab=automation" className="font-medium underline hover:no-underline">
                        Automation section
                      </Link>{' '}
                      happen. Name the event and how long to wait after it.
                    </Alert>
                  </div>
                  <Field label="Event Name" required tooltip={NOTIFICATION_HELP.triggered} error={errors.trigger_event?.message} hint="Letters, digits, _ . : and - only, e.g. cart_abandoned">
                    {(control) => <Input {...control} {...form.register('trigger_event')} placeholder="cart_abandoned" autoComplete="off" />}
                  </Field>
                  <Field label="Delay (minutes)" error={errors.trigger_delay?.message} hint="0 sends it as soon as the event happens.">
                    {(control) => <Input {...control} {...form.register('trigger_delay')} type="number" inputMode="numeric" min={0} step={1} />}
                  </Field>
                </>
              ) : null}
            </CardContent>
          </Card>

          {values.type === 'ONE_TIME' ? <AbTestCard control={form.control} register={form.register} errors={errors} values={values} /> : null}
          <DeliveryOptionsCard control={form.control} register={form.register} errors={errors} values={values} />
        </div>

        <aside className="min-w-0 lg:col-span-2" aria-label="Live preview">
          <Card className="p-4 sm:p-5 lg:sticky lg:top-20">
            <NotificationPreview
              content={{
                title: values.title,
                message: values.message,
                destinationUrl: values.destination_url,
                iconUrl: values.icon_url || site?.settings.icon || '',
                imageUrl: values.image_enabled ? values.image_url : '',
                actions: values.actions_enabled ? values.actions : [],
                siteUrl: site?.url,
              }}
            />
          </Card>
        </aside>
      </div>

      <div className="flex flex-wrap items-center justify-end gap-3 border-t border-slate-200 pt-5">
        {site ? (
          <SendTestButton
            site={site}
            notificationId={notification?.id}
            dirty={form.formState.isDirty}
            content={async () => {
              // Only the content has to be right for a test; the schedule may still be empty.
              if (!(await form.trigger(['title', 'message', 'destination_url', 'icon_url', 'image_url', 'actions']))) return null;
              const { title, message, destination_url, icon_url, image_url, actions } = toNotificationBody(form.getValues());
              return { title, message, destination_url, icon_url: icon_url ?? site.settings.icon, image_url, actions };
            }}
          />
        ) : null}
        <ButtonLink to="/notifications" variant="secondary">
          Cancel
        </ButtonLink>
        <Button type="submit" variant={canSendFromHere ? 'secondary' : 'primary'} loading={running === 'save'} disabled={pending} data-testid="save-notification">
          {notification ? (pending ? 'Saving...' : 'Save Changes') : pending ? 'Creating...' : 'Create Notification'}
        </Button>
        {canSendFromHere ? (
          <>
            <Button
              type="submit"
              variant="secondary"
              disabled={pending}
              loading={running === 'schedule'}
              onClick={() => (intent.current = 'schedule')}
              icon={<CalendarClock className="size-4" aria-hidden="true" />}
              data-testid="schedule-notification"
            >
              Schedule
            </Button>
            <Button type="submit" disabled={pending} loading={running === 'send'} onClick={() => (intent.current = 'send')} icon={<Send className="size-4" aria-hidden="true" />} data-testid="send-notification">
              Send Now
            </Button>
          </>
        ) : null}
      </div>
    </form>
  );
}

interface ActionButtonsEditorProps {
  control: Control<NotificationFormValues>;
  register: UseFormRegister<NotificationFormValues>;
  errors: FieldErrors<NotificationFormValues>['actions'];
}

/** Up to two {title, url} buttons (spec §9), sent as `actions`. */
function ActionButtonsEditor({ control, register, errors }: ActionButtonsEditorProps) {
  const { fields, append, remove } = useFieldArray({ control, name: 'actions' });
  return (
    <div className="flex flex-col gap-4">
      {fields.map((field, index) => (
        <fieldset key={field.id} className="grid gap-3 rounded-lg border border-slate-200 p-3 sm:grid-cols-[1fr_1.5fr_auto] sm:items-start">
          <legend className="px-1 text-xs font-semibold tracking-wide text-slate-600 uppercase">Button {index + 1}</legend>
          <Field label={`Button ${index + 1} Text`} error={errors?.[index]?.title?.message}>
            {(props) => <Input {...props} {...register(`actions.${index}.title`)} placeholder="Shop now" autoComplete="off" />}
          </Field>
          <Field label={`Button ${index + 1} URL`} error={errors?.[index]?.url?.message}>
            {(props) => <Input {...props} {...register(`actions.${index}.url`)} type="url" inputMode="url" placeholder="https://example.com/shop" />}
          </Field>
          <Button
            variant="danger-ghost"
            size="sm"
            className="justify-self-end sm:mt-7"
            onClick={() => remove(index)}
            icon={<Trash2 className="size-4" aria-hidden="true" />}
            aria-label={`Remove button ${index + 1}`}
          >
            <span className="sm:sr-only">Remove</span>
          </Button>
        </fieldset>
      ))}
      {fields.length < NOTIFICATION_ACTIONS_MAX ? (
        <Button variant="secondary" size="sm" className="self-start" onClick={() => append({ ...EMPTY_ACTION })} icon={<Plus className="size-4" aria-hidden="true" />}>
          Add Button
        </Button>
      ) : (
        <p className="flex items-center gap-1.5 text-xs text-slate-600">
          <Info className="size-3.5" aria-hidden="true" /> At most {NOTIFICATION_ACTIONS_MAX} action buttons.
        </p>
      )}
    </div>
  );
}
