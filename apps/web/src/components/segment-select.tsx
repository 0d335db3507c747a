import { AlertTriangle } from 'lucide-react';
import type { ReactNode } from 'react';
import { errorMessage } from '../lib/api-client';
import { reachText, useAudienceCount } from '../lib/audience';
import { segmentOptionLabel, useSegmentOptions } from '../lib/segment-options';
import { Field, Select } from './ui';

const countFormat = new Intl.NumberFormat('en-US');

interface SegmentSelectFieldProps {
  /** Whose segments to offer; without a site only "All Subscribers" is offered. */
  siteId: string | undefined;
  label?: string;
  /** The chosen segment's id; '' is "All Subscribers". */
  value: string;
  onChange: (segmentId: string) => void;
  onBlur?: () => void;
  name?: string;
  hint?: ReactNode;
  /** Help shown next to the label (the spec's field tooltips). */
  tooltip?: ReactNode;
  error?: string | undefined;
  disabled?: boolean;
  className?: string;
  /** Show "Will reach N subscribers" for the chosen target (and warn when that is nobody) as the hint. */
  showReach?: boolean;
}

/** "Will reach N subscribers" for the chosen target; a warning when that is nobody (issue 11, reach before sending). */
function ReachHint({ siteId, segmentId }: { siteId: string; segmentId: string | null }) {
  const audience = useAudienceCount(siteId, segmentId);
  if (!audience.isSuccess) return null;
  if (audience.data.count > 0) return <span data-testid="reach">{reachText(audience.data)}</span>;
  return (
    <span className="flex items-start gap-1 font-medium text-amber-800" data-testid="reach">
      <AlertTriangle className="mt-0.5 size-3.5 shrink-0" aria-hidden="true" />
      {reachText(audience.data)}: nobody would get it now.
    </span>
  );
}

/**
 * The target select of the notification, welcome campaign and RSS feed forms:
 * "All Subscribers" or one of the site's segments with its estimated count
 * (spec §2, §3 estimated_count). Controlled, so a saved segment shows as soon
 * as the list arrives; a saved segment missing from the list stays selected
 * (and is named as such) rather than silently becoming "All Subscribers".
 */
export function SegmentSelectField({ siteId, label = 'Target Segment', value, onChange, onBlur, name, hint, tooltip, error, disabled, className, showReach }: SegmentSelectFieldProps) {
  const segments = useSegmentOptions(siteId);
  const everyone = useAudienceCount(siteId, null);
  const options = segments.data ?? [];
  const savedButMissing = value !== '' && !options.some((option) => option.id === value);
  const missingLabel = segments.isSuccess ? 'Deleted segment' : segments.isError ? 'Saved segment' : 'Loading segments...';
  const shownHint = segments.isError
    ? `Segments could not be loaded: ${errorMessage(segments.error, 'please try again later')}.`
    : showReach && siteId
      ? <ReachHint siteId={siteId} segmentId={value || null} />
      : hint;

  return (
    <Field label={label} hint={shownHint} tooltip={tooltip} error={error} className={className}>
      {(control) => (
        <Select
          {...control}
          name={name}
          value={value}
          disabled={disabled}
          aria-busy={segments.isFetching || undefined}
          onChange={(event) => onChange(event.target.value)}
          onBlur={onBlur}
        >
          <option value="">{everyone.isSuccess ? `All Subscribers (${countFormat.format(everyone.data.count)})` : 'All Subscribers'}</option>
          {options.map((option) => (
            <option key={option.id} value={option.id}>
              {segmentOptionLabel(option)}
            </option>
          ))}
          {savedButMissing ? <option value={value}>{missingLabel}</option> : null}
        </Select>
      )}
    </Field>
  );
}
