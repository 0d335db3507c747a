import { SEGMENT_BROWSERS, SEGMENT_OPERATING_SYSTEMS, SUBSCRIBED_DAYS_AGO_HINT, type CreateSegmentBody } from '@herald/contracts';
import { zodResolver } from '@hookform/resolvers/zod';
import { useForm } from 'react-hook-form';
import { Button, Card, CardContent, CardDescription, CardFooter, CardHeader, CardTitle, Field, Input, Select } from '../../../components/ui';
import { segmentFormSchema, segmentRequestBody, type SegmentFormValues } from '../segment-form';

interface SegmentFormProps {
  mode: 'create' | 'edit';
  initialValues: SegmentFormValues;
  pending: boolean;
  /** Called with the name and the non-empty rules only. */
  onSubmit: (body: CreateSegmentBody) => void;
  onCancel: () => void;
}

/** The "+ New Segment" form (spec §2 Segments), also used to edit a segment. */
export function SegmentForm({ mode, initialValues, pending, onSubmit, onCancel }: SegmentFormProps) {
  const form = useForm<SegmentFormValues>({ resolver: zodResolver(segmentFormSchema), defaultValues: initialValues });
  const { errors } = form.formState;
  const title = mode === 'create' ? 'New Segment' : 'Edit Segment';
  const submit = form.handleSubmit((values) => onSubmit(segmentRequestBody(values)));

  return (
    <form
      onSubmit={(event) => void submit(event)}
      onKeyDown={(event) => {
        if (event.key === 'Escape' && !pending) onCancel();
      }}
      noValidate
      aria-label={title}
    >
      <Card className="border-indigo-200 ring-1 ring-indigo-100">
        <CardHeader>
          <CardTitle>{title}</CardTitle>
          <CardDescription>Subscribers must match every rule you set. Leave a rule empty to ignore it.</CardDescription>
        </CardHeader>
        <CardContent className="grid gap-5 sm:grid-cols-2">
          <Field label="Segment Name" required error={errors.name?.message} className="sm:col-span-2">
            {(control) => <Input {...control} {...form.register('name')} autoComplete="off" placeholder="e.g. Chrome users in Germany" autoFocus />}
          </Field>
          <Field label="Browser" error={errors.browser?.message}>
            {(control) => (
              <Select {...control} {...form.register('browser')}>
                <option value="">Any</option>
                {SEGMENT_BROWSERS.map((browser) => (
                  <option key={browser} value={browser}>
                    {browser}
                  </option>
                ))}
              </Select>
            )}
          </Field>
          <Field label="Operating System" error={errors.os?.message}>
            {(control) => (
              <Select {...control} {...form.register('os')}>
                <option value="">Any</option>
                {SEGMENT_OPERATING_SYSTEMS.map((os) => (
                  <option key={os} value={os}>
                    {os}
                  </option>
                ))}
              </Select>
            )}
          </Field>
          <Field label="Country" error={errors.country?.message} hint="Country codes or names, separated by commas, e.g. US, GB, DE.">
            {(control) => <Input {...control} {...form.register('country')} autoComplete="off" placeholder="e.g. US, GB" />}
          </Field>
          <Field label="Subscribed Days Ago" error={errors.subscribedDaysAgo?.message} hint={SUBSCRIBED_DAYS_AGO_HINT}>
            {(control) => <Input {...control} {...form.register('subscribedDaysAgo')} type="number" inputMode="numeric" min={1} step={1} placeholder="e.g. 7" />}
          </Field>
          <Field
            label="Tags"
            error={errors.tags?.message}
            hint="Comma-separated; subscribers must have all of them."
            tooltip="Tags are set on subscribers through the API (PATCH /api/subscribers/{id}/tags), for example by your site after a purchase."
            className="sm:col-span-2"
          >
            {(control) => <Input {...control} {...form.register('tags')} autoComplete="off" placeholder="e.g. vip, newsletter" />}
          </Field>
        </CardContent>
        <CardFooter>
          <Button variant="secondary" onClick={onCancel} disabled={pending}>
            Cancel
          </Button>
          <Button type="submit" loading={pending}>
            {mode === 'create' ? (pending ? 'Creating...' : 'Create Segment') : pending ? 'Saving...' : 'Save Changes'}
          </Button>
        </CardFooter>
      </Card>
    </form>
  );
}
