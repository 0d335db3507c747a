import { ExternalLink, ImageIcon, Link2, Upload, X } from 'lucide-react';
import { useEffect, useId, useRef, useState, type ChangeEvent } from 'react';
import { errorMessage } from '../../lib/api-client';
import { cn } from '../../lib/class-names';
import { Button, Input, Spinner, ToggleGroup } from '../ui';
import { checkImageFile, IMAGE_ACCEPT, uploadImage } from './upload-image';
import { useRefreshUploads } from './uploads-api';
import { YourUploads } from './your-uploads';

type PickerMode = 'url' | 'upload';
/** Spec §2 Image picker upload states. */
type UploadState = { status: 'idle' } | { status: 'uploading'; fileName: string } | { status: 'error'; message: string };

const MODES = [
  { value: 'url', label: 'Enter URL', icon: <Link2 className="size-4" aria-hidden="true" /> },
  { value: 'upload', label: 'Upload file', icon: <Upload className="size-4" aria-hidden="true" /> },
] as const;

interface ImagePickerProps {
  /** The picker's name, e.g. "Icon" or "Large Image"; the URL field and file input are named after it. */
  label: string;
  /** The current image URL ('' for none). */
  value: string;
  onChange: (url: string) => void;
  /** Keeps the name for assistive technology only, when a heading or switch right above already shows it. */
  hideLabel?: boolean;
  /** Recommended size and similar advice (spec §9: icon 192x192, large image 1200x628). */
  hint?: string;
  /** A validation message for the URL from the surrounding form. */
  error?: string | undefined;
  disabled?: boolean;
  className?: string;
}

/**
 * Spec §2/§5/§8 image picker: a URL typed in, or a file uploaded to
 * /api/upload/image. Shows the current link and a preview (hidden when the
 * image cannot be loaded), the upload state, and upload errors under the picker.
 */
export function ImagePicker({ label, value, onChange, hint, error, hideLabel = false, disabled = false, className }: ImagePickerProps) {
  const id = useId();
  const [mode, setMode] = useState<PickerMode>('url');
  const [upload, setUpload] = useState<UploadState>({ status: 'idle' });
  // The URL whose preview failed to load; a new URL gets a fresh chance.
  const [brokenPreview, setBrokenPreview] = useState<string | null>(null);
  const abortRef = useRef<AbortController | null>(null);
  const refreshUploads = useRefreshUploads();

  // Leaving the page (or turning the picker off) stops an upload nobody will see.
  useEffect(() => () => abortRef.current?.abort(), []);

  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = `${id}-error`;
  const uploadError = upload.status === 'error' ? upload.message : null;
  const shownError = uploadError ?? error;
  const describedBy = [hintId, shownError ? errorId : undefined].filter(Boolean).join(' ') || undefined;
  const trimmed = value.trim();

  async function onFileChosen(event: ChangeEvent<HTMLInputElement>) {
    const input = event.currentTarget;
    const file = input.files?.[0];
    if (!file) return;
    const problem = checkImageFile(file);
    if (problem) {
      setUpload({ status: 'error', message: problem });
      input.value = '';
      return;
    }
    abortRef.current?.abort();
    const controller = new AbortController();
    abortRef.current = controller;
    setUpload({ status: 'uploading', fileName: file.name });
    try {
      const url = await uploadImage(file, controller.signal);
      if (controller.signal.aborted) return;
      onChange(url);
      setUpload({ status: 'idle' });
      void refreshUploads();
    } catch (caught) {
      if (controller.signal.aborted) return;
      setUpload({ status: 'error', message: errorMessage(caught, 'Failed to upload image') });
    } finally {
      input.value = '';
    }
  }

  return (
    <fieldset className={cn('flex min-w-0 flex-col gap-2', className)} aria-describedby={hintId} data-testid={`image-picker-${label.toLowerCase().replace(/\s+/g, '-')}`}>
      <legend className={hideLabel ? 'sr-only' : 'mb-2 text-sm font-medium text-slate-800'}>{label}</legend>
      <ToggleGroup
        label={`${label} source`}
        items={MODES}
        value={mode}
        size="sm"
        className="self-start"
        onValueChange={(next) => {
          setMode(next);
          if (upload.status === 'error') setUpload({ status: 'idle' });
        }}
      />

      {mode === 'url' ? (
        <Input
          id={`${id}-url`}
          type="url"
          inputMode="url"
          aria-label={`${label} URL`}
          aria-describedby={describedBy}
          aria-invalid={error ? true : undefined}
          placeholder="https://example.com/image.png"
          value={value}
          disabled={disabled}
          onChange={(event) => onChange(event.target.value)}
        />
      ) : (
        <div className="flex flex-col gap-2 rounded-lg border border-dashed border-slate-300 bg-slate-50 p-3">
          <input
            id={`${id}-file`}
            type="file"
            accept={IMAGE_ACCEPT}
            aria-label={`Upload ${label}`}
            aria-describedby={describedBy}
            disabled={disabled || upload.status === 'uploading'}
            onChange={(event) => void onFileChosen(event)}
            className={cn(
              'block w-full text-sm text-slate-700',
              'file:mr-3 file:cursor-pointer file:rounded-lg file:border-0 file:bg-indigo-50 file:px-3 file:py-2 file:text-sm file:font-medium file:text-indigo-700 hover:file:bg-indigo-100',
            )}
          />
          <p className="text-xs text-slate-600">JPEG, PNG, GIF or WebP, up to 5MB.</p>
          <YourUploads
            selectedUrl={value}
            disabled={disabled}
            onUse={(url) => {
              onChange(url);
              setUpload({ status: 'idle' });
            }}
            onDeleted={(url) => {
              // An unsaved form must not keep pointing at a file that is gone.
              if (url === trimmed) onChange('');
              setUpload({ status: 'idle' });
            }}
            onError={(message) => setUpload({ status: 'error', message })}
          />
        </div>
      )}

      {upload.status === 'uploading' ? (
        <p role="status" className="flex items-center gap-2 text-xs text-slate-700">
          <Spinner /> Uploading {upload.fileName}...
        </p>
      ) : null}

      {hint ? (
        <p id={hintId} className="text-xs text-slate-600">
          {hint}
        </p>
      ) : null}
      {shownError ? (
        <p id={errorId} role={uploadError ? 'alert' : undefined} className="text-xs font-medium text-red-700">
          {shownError}
        </p>
      ) : null}

      {trimmed ? (
        <div className="flex items-start gap-3 rounded-lg border border-slate-200 bg-white p-2">
          {brokenPreview !== trimmed ? (
            <img
              src={trimmed}
              alt={`${label} preview`}
              className="size-14 shrink-0 rounded-md border border-slate-200 bg-slate-100 object-cover"
              onError={() => setBrokenPreview(trimmed)}
            />
          ) : (
            <span className="flex size-14 shrink-0 items-center justify-center rounded-md bg-slate-100 text-slate-500" aria-hidden="true">
              <ImageIcon className="size-5" />
            </span>
          )}
          <div className="flex min-w-0 flex-1 flex-col gap-1">
            <span className="text-xs font-medium text-slate-600">Current {label.toLowerCase()}</span>
            <a
              href={trimmed}
              target="_blank"
              rel="noopener noreferrer"
              className="inline-flex min-w-0 items-center gap-1 text-xs break-all text-indigo-700 hover:underline"
              data-testid="image-picker-current-link"
            >
              <span className="min-w-0 break-all">{trimmed}</span>
              <ExternalLink className="size-3 shrink-0" aria-hidden="true" />
              <span className="sr-only">(opens in a new tab)</span>
            </a>
          </div>
          <Button
            variant="ghost"
            size="sm"
            className="shrink-0 px-2"
            aria-label={`Remove ${label.toLowerCase()}`}
            disabled={disabled}
            onClick={() => {
              onChange('');
              setUpload({ status: 'idle' });
            }}
            icon={<X className="size-4" aria-hidden="true" />}
          />
        </div>
      ) : null}
    </fieldset>
  );
}
