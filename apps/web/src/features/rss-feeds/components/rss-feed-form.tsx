import { RSS_MAX_PUSHES_PER_DAY_DEFAULT, RSS_MAX_PUSHES_PER_DAY_MAX, type CreateRssFeedBody, type RssFeed } from '@herald/contracts';
import { zodResolver } from '@hookform/resolvers/zod';
import { Controller, useForm } from 'react-hook-form';
import { ImagePicker } from '../../../components/image-picker';
import { SegmentSelectField } from '../../../components/segment-select';
import { Button, Card, CardContent, CardDescription, CardFooter, CardHeader, CardTitle, CodeBlock, Field, Input } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { notify } from '../../../lib/dialogs';
import { useCreateRssFeedMutation, useUpdateRssFeedMutation } from '../api';
import { rssFeedForm, type RssFeedForm } from '../feed-form-schema';
import { CheckboxField } from './checkbox-field';

/** Spec §2 RSS Feeds: "an example feed XML", shown as help next to the address field. */
export const EXAMPLE_FEED_XML = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/">
  <channel>
    <title>My Blog</title>
    <link>https://example.com/</link>
    <description>Latest posts</description>
    <item>
      <title>Our spring collection is here</title>
      <link>https://example.com/blog/spring-collection</link>
      <guid isPermaLink="false">post-1042</guid>
      <pubDate>Tue, 10 Mar 2026 09:00:00 GMT</pubDate>
      <description>Fresh colours, lighter fabrics and free shipping all week.</description>
      <media:content url="https://example.com/images/spring.jpg" medium="image" />
    </item>
  </channel>
</rss>`;

function formValues(feed: RssFeed | undefined): RssFeedForm {
  if (!feed) {
    return {
      name: '',
      url: '',
      iconUrl: '',
      utm_source: '',
      utm_medium: '',
      utm_campaign: '',
      showActionButtons: false,
      createDraft: false,
      maxPushesPerDay: RSS_MAX_PUSHES_PER_DAY_DEFAULT,
      segmentId: '',
    };
  }
  return {
    name: feed.name,
    url: feed.url,
    iconUrl: feed.icon_url ?? '',
    utm_source: feed.utm_params.utm_source ?? '',
    utm_medium: feed.utm_params.utm_medium ?? '',
    utm_campaign: feed.utm_params.utm_campaign ?? '',
    showActionButtons: feed.show_action_buttons,
    createDraft: feed.create_draft,
    maxPushesPerDay: feed.max_pushes_per_day,
    segmentId: feed.segment_id ?? '',
  };
}

/** Spec §3 create payload; the edit form sends the same fields to PATCH. */
function payloadOf(values: RssFeedForm): CreateRssFeedBody {
  return {
    name: values.name.trim(),
    url: values.url.trim(),
    iconUrl: values.iconUrl.trim() || null,
    utmParams: { utm_source: values.utm_source.trim(), utm_medium: values.utm_medium.trim(), utm_campaign: values.utm_campaign.trim() },
    showActionButtons: values.showActionButtons,
    createDraft: values.createDraft,
    maxPushesPerDay: values.maxPushesPerDay,
    segmentId: values.segmentId || null,
  };
}

interface RssFeedFormProps {
  siteId: string;
  /** Edit this feed; without it the form adds a new one. */
  feed?: RssFeed;
  onDone: () => void;
}

/** Spec §2 RSS Feeds "+ Add Feed" form, also used to edit a feed from the list. */
export function RssFeedFormCard({ siteId, feed, onDone }: RssFeedFormProps) {
  const editing = feed !== undefined;
  const create = useCreateRssFeedMutation(siteId);
  const update = useUpdateRssFeedMutation(siteId);
  const form = useForm<RssFeedForm>({ resolver: zodResolver(rssFeedForm), defaultValues: formValues(feed) });
  const { errors } = form.formState;
  const createDraft = form.watch('createDraft');
  const pending = create.isPending || update.isPending;

  const onSubmit = form.handleSubmit((values) => {
    const body = payloadOf(values);
    if (feed) {
      update.mutate(
        { id: feed.id, changes: body },
        {
          onSuccess: () => {
            notify('RSS feed updated successfully!');
            onDone();
          },
          onError: (error) => notify(errorMessage(error, 'Failed to update RSS feed')),
        },
      );
      return;
    }
    create.mutate(body, {
      onSuccess: () => {
        notify('RSS feed added successfully!');
        onDone();
      },
      onError: (error) => notify(errorMessage(error, 'Failed to add RSS feed')),
    });
  });

  const title = editing ? `Edit ${feed.name}` : 'Add RSS Feed';
  return (
    <Card className="mb-6">
      <form onSubmit={(event) => void onSubmit(event)} noValidate aria-label={title}>
        <CardHeader>
          <CardTitle>{title}</CardTitle>
          <CardDescription>Each new post in the feed becomes a push notification: its title, summary, link and image.</CardDescription>
        </CardHeader>
        <CardContent className="grid gap-5 sm:grid-cols-2">
          {/* Spec §2: the Active checkbox is the inverse of "Create Draft". */}
          <CheckboxField
            label="Active"
            hint="Send each new post to subscribers automatically. Unchecked, new posts are saved as drafts instead."
            checked={!createDraft}
            onChange={(event) => form.setValue('createDraft', !event.target.checked, { shouldDirty: true })}
            className="sm:col-span-2"
          />
          <Field label="Feed Name" required error={errors.name?.message}>
            {(control) => <Input {...control} {...form.register('name')} placeholder="My Blog" autoComplete="off" />}
          </Field>
          <Field label="RSS Feed URL" required error={errors.url?.message} hint="An RSS or Atom feed, e.g. https://example.com/feed.xml">
            {(control) => <Input {...control} {...form.register('url')} type="url" inputMode="url" placeholder="https://example.com/feed.xml" />}
          </Field>
          <details className="min-w-0 rounded-lg border border-slate-200 bg-slate-50 px-4 py-3 text-sm sm:col-span-2">
            <summary className="cursor-pointer font-medium text-slate-800">Example feed XML</summary>
            <p className="mt-2 text-slate-600">
              Herald reads RSS 2.0, RSS 1.0 and Atom. Each item&apos;s title becomes the notification title (up to 50 characters), its description the
              message (up to 150), its link the destination and its image the large image. Items already in the feed when you add it are not sent.
            </p>
            <CodeBlock code={EXAMPLE_FEED_XML} label="Example RSS feed" wrap={false} className="mt-3" />
          </details>
          <Controller
            control={form.control}
            name="iconUrl"
            render={({ field, fieldState }) => (
              <ImagePicker
                label="Feed Icon"
                value={field.value}
                onChange={field.onChange}
                error={fieldState.error?.message}
                hint="Shown with each notification; your site's icon is used when empty. Recommended size: 192x192 pixels (square)."
                className="sm:col-span-2"
              />
            )}
          />
          <fieldset className="grid gap-4 sm:col-span-2 sm:grid-cols-3">
            <legend className="mb-2 text-sm font-medium text-slate-800">UTM Parameters</legend>
            <Field label="utm_source" error={errors.utm_source?.message}>
              {(control) => <Input {...control} {...form.register('utm_source')} placeholder="herald" autoComplete="off" />}
            </Field>
            <Field label="utm_medium" error={errors.utm_medium?.message}>
              {(control) => <Input {...control} {...form.register('utm_medium')} placeholder="push" autoComplete="off" />}
            </Field>
            <Field label="utm_campaign" error={errors.utm_campaign?.message}>
              {(control) => <Input {...control} {...form.register('utm_campaign')} placeholder="rss" autoComplete="off" />}
            </Field>
            <p className="text-xs text-slate-600 sm:col-span-3">Added to every notification&apos;s link, so your analytics can tell these visits apart.</p>
          </fieldset>
          <CheckboxField label="Show Action Buttons" hint='Adds "Read more" and "Visit site" buttons to each notification.' {...form.register('showActionButtons')} />
          <CheckboxField
            label="Create Draft notification of each new blogpost"
            hint="Review and send each one yourself from Notifications."
            {...form.register('createDraft')}
          />
          <Field
            label="Maximum RSS Pushes Per Day"
            required
            error={errors.maxPushesPerDay?.message}
            hint="New posts beyond this number in one day (your site's timezone) are not sent. Most sites do best with 1–2 a day."
          >
            {(control) => (
              <Input {...control} {...form.register('maxPushesPerDay', { valueAsNumber: true })} type="number" inputMode="numeric" min={1} max={RSS_MAX_PUSHES_PER_DAY_MAX} step={1} />
            )}
          </Field>
          <Controller
            control={form.control}
            name="segmentId"
            render={({ field, fieldState }) => (
              <SegmentSelectField
                siteId={siteId}
                name={field.name}
                value={field.value}
                onChange={field.onChange}
                onBlur={field.onBlur}
                error={fieldState.error?.message}
                hint="Who receives the notifications."
              />
            )}
          />
        </CardContent>
        <CardFooter>
          <Button variant="secondary" onClick={onDone} disabled={pending}>
            Cancel
          </Button>
          <Button type="submit" loading={pending} data-testid="rss-feed-submit">
            {editing ? (pending ? 'Saving...' : 'Save Changes') : pending ? 'Adding...' : 'Add Feed'}
          </Button>
        </CardFooter>
      </form>
    </Card>
  );
}
