import { describeDelay } from '@herald/contracts';
import { Bell, X } from 'lucide-react';
import { useState } from 'react';
import { Field, Select } from '../../../components/ui';
import { toDelayMinutes, type StepFormValues } from '../campaign-form-schema';

export const PREVIEW_PLACEHOLDERS = { title: 'Notification Title', message: 'Your notification message will appear here.', host: 'yoursite.com' } as const;

function hostOf(url: string): string | null {
  try {
    const parsed = new URL(url.trim());
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.host : null;
  } catch {
    return null;
  }
}

/** When a step goes out, in words: each delay counts from the step before (spec §2 timeline). */
export function stepTiming(step: Pick<StepFormValues, 'delay_value' | 'delay_unit'> | undefined, index: number): string {
  if (index === 0) return 'Immediately after subscription';
  // The watched values can trail the list of steps by one render after adding one.
  if (!step || !/^\d+$/.test(step.delay_value.trim())) return `After notification ${index}`;
  const minutes = toDelayMinutes(Number(step.delay_value), step.delay_unit);
  return minutes === 0 ? `Right after notification ${index}` : `${capitalise(describeDelay(minutes))} after notification ${index}`;
}

/** The step selector's short form: "immediately", "1 day later". */
function shortTiming(step: Pick<StepFormValues, 'delay_value' | 'delay_unit'> | undefined, index: number): string {
  if (index === 0) return 'immediately';
  if (!step || !/^\d+$/.test(step.delay_value.trim())) return `after notification ${index}`;
  const minutes = toDelayMinutes(Number(step.delay_value), step.delay_unit);
  return minutes === 0 ? `right after notification ${index}` : `${describeDelay(minutes)} later`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** An image that disappears (or falls back to a bell for icons) when its URL does not load. */
function PreviewImage({ url, className, fallback }: { url: string; className: string; fallback?: boolean }) {
  const [broken, setBroken] = useState<string | null>(null);
  if (url && broken !== url) return <img src={url} alt="" className={className} onError={() => setBroken(url)} />;
  if (!fallback) return null;
  return (
    <span className={`${className} flex items-center justify-center bg-indigo-100 text-indigo-700`} aria-hidden="true">
      <Bell className="size-1/2" />
    </span>
  );
}

interface CampaignPreviewProps {
  steps: readonly StepFormValues[];
  /** The step shown; the form moves it to the step being edited. */
  selected: number;
  onSelect: (index: number) => void;
  campaignIconUrl: string;
  siteIconUrl: string | null;
  siteUrl: string;
}

/**
 * Spec §2: "A preview with a step selector". Shows the chosen step as a
 * desktop notification: the user's text (rendered as text), placeholders for
 * empty fields, the host of the destination URL, the icon it will carry (its
 * own, else the campaign's, else the site's), the large image and buttons.
 */
export function CampaignPreview({ steps, selected, onSelect, campaignIconUrl, siteIconUrl, siteUrl }: CampaignPreviewProps) {
  const index = Math.max(0, Math.min(selected, steps.length - 1));
  const step = steps[index];
  if (!step) return null;
  const title = step.title.trim() || PREVIEW_PLACEHOLDERS.title;
  const message = step.message.trim() || PREVIEW_PLACEHOLDERS.message;
  const host = hostOf(step.destination_url) ?? hostOf(siteUrl) ?? PREVIEW_PLACEHOLDERS.host;
  const icon = step.icon_url.trim() || campaignIconUrl.trim() || siteIconUrl || '';
  const image = step.large_image ? step.image_url.trim() : '';
  const actions = step.actions_enabled ? step.actions.slice(0, 2).map((a) => a.title.trim() || 'Button') : [];

  return (
    <section aria-labelledby="campaign-preview-heading" className="flex flex-col gap-4" data-testid="campaign-preview">
      <h2 id="campaign-preview-heading" className="text-base font-semibold text-slate-900">
        Preview
      </h2>
      <Field label="Preview step">
        {(control) => (
          <Select {...control} value={String(index)} onChange={(event) => onSelect(Number(event.target.value))}>
            {steps.map((_step, i) => (
              <option key={i} value={i}>
                {`Notification ${i + 1} · ${shortTiming(steps[i], i)}`}
              </option>
            ))}
          </Select>
        )}
      </Field>
      <figure className="overflow-hidden rounded-xl border border-slate-200" aria-label={`Preview of notification ${index + 1}`}>
        <div className="flex justify-end bg-gradient-to-br from-sky-700 to-indigo-900 p-4">
          <div className="w-full max-w-xs overflow-hidden rounded-md bg-neutral-800 text-neutral-100 shadow-2xl">
            <div className="flex items-center gap-2 px-3 pt-2 text-[11px] text-neutral-300">
              <span className="inline-block size-3.5 shrink-0 rounded-full bg-gradient-to-br from-red-500 via-amber-400 to-emerald-500" aria-hidden="true" />
              <span>Google Chrome</span>
              <X className="ml-auto size-3.5" aria-hidden="true" />
            </div>
            <PreviewImage url={image} className="mt-2 aspect-[1200/628] w-full object-cover" />
            <div className="flex gap-3 p-3">
              <PreviewImage url={icon} className="size-12 shrink-0 rounded object-cover" fallback />
              <div className="min-w-0 flex-1">
                <p className="text-sm font-semibold break-words" data-testid="preview-title">
                  {title}
                </p>
                <p className="mt-0.5 text-xs break-words text-neutral-200" data-testid="preview-message">
                  {message}
                </p>
                <p className="mt-1 truncate text-[11px] text-neutral-300" data-testid="preview-host">
                  {host}
                </p>
              </div>
            </div>
            {actions.length ? (
              <div className={`grid gap-1 px-3 pb-3 ${actions.length === 2 ? 'grid-cols-2' : 'grid-cols-1'}`}>
                {actions.map((action, i) => (
                  <span key={i} className="truncate rounded bg-neutral-700 px-2 py-1.5 text-center text-xs">
                    {action}
                  </span>
                ))}
              </div>
            ) : null}
          </div>
        </div>
        <figcaption className="border-t border-slate-200 bg-white px-4 py-2 text-xs text-slate-600" data-testid="preview-timing">
          {stepTiming(step, index)}
        </figcaption>
      </figure>
    </section>
  );
}
