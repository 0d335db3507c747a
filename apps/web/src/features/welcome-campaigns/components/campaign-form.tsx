import { CAMPAIGN_STEP_MESSAGE_MAX, CAMPAIGN_STEP_TITLE_MAX, CAMPAIGN_STEPS_IDEAL, CAMPAIGN_STEPS_MAX, NOTIFICATION_ACTIONS_MAX } from '@herald/contracts';
import { zodResolver } from '@hookform/resolvers/zod';
import { Plus, Trash2, UserPlus } from 'lucide-react';
import { useState } from 'react';
import { Controller, useFieldArray, useForm, useWatch, type Control, type FieldErrors, type UseFormRegister } from 'react-hook-form';
import { ImagePicker } from '../../../components/image-picker';
import { SegmentSelectField } from '../../../components/segment-select';
import { Button, ButtonLink, Card, CardContent, CardDescription, CardHeader, CardTitle, Field, Input, Select, Switch, Textarea } from '../../../components/ui';
import { campaignFormSchema, emptyStep, type CampaignFormValues } from '../campaign-form-schema';
import { CampaignPreview, stepTiming } from './campaign-preview';

interface CampaignFormProps {
  defaultValues: CampaignFormValues;
  submitLabel: string;
  submitting: boolean;
  /** The site whose segments the target select offers. */
  siteId: string;
  site: { url: string; icon: string | null };
  onSubmit: (values: CampaignFormValues) => void;
}

/**
 * Spec §2 New campaign form (also the edit form): campaign settings, a
 * timeline of notifications that begins immediately after subscription, and
 * a preview with a step selector. Save stays disabled until there is a name.
 */
export function CampaignForm({ defaultValues, submitLabel, submitting, siteId, site, onSubmit }: CampaignFormProps) {
  const form = useForm<CampaignFormValues>({ resolver: zodResolver(campaignFormSchema), defaultValues, mode: 'onTouched' });
  const { control, register } = form;
  const { errors } = form.formState;
  const steps = useFieldArray({ control, name: 'steps' });
  // Watch only what this level shows; each step and the preview watch their own values.
  const name = useWatch({ control, name: 'name' });
  const utmEnabled = useWatch({ control, name: 'utm_enabled' });
  const [previewStep, setPreviewStep] = useState(0);
  const nameGiven = name.trim() !== '';

  const submit = form.handleSubmit((valid) => onSubmit(valid));

  return (
    <form onSubmit={(event) => void submit(event)} noValidate aria-label="Welcome campaign" className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_20rem] xl:grid-cols-[minmax(0,1fr)_22rem] [&_:is(input,textarea,select,button)]:scroll-mt-24">
      <div className="flex min-w-0 flex-col gap-6">
        <Card>
          <CardHeader>
            <CardTitle>Campaign settings</CardTitle>
            <CardDescription>A welcome campaign starts for each person who subscribes while it is active.</CardDescription>
          </CardHeader>
          <CardContent className="grid gap-5">
            <Controller
              control={control}
              name="is_active"
              render={({ field }) => (
                <Switch
                  label="Active"
                  checked={field.value}
                  onCheckedChange={field.onChange}
                  description="Only one campaign can be active at a time: turning this one on turns the others off."
                />
              )}
            />
            <Field label="Campaign Name" required error={errors.name?.message}>
              {(c) => <Input {...c} {...register('name')} autoComplete="off" placeholder="e.g. Welcome series" />}
            </Field>
            <Controller
              control={control}
              name="icon_url"
              render={({ field, fieldState }) => (
                <ImagePicker
                  label="Campaign Icon"
                  value={field.value}
                  onChange={field.onChange}
                  error={fieldState.error?.message}
                  hint="Shown on notifications without an icon of their own. Recommended size: 192x192 pixels (square)."
                />
              )}
            />
            <Controller
              control={control}
              name="segment_id"
              render={({ field }) => (
                <SegmentSelectField
                  siteId={siteId}
                  name={field.name}
                  value={field.value}
                  onChange={field.onChange}
                  onBlur={field.onBlur}
                  hint="Who enters the campaign when they subscribe."
                />
              )}
            />
            <div className="flex flex-col gap-4 rounded-lg border border-slate-200 p-4">
              <Controller
                control={control}
                name="utm_enabled"
                render={({ field }) => (
                  <Switch
                    label="UTM parameters"
                    checked={field.value}
                    onCheckedChange={field.onChange}
                    description="Added to every link in this campaign, so your analytics can tell its visits apart."
                  />
                )}
              />
              {utmEnabled ? (
                <div className="grid gap-4 sm:grid-cols-3">
                  <Field label="utm_source" error={errors.utm_source?.message}>
                    {(c) => <Input {...c} {...register('utm_source')} placeholder="herald" autoComplete="off" />}
                  </Field>
                  <Field label="utm_medium" error={errors.utm_medium?.message}>
                    {(c) => <Input {...c} {...register('utm_medium')} placeholder="push" autoComplete="off" />}
                  </Field>
                  <Field label="utm_campaign" error={errors.utm_campaign?.message}>
                    {(c) => <Input {...c} {...register('utm_campaign')} placeholder="welcome" autoComplete="off" />}
                  </Field>
                </div>
              ) : null}
            </div>
          </CardContent>
        </Card>

        <Card>
          <CardHeader>
            <CardTitle>Notification sequence</CardTitle>
            <CardDescription>
              Each notification is sent after its delay, counted from the one before. {CAMPAIGN_STEPS_IDEAL.min}–{CAMPAIGN_STEPS_IDEAL.max} notifications
              work best.
            </CardDescription>
          </CardHeader>
          <CardContent>
            <ol className="relative flex flex-col gap-6 border-l-2 border-indigo-100 pl-5 sm:pl-7" aria-label="Timeline">
              <li className="relative">
                <span className="absolute top-0 -left-[2.05rem] flex size-7 items-center justify-center rounded-full bg-indigo-600 text-white sm:-left-[2.55rem]" aria-hidden="true">
                  <UserPlus className="size-4" />
                </span>
                <p className="text-sm font-medium text-slate-900">Someone subscribes</p>
                <p className="text-xs text-slate-600">The timeline begins immediately after subscription.</p>
              </li>
              {steps.fields.map((field, index) => (
                <li key={field.id} className="relative" onFocusCapture={() => setPreviewStep(index)}>
                  <span
                    className="absolute top-3 -left-[2.05rem] flex size-7 items-center justify-center rounded-full border-2 border-indigo-600 bg-white text-xs font-semibold text-indigo-700 sm:-left-[2.55rem]"
                    aria-hidden="true"
                  >
                    {index + 1}
                  </span>
                  <StepFields
                    index={index}
                    control={control}
                    register={register}
                    errors={errors}
                    canRemove={steps.fields.length > 1}
                    onRemove={() => {
                      steps.remove(index);
                      setPreviewStep((current) => Math.max(0, current >= index ? current - 1 : current));
                    }}
                  />
                </li>
              ))}
            </ol>
            {errors.steps?.root?.message || errors.steps?.message ? (
              <p className="mt-3 text-xs font-medium text-red-700">{errors.steps.root?.message ?? errors.steps.message}</p>
            ) : null}
            <div className="mt-6 flex flex-wrap items-center gap-3">
              <Button
                variant="secondary"
                disabled={steps.fields.length >= CAMPAIGN_STEPS_MAX}
                onClick={() => {
                  steps.append(emptyStep(false));
                  setPreviewStep(steps.fields.length);
                }}
              >
                + Add Notification
              </Button>
              <p className="text-xs text-slate-600">
                {steps.fields.length} of {CAMPAIGN_STEPS_MAX} notifications
              </p>
            </div>
          </CardContent>
        </Card>

        <div className="flex flex-wrap items-center justify-end gap-3">
          <ButtonLink to="/campaigns" variant="secondary">
            Cancel
          </ButtonLink>
          <Button type="submit" disabled={!nameGiven} loading={submitting}>
            {submitLabel}
          </Button>
        </div>
      </div>

      <aside className="min-w-0 lg:sticky lg:top-6 lg:self-start">
        <Card>
          <CardContent>
            <WatchedPreview control={control} selected={previewStep} onSelect={setPreviewStep} site={site} />
          </CardContent>
        </Card>
      </aside>
    </form>
  );
}

/** The preview, re-rendered as the steps change (without re-rendering the whole form). */
function WatchedPreview({ control, selected, onSelect, site }: { control: Control<CampaignFormValues>; selected: number; onSelect: (index: number) => void; site: CampaignFormProps['site'] }) {
  const steps = useWatch({ control, name: 'steps' });
  const campaignIconUrl = useWatch({ control, name: 'icon_url' });
  return <CampaignPreview steps={steps} selected={selected} onSelect={onSelect} campaignIconUrl={campaignIconUrl} siteIconUrl={site.icon} siteUrl={site.url} />;
}

interface StepFieldsProps {
  index: number;
  control: Control<CampaignFormValues>;
  register: UseFormRegister<CampaignFormValues>;
  errors: FieldErrors<CampaignFormValues>;
  canRemove: boolean;
  onRemove: () => void;
}

/** One notification of the sequence. */
function StepFields({ index, control, register, errors, canRemove, onRemove }: StepFieldsProps) {
  const stepErrors = errors.steps?.[index];
  const step = useWatch({ control, name: `steps.${index}` });
  const actions = useFieldArray({ control, name: `steps.${index}.actions` });
  const number = index + 1;
  const headingId = `campaign-step-${number}-heading`;

  return (
    <section aria-labelledby={headingId} className="rounded-xl border border-slate-200 bg-slate-50/60 p-4 sm:p-5" data-testid={`campaign-step-${number}`}>
      <div className="mb-4 flex flex-wrap items-start justify-between gap-2">
        <div>
          <h3 id={headingId} className="text-sm font-semibold text-slate-900">
            Notification {number}
          </h3>
          <p className="text-xs text-slate-600">{stepTiming(step, index)}</p>
        </div>
        {canRemove ? (
          <Button variant="ghost" size="sm" icon={<Trash2 className="size-4" aria-hidden="true" />} onClick={onRemove} aria-label={`Remove Notification ${number}`}>
            Remove Notification
          </Button>
        ) : null}
      </div>

      <div className="grid gap-4">
        {index > 0 ? (
          <fieldset className="flex flex-col gap-1.5">
            <legend className="mb-1.5 text-sm font-medium text-slate-800">Send after</legend>
            <div className="flex flex-wrap items-center gap-2">
              <div className="w-24">
                <Input
                  {...register(`steps.${index}.delay_value`)}
                  type="number"
                  min={0}
                  step={1}
                  inputMode="numeric"
                  aria-label={`Delay of notification ${number}`}
                  aria-invalid={stepErrors?.delay_value ? true : undefined}
                  aria-describedby={stepErrors?.delay_value ? `campaign-step-${number}-delay-error` : undefined}
                />
              </div>
              <Select {...register(`steps.${index}.delay_unit`)} aria-label={`Delay unit of notification ${number}`} wrapperClassName="w-32">
                <option value="minutes">minutes</option>
                <option value="hours">hours</option>
                <option value="days">days</option>
              </Select>
            </div>
            <p className="text-xs text-slate-600">Counted from notification {index}.</p>
            {stepErrors?.delay_value?.message ? (
              <p id={`campaign-step-${number}-delay-error`} className="text-xs font-medium text-red-700">
                {stepErrors.delay_value.message}
              </p>
            ) : null}
          </fieldset>
        ) : null}

        <Field label="Title" required error={stepErrors?.title?.message} hint={`${(step?.title ?? '').length}/${CAMPAIGN_STEP_TITLE_MAX}`}>
          {(c) => <Input {...c} {...register(`steps.${index}.title`)} maxLength={CAMPAIGN_STEP_TITLE_MAX} autoComplete="off" />}
        </Field>
        <Field label="Message" required error={stepErrors?.message?.message} hint={`${(step?.message ?? '').length}/${CAMPAIGN_STEP_MESSAGE_MAX}`}>
          {(c) => <Textarea {...c} {...register(`steps.${index}.message`)} maxLength={CAMPAIGN_STEP_MESSAGE_MAX} rows={3} />}
        </Field>
        <Field label="Destination URL" required error={stepErrors?.destination_url?.message}>
          {(c) => <Input {...c} {...register(`steps.${index}.destination_url`)} type="url" inputMode="url" placeholder="https://example.com/welcome" />}
        </Field>
        <Controller
          control={control}
          name={`steps.${index}.icon_url`}
          render={({ field, fieldState }) => (
            <ImagePicker label="Icon" value={field.value} onChange={field.onChange} error={fieldState.error?.message} hint="Leave empty to use the campaign icon." />
          )}
        />

        <Controller
          control={control}
          name={`steps.${index}.large_image`}
          render={({ field }) => (
            <Switch label="Large image" checked={field.value} onCheckedChange={field.onChange} description="A wide picture under the text (1200×628 px recommended)." />
          )}
        />
        {step?.large_image ? (
          <Controller
            control={control}
            name={`steps.${index}.image_url`}
            render={({ field, fieldState }) => (
              // The switch right above names it; the picker's own name stays for assistive technology.
              <ImagePicker label="Image" hideLabel value={field.value} onChange={field.onChange} error={fieldState.error?.message} />
            )}
          />
        ) : null}

        <Controller
          control={control}
          name={`steps.${index}.actions_enabled`}
          render={({ field }) => (
            <Switch
              label="Action buttons"
              checked={field.value}
              onCheckedChange={(on) => {
                field.onChange(on);
                if (on && actions.fields.length === 0) actions.append({ title: '', url: '' });
              }}
              description={`Up to ${NOTIFICATION_ACTIONS_MAX} buttons, each opening its own link.`}
            />
          )}
        />
        {step?.actions_enabled ? (
          <div className="flex flex-col gap-3">
            {actions.fields.map((action, actionIndex) => (
              <div key={action.id} className="grid gap-3 rounded-lg border border-slate-200 bg-white p-3 sm:grid-cols-[1fr_1.4fr_auto] sm:items-start">
                <Field label={`Button ${actionIndex + 1} text`} error={stepErrors?.actions?.[actionIndex]?.title?.message}>
                  {(c) => <Input {...c} {...register(`steps.${index}.actions.${actionIndex}.title`)} maxLength={30} autoComplete="off" />}
                </Field>
                <Field label={`Button ${actionIndex + 1} URL`} error={stepErrors?.actions?.[actionIndex]?.url?.message}>
                  {(c) => <Input {...c} {...register(`steps.${index}.actions.${actionIndex}.url`)} type="url" inputMode="url" placeholder="https://example.com/offer" />}
                </Field>
                <Button variant="ghost" size="sm" className="sm:mt-7" onClick={() => actions.remove(actionIndex)} aria-label={`Remove button ${actionIndex + 1} of notification ${number}`}>
                  <Trash2 className="size-4" aria-hidden="true" />
                </Button>
              </div>
            ))}
            {actions.fields.length < NOTIFICATION_ACTIONS_MAX ? (
              <Button variant="secondary" size="sm" className="self-start" icon={<Plus className="size-4" aria-hidden="true" />} onClick={() => actions.append({ title: '', url: '' })}>
                Add button
              </Button>
            ) : null}
          </div>
        ) : null}
      </div>
    </section>
  );
}
