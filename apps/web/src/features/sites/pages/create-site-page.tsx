import { CREATE_SITE_TIMEZONES } from '@herald/contracts';
import { zodResolver } from '@hookform/resolvers/zod';
import { ArrowLeft, KeyRound, Code2 } from 'lucide-react';
import { useForm } from 'react-hook-form';
import { Link, useNavigate } from 'react-router';
import { HeraldLogo } from '../../../components/herald-logo';
import { Button, ButtonLink, Card, CardContent, CardFooter, Field, Input, Select } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { notify } from '../../../lib/dialogs';
import { useCreateSiteMutation } from '../api';
import { createSiteForm, type CreateSiteForm } from '../site-form-schema';

/** Spec §2 Create Site (/sites/new): outside the shell, so a first-time owner sees only this. */
export function CreateSitePage() {
  const navigate = useNavigate();
  const mutation = useCreateSiteMutation();
  const form = useForm<CreateSiteForm>({
    resolver: zodResolver(createSiteForm),
    defaultValues: { name: '', url: '', icon: '', timezone: 'UTC' },
  });
  const { errors } = form.formState;

  const onSubmit = form.handleSubmit((values) =>
    mutation.mutate(
      { name: values.name.trim(), url: values.url.trim(), settings: { icon: values.icon.trim() || null, timezone: values.timezone } },
      {
        onSuccess: () => {
          notify('Site created successfully!');
          void navigate('/dashboard');
        },
        onError: (error) => notify(errorMessage(error, 'Failed to create site')),
      },
    ),
  );

  return (
    <div className="min-h-dvh bg-slate-50">
      <header className="border-b border-slate-200 bg-white">
        <div className="mx-auto flex h-16 max-w-3xl items-center justify-between px-4 sm:px-6">
          <Link to="/dashboard" className="rounded-md" aria-label="Herald dashboard">
            <HeraldLogo />
          </Link>
          <ButtonLink to="/dashboard" variant="ghost" size="sm" icon={<ArrowLeft className="size-4" aria-hidden="true" />}>
            Back to dashboard
          </ButtonLink>
        </div>
      </header>
      <main className="mx-auto max-w-3xl px-4 py-8 sm:px-6 sm:py-12">
        <h1 className="text-2xl font-semibold tracking-tight text-slate-900 sm:text-3xl">Create a new site</h1>
        <p className="mt-2 max-w-2xl text-sm text-slate-600 sm:text-base">
          Add the website where visitors will subscribe to your push notifications.
        </p>

        <ul className="mt-6 grid gap-3 sm:grid-cols-2">
          <li className="flex gap-3 rounded-xl border border-indigo-100 bg-indigo-50 p-4 text-sm text-indigo-950">
            <KeyRound className="mt-0.5 size-5 shrink-0 text-indigo-700" aria-hidden="true" />
            <span>
              <strong className="font-semibold">Unique VAPID keys.</strong> Your site gets its own key pair, which identifies your notifications to
              browsers&apos; push services.
            </span>
          </li>
          <li className="flex gap-3 rounded-xl border border-indigo-100 bg-indigo-50 p-4 text-sm text-indigo-950">
            <Code2 className="mt-0.5 size-5 shrink-0 text-indigo-700" aria-hidden="true" />
            <span>
              <strong className="font-semibold">An installation code.</strong> Paste a short snippet into your site and add one service worker file
              to start collecting subscribers.
            </span>
          </li>
        </ul>

        <Card className="mt-6">
          <form onSubmit={(event) => void onSubmit(event)} noValidate aria-label="Create site">
            <CardContent className="grid gap-5 sm:grid-cols-2">
              <Field label="Site Name" required error={errors.name?.message} className="sm:col-span-2">
                {(control) => <Input {...control} {...form.register('name')} placeholder="My Online Store" autoComplete="off" />}
              </Field>
              <Field
                label="Website URL"
                required
                error={errors.url?.message}
                hint="The address of your site. Browsers only allow push on HTTPS (localhost works while testing)."
                className="sm:col-span-2"
              >
                {(control) => <Input {...control} {...form.register('url')} type="url" inputMode="url" placeholder="https://example.com" />}
              </Field>
              <Field
                label="Notification Icon URL"
                error={errors.icon?.message}
                hint="Optional. Shown with your notifications; 192×192 px works best."
                className="sm:col-span-2"
              >
                {(control) => <Input {...control} {...form.register('icon')} type="url" inputMode="url" placeholder="https://example.com/icon.png" />}
              </Field>
              <Field label="Timezone" error={errors.timezone?.message} hint="Used for scheduling and reports.">
                {(control) => (
                  <Select {...control} {...form.register('timezone')}>
                    {CREATE_SITE_TIMEZONES.map((zone) => (
                      <option key={zone} value={zone}>
                        {zone}
                      </option>
                    ))}
                  </Select>
                )}
              </Field>
            </CardContent>
            <CardFooter>
              <ButtonLink to="/dashboard" variant="secondary">
                Cancel
              </ButtonLink>
              <Button type="submit" loading={mutation.isPending} data-testid="create-site-submit">
                {mutation.isPending ? 'Creating...' : 'Create Site'}
              </Button>
            </CardFooter>
          </form>
        </Card>
      </main>
    </div>
  );
}
