import type { CreateSegmentBody, Segment } from '@herald/contracts';
import { Filter } from 'lucide-react';
import { useEffect, useState } from 'react';
import { Alert, Button, EmptyState, PageHeader, Spinner } from '../../../components/ui';
import { RoleGatedButton } from '../../../components/role-gate';
import { errorMessage } from '../../../lib/api-client';
import { confirmAction, notify } from '../../../lib/dialogs';
import { useCurrentSite } from '../../../lib/sites-store';
import { useCreateSegmentMutation, useDeleteSegmentMutation, useEstimateSegmentMutation, useSegmentsQuery, useUpdateSegmentMutation } from '../api';
import { SegmentCard, editButtonId } from '../components/segment-card';
import { SegmentForm } from '../components/segment-form';
import { emptySegmentForm, segmentFormValues } from '../segment-form';
import { NoSiteSelected } from '../../../components/no-site-selected';

const NEW_SEGMENT_BUTTON_ID = 'new-segment-button';

const DESCRIPTION = 'Group subscribers by browser, operating system, country, how long ago they subscribed and tags, then send notifications to just that group.';

export function SegmentsPage() {
  const { currentSite, loaded } = useCurrentSite();

  if (!currentSite) {
    return (
      <>
        <PageHeader title="Segments" />
        <NoSiteSelected loaded={loaded} icon={<Filter className="size-6" />} description="Create or select a site to manage its segments." />
      </>
    );
  }
  // key: another site starts with a closed form and its own list.
  return <SegmentsOfSite key={currentSite.id} siteId={currentSite.id} timeZone={currentSite.settings.timezone} />;
}

/** What the form is open for: nothing, a new segment, or one segment being edited. */
type Editing = { kind: 'none' } | { kind: 'create' } | { kind: 'edit'; segmentId: string };

function SegmentsOfSite({ siteId, timeZone }: { siteId: string; timeZone: string }) {
  const query = useSegmentsQuery(siteId);
  const createMutation = useCreateSegmentMutation();
  const updateMutation = useUpdateSegmentMutation();
  const deleteMutation = useDeleteSegmentMutation();
  const estimateMutation = useEstimateSegmentMutation();
  const [editing, setEditing] = useState<Editing>({ kind: 'none' });
  /** Where keyboard focus goes back to when the form closes. */
  const [returnFocusTo, setReturnFocusTo] = useState<string | null>(null);

  useEffect(() => {
    if (editing.kind !== 'none' || !returnFocusTo) return;
    document.getElementById(returnFocusTo)?.focus();
    setReturnFocusTo(null);
  }, [editing, returnFocusTo]);

  const close = (focus: string | null) => {
    setEditing({ kind: 'none' });
    setReturnFocusTo(focus);
  };

  const create = (body: CreateSegmentBody) =>
    createMutation.mutate(
      { siteId, body },
      {
        onSuccess: () => {
          notify('Segment created successfully!');
          close(NEW_SEGMENT_BUTTON_ID);
        },
        onError: (error) => notify(errorMessage(error, 'Failed to create segment')),
      },
    );

  const update = (segment: Segment, body: CreateSegmentBody) =>
    updateMutation.mutate(
      { id: segment.id, changes: body },
      {
        onSuccess: () => {
          notify('Segment updated successfully!');
          close(editButtonId(segment.id));
        },
        onError: (error) => notify(errorMessage(error, 'Failed to update segment')),
      },
    );

  const remove = (segment: Segment) => {
    if (!confirmAction('Are you sure you want to delete this segment?')) return;
    // A segment still used by a notification is refused by the server; its message names them.
    deleteMutation.mutate(segment, { onError: (error) => notify(errorMessage(error, 'Failed to delete segment')) });
  };

  const refresh = (segment: Segment) =>
    estimateMutation.mutate(segment, { onError: (error) => notify(errorMessage(error, 'Failed to refresh the subscriber count')) });

  const newSegmentButton =
    editing.kind === 'create' ? null : (
      <RoleGatedButton id={NEW_SEGMENT_BUTTON_ID} needed="editor" action="create segments" onClick={() => setEditing({ kind: 'create' })}>
        + New Segment
      </RoleGatedButton>
    );

  return (
    <>
      <PageHeader title="Segments" description={DESCRIPTION} actions={newSegmentButton} />

      {editing.kind === 'create' ? (
        <div className="mb-6">
          <SegmentForm mode="create" initialValues={emptySegmentForm} pending={createMutation.isPending} onSubmit={create} onCancel={() => close(NEW_SEGMENT_BUTTON_ID)} />
        </div>
      ) : null}

      {query.isPending ? (
        <p className="flex items-center gap-3 py-12 text-sm text-slate-600" role="status">
          <Spinner /> Loading segments...
        </p>
      ) : query.isError ? (
        <Alert tone="error" title="Could not load segments">
          <p>{errorMessage(query.error, 'Please try again.')}</p>
          <Button size="sm" variant="secondary" className="mt-2" onClick={() => void query.refetch()}>
            Retry
          </Button>
        </Alert>
      ) : query.data.length === 0 ? (
        editing.kind === 'create' ? null : (
          <EmptyState
            icon={<Filter className="size-6" />}
            title="No segments yet"
            description="Create a segment to send notifications to part of your audience, such as Chrome users in Germany or subscribers of more than a week."
            action={
              <Button variant="secondary" onClick={() => setEditing({ kind: 'create' })}>
                Create your first segment
              </Button>
            }
          />
        )
      ) : (
        <ul className="flex flex-col gap-3" aria-label="Segments">
          {query.data.map((segment) => (
            <li key={segment.id}>
              {editing.kind === 'edit' && editing.segmentId === segment.id ? (
                <SegmentForm
                  mode="edit"
                  initialValues={segmentFormValues(segment)}
                  pending={updateMutation.isPending}
                  onSubmit={(body) => update(segment, body)}
                  onCancel={() => close(editButtonId(segment.id))}
                />
              ) : (
                <SegmentCard
                  segment={segment}
                  timeZone={timeZone}
                  onEdit={() => setEditing({ kind: 'edit', segmentId: segment.id })}
                  onDelete={() => remove(segment)}
                  onRefresh={() => refresh(segment)}
                  deleting={deleteMutation.isPending && deleteMutation.variables.id === segment.id}
                  refreshing={estimateMutation.isPending && estimateMutation.variables.id === segment.id}
                />
              )}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
