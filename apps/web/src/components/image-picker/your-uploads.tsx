import { formatBytes, type Upload } from '@herald/contracts';
import { Check, Trash2 } from 'lucide-react';
import { useId } from 'react';
import { errorMessage } from '../../lib/api-client';
import { cn } from '../../lib/class-names';
import { confirmAction } from '../../lib/dialogs';
import { formatDateTime, Spinner } from '../ui';
import { useDeleteUploadMutation, useUploadsQuery } from './uploads-api';

interface YourUploadsProps {
  /** The picker's current image URL: that upload is marked as chosen. */
  selectedUrl: string;
  onUse: (url: string) => void;
  /** An upload was deleted (the picker clears its value when it was the chosen one). */
  onDeleted: (url: string) => void;
  /** A deletion was refused (the picker shows the server's message under itself). */
  onError: (message: string) => void;
  disabled?: boolean;
}

/** What a person needs to tell two uploads apart without seeing them. */
function describe(upload: Upload): string {
  return `${upload.width}×${upload.height}, ${formatBytes(upload.byte_size)}, uploaded ${formatDateTime(upload.created_at)}`;
}

/**
 * The images this user uploaded before, in the picker's upload mode: pick one
 * again, or delete it to free storage (the server refuses, with its reason,
 * while something that can still send uses it).
 */
export function YourUploads({ selectedUrl, onUse, onDeleted, onError, disabled = false }: YourUploadsProps) {
  const headingId = useId();
  const uploads = useUploadsQuery(true);
  const remove = useDeleteUploadMutation();

  function onDelete(upload: Upload) {
    if (!confirmAction('Delete this image? Notifications already sent with it will show no image.')) return;
    remove.mutate(upload.id, {
      onSuccess: () => onDeleted(upload.url),
      onError: (error) => onError(errorMessage(error, 'Failed to delete image')),
    });
  }

  const data = uploads.data;
  return (
    <section aria-labelledby={headingId} className="flex flex-col gap-2 border-t border-slate-200 pt-2">
      <div className="flex flex-wrap items-baseline justify-between gap-x-3 gap-y-1">
        <h3 id={headingId} className="text-xs font-semibold text-slate-800">
          Your uploads
        </h3>
        {data ? (
          <p className="text-xs text-slate-600 tabular-nums">
            {formatBytes(data.used_bytes)} of {formatBytes(data.quota_bytes)} used
          </p>
        ) : null}
      </div>

      {uploads.isPending ? (
        <p className="flex items-center gap-2 text-xs text-slate-600">
          <Spinner /> Loading your uploads...
        </p>
      ) : uploads.isError ? (
        <p className="text-xs text-slate-600">{errorMessage(uploads.error, 'Your uploads could not be loaded.')}</p>
      ) : data && data.uploads.length === 0 ? (
        <p className="text-xs text-slate-600">No uploads yet.</p>
      ) : data ? (
        <>
          <ul className="grid max-h-48 grid-cols-[repeat(auto-fill,minmax(4.5rem,1fr))] gap-2 overflow-y-auto p-0.5">
            {data.uploads.map((upload) => {
              const chosen = upload.url === selectedUrl.trim();
              const deleting = remove.isPending && remove.variables === upload.id;
              return (
                <li key={upload.id} className="relative">
                  <button
                    type="button"
                    aria-label={`Use image ${describe(upload)}`}
                    aria-pressed={chosen}
                    disabled={disabled || deleting}
                    onClick={() => onUse(upload.url)}
                    className={cn(
                      'block aspect-square w-full overflow-hidden rounded-md border bg-white focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600 disabled:opacity-60',
                      chosen ? 'border-indigo-600 ring-2 ring-indigo-600' : 'border-slate-200 hover:border-slate-400',
                    )}
                  >
                    <img src={upload.url} alt="" loading="lazy" className="size-full object-cover" />
                    {chosen ? (
                      <span className="absolute top-1 left-1 rounded-full bg-indigo-600 p-0.5 text-white" aria-hidden="true">
                        <Check className="size-3" />
                      </span>
                    ) : null}
                  </button>
                  <button
                    type="button"
                    aria-label={`Delete image ${describe(upload)}`}
                    disabled={disabled || deleting}
                    onClick={() => onDelete(upload)}
                    className="absolute top-1 right-1 flex size-6 items-center justify-center rounded-full border border-slate-200 bg-white/95 text-red-700 shadow-sm hover:bg-red-50 focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-red-600 disabled:opacity-60"
                  >
                    {deleting ? <Spinner /> : <Trash2 className="size-3.5" aria-hidden="true" />}
                  </button>
                </li>
              );
            })}
          </ul>
          {data.total > data.uploads.length ? (
            <p className="text-xs text-slate-600">
              Showing the {data.uploads.length} newest of {data.total} uploads.
            </p>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
