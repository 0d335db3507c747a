import { CURRENCIES, LANGUAGES, SETTINGS_TIMEZONES, type Site } from '@herald/contracts';
import { zodResolver } from '@hookform/resolvers/zod';
import { useForm } from 'react-hook-form';
import { Button, Card, CardContent, CardDescription, CardFooter, CardHeader, CardTitle, Field, Input, Select } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { SETTINGS_HELP } from '../../../lib/help-texts';
import { notify } from '../../../lib/dialogs';
import { useUpdateSiteMutation } from '../api';
import { siteSettingsForm, type SiteSettingsForm } from '../site-form-schema';

function formValues(site: Site): SiteSettingsForm {
  return {
    name: site.name,
    url: site.url,
    icon: site.settings.icon ?? '',
    language: site.settings.language,
    timezone: site.settings.timezone,
    valueCurrency: site.settings.valueCurrency as SiteSettingsForm['valueCurrency'],
    valuePerSubscriber: site.settings.valuePerSubscriber,
    valuePerClick: site.settings.valuePerClick,
  };
}

/**
 * The settings list offers 8 timezones (spec §2) but a site may have been
 * created with one of the 10 create-time choices; keep that one selectable
 * rather than silently changing it on save.
 */
function timezoneOptions(current: string): { value: string; label: string }[] {
  const options: { value: string; label: string }[] = [...SETTINGS_TIMEZONES];
  if (!options.some((o) => o.value === current)) options.push({ value: current, label: current });
  return options;
}

/** Settings → General (spec §2): identity, language, timezone and value goals; saved with PATCH /sites/{id}. */
export function GeneralSettingsForm({ site }: { site: Site }) {
  const mutation = useUpdateSiteMutation();
  const form = useForm<SiteSettingsForm>({ resolver: zodResolver(siteSettingsForm), defaultValues: formValues(site) });
  const { errors } = form.formState;

  const onSubmit = form.handleSubmit((values) =>
    mutation.mutate(
      {
        id: site.id,
        changes: {
          name: values.name.trim(),
          url: values.url.trim(),
          settings: {
            icon: values.icon.trim() || null,
            language: values.language,
            timezone: values.timezone,
            valueCurrency: values.valueCurrency,
            valuePerSubscriber: values.valuePerSubscriber,
            valuePerClick: values.valuePerClick,
          },
        },
      },
      {
        onSuccess: () => notify('Settings updated successfully!'),
        onError: (error) => notify(errorMessage(error, 'Failed to update settings')),
      },
    ),
  );

  return (
    <form onSubmit={(event) => void onSubmit(event)} noValidate aria-label="General settings">
      <Card>
        <CardHeader>
          <CardTitle>Site details</CardTitle>
          <CardDescription>How your site is identified in notifications and reports.</CardDescription>
        </CardHeader>
        <CardContent className="grid gap-5 sm:grid-cols-2">
          <Field label="Site Name" required tooltip={SETTINGS_HELP.siteName} error={errors.name?.message}>
            {(control) => <Input {...control} {...form.register('name')} autoComplete="off" />}
          </Field>
          <Field label="Website URL" required tooltip={SETTINGS_HELP.websiteUrl} error={errors.url?.message}>
            {(control) => <Input {...control} {...form.register('url')} type="url" inputMode="url" />}
          </Field>
          <Field
            label="Notification Icon"
            error={errors.icon?.message}
            hint="URL of the default icon shown with notifications (192×192 px recommended)."
            tooltip={SETTINGS_HELP.icon}
            className="sm:col-span-2"
          >
            {(control) => <Input {...control} {...form.register('icon')} type="url" inputMode="url" placeholder="https://example.com/icon.png" />}
          </Field>
          <Field label="Primary Language" error={errors.language?.message} tooltip={SETTINGS_HELP.language}>
            {(control) => (
              <Select {...control} {...form.register('language')}>
                {LANGUAGES.map((language) => (
                  <option key={language.code} value={language.code}>
                    {language.label} ({language.code})
                  </option>
                ))}
              </Select>
            )}
          </Field>
          <Field label="Timezone" error={errors.timezone?.message} tooltip={SETTINGS_HELP.timezone}>
            {(control) => (
              <Select {...control} {...form.register('timezone')}>
                {timezoneOptions(site.settings.timezone).map((zone) => (
                  <option key={zone.value} value={zone.value}>
                    {zone.label}
                  </option>
                ))}
              </Select>
            )}
          </Field>
        </CardContent>

        <div className="border-t border-slate-200 px-5 py-4 sm:px-6">
          <h3 className="text-base font-semibold text-slate-900">Value Goals</h3>
          <p className="mt-1 text-sm text-slate-600">
            Estimate what your notifications are worth: new subscribers × value per subscriber + clicks × value per click.
          </p>
        </div>
        <CardContent className="grid gap-5 pt-0 sm:grid-cols-3">
          <Field label="Currency" tooltip={SETTINGS_HELP.currency} error={errors.valueCurrency?.message}>
            {(control) => (
              <Select {...control} {...form.register('valueCurrency')}>
                {CURRENCIES.map((currency) => (
                  <option key={currency} value={currency}>
                    {currency}
                  </option>
                ))}
              </Select>
            )}
          </Field>
          <Field
            label="Value per New Subscriber"
            error={errors.valuePerSubscriber?.message}
            tooltip={SETTINGS_HELP.valuePerSubscriber}
          >
            {(control) => (
              <Input {...control} {...form.register('valuePerSubscriber', { valueAsNumber: true })} type="number" inputMode="decimal" step={0.01} min={0} />
            )}
          </Field>
          <Field label="Value per Click" error={errors.valuePerClick?.message} tooltip={SETTINGS_HELP.valuePerClick}>
            {(control) => (
              <Input {...control} {...form.register('valuePerClick', { valueAsNumber: true })} type="number" inputMode="decimal" step={0.01} min={0} />
            )}
          </Field>
        </CardContent>
        <CardFooter>
          <Button type="submit" loading={mutation.isPending} data-testid="save-settings">
            {mutation.isPending ? 'Saving...' : 'Save Settings'}
          </Button>
        </CardFooter>
      </Card>
    </form>
  );
}
