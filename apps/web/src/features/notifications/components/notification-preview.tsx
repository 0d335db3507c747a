import { Bell, MoreHorizontal, X } from 'lucide-react';
import { useState, type ReactNode } from 'react';
import { ToggleGroup } from '../../../components/ui';
import { cn } from '../../../lib/class-names';
import { hostOf } from '../notification-labels';

export interface PreviewContent {
  title: string;
  message: string;
  destinationUrl: string;
  iconUrl: string;
  /** '' when there is no large image (or the toggle is off). */
  imageUrl: string;
  actions: { title: string }[];
  /** Used for the host when the destination URL is not complete yet. */
  siteUrl?: string | undefined;
}

type PreviewStyle = 'chrome-windows' | 'chrome-macos' | 'firefox-android' | 'safari-ios';

const STYLES = [
  { value: 'chrome-windows', label: 'Chrome · Windows', name: 'Chrome on Windows' },
  { value: 'chrome-macos', label: 'Chrome · macOS', name: 'Chrome on macOS' },
  { value: 'firefox-android', label: 'Firefox · Android', name: 'Firefox on Android' },
  { value: 'safari-ios', label: 'Safari · iOS', name: 'Safari on iOS' },
] as const;

export const PREVIEW_PLACEHOLDERS = { title: 'Notification Title', message: 'Your notification message will appear here.', host: 'yoursite.com' } as const;

interface Shown {
  title: string;
  message: string;
  host: string;
  iconUrl: string;
  imageUrl: string;
  actions: string[];
}

/** What the preview shows: the user's text (as text, never HTML) or placeholders, and the destination's host. */
function shownContent(content: PreviewContent): Shown {
  return {
    title: content.title.trim() || PREVIEW_PLACEHOLDERS.title,
    message: content.message.trim() || PREVIEW_PLACEHOLDERS.message,
    host: hostOf(content.destinationUrl) ?? (content.siteUrl ? hostOf(content.siteUrl) : null) ?? PREVIEW_PLACEHOLDERS.host,
    iconUrl: content.iconUrl.trim(),
    imageUrl: content.imageUrl.trim(),
    actions: content.actions.map((a) => a.title.trim() || 'Button').slice(0, 2),
  };
}

/** The notification's icon, or a neutral bell when there is none or it does not load. */
function PreviewIcon({ url, className }: { url: string; className?: string }) {
  const [broken, setBroken] = useState<string | null>(null);
  if (url && broken !== url) {
    return <img src={url} alt="" className={cn('shrink-0 object-cover', className)} onError={() => setBroken(url)} />;
  }
  return (
    <span className={cn('flex shrink-0 items-center justify-center bg-indigo-100 text-indigo-700', className)} aria-hidden="true">
      <Bell className="size-1/2" />
    </span>
  );
}

function PreviewImage({ url, className }: { url: string; className?: string }) {
  const [broken, setBroken] = useState<string | null>(null);
  if (!url || broken === url) return null;
  return <img src={url} alt="" className={cn('w-full object-cover', className)} onError={() => setBroken(url)} />;
}

/** A browser's badge: a coloured disc with its initial (no trademarked logos). */
function BrowserMark({ browser }: { browser: 'chrome' | 'firefox' | 'safari' }) {
  const styles = { chrome: 'bg-gradient-to-br from-red-500 via-amber-400 to-emerald-500', firefox: 'bg-gradient-to-br from-orange-500 to-purple-600', safari: 'bg-gradient-to-br from-sky-400 to-blue-600' };
  return <span className={cn('inline-block size-3.5 shrink-0 rounded-full', styles[browser])} aria-hidden="true" />;
}

function ChromeWindows({ shown }: { shown: Shown }) {
  return (
    <div className="flex justify-end bg-gradient-to-br from-sky-700 to-indigo-900 p-4">
      <div className="w-full max-w-xs overflow-hidden rounded-md bg-neutral-800 text-neutral-100 shadow-2xl">
        <div className="flex items-center gap-2 px-3 pt-2 text-[11px] text-neutral-300">
          <BrowserMark browser="chrome" />
          <span>Google Chrome</span>
          <X className="ml-auto size-3.5" aria-hidden="true" />
        </div>
        <PreviewImage url={shown.imageUrl} className="mt-2 aspect-[1200/628]" />
        <div className="flex gap-3 p-3">
          <PreviewIcon url={shown.iconUrl} className="size-12 rounded" />
          <div className="min-w-0 flex-1">
            <p className="text-sm font-semibold break-words">{shown.title}</p>
            <p className="mt-0.5 text-xs break-words text-neutral-200">{shown.message}</p>
            <p className="mt-1 truncate text-[11px] text-neutral-300" data-testid="preview-host">
              {shown.host}
            </p>
          </div>
        </div>
        {shown.actions.length ? (
          <div className="grid gap-1 px-3 pb-3" style={{ gridTemplateColumns: `repeat(${shown.actions.length}, minmax(0, 1fr))` }}>
            {shown.actions.map((action, index) => (
              <span key={index} className="truncate rounded bg-neutral-700 px-2 py-1.5 text-center text-xs">
                {action}
              </span>
            ))}
          </div>
        ) : null}
      </div>
    </div>
  );
}

function ChromeMac({ shown }: { shown: Shown }) {
  return (
    <div className="bg-gradient-to-br from-fuchsia-300 via-sky-300 to-indigo-400 p-4">
      <div className="ml-auto flex w-full max-w-xs items-start gap-3 rounded-2xl bg-white/85 p-3 text-slate-900 shadow-xl backdrop-blur">
        <span className="flex size-9 shrink-0 items-center justify-center rounded-lg bg-white shadow-sm">
          <BrowserMark browser="chrome" />
        </span>
        <div className="min-w-0 flex-1">
          <div className="flex items-baseline justify-between gap-2">
            <p className="truncate text-[13px] font-semibold">{shown.title}</p>
            <span className="shrink-0 text-[11px] text-slate-600">now</span>
          </div>
          <p className="truncate text-[12px] text-slate-700" data-testid="preview-host">
            {shown.host}
          </p>
          <p className="text-[12px] break-words text-slate-800">{shown.message}</p>
          {shown.actions.length ? (
            <p className="mt-1 inline-flex items-center gap-1 rounded bg-slate-200/80 px-2 py-0.5 text-[11px] text-slate-800">
              Options <MoreHorizontal className="size-3" aria-hidden="true" />
            </p>
          ) : null}
        </div>
        <PreviewIcon url={shown.iconUrl} className="size-10 rounded-md" />
      </div>
    </div>
  );
}

function FirefoxAndroid({ shown }: { shown: Shown }) {
  return (
    <div className="bg-slate-800 p-3">
      <div className="overflow-hidden rounded-3xl bg-slate-100 p-4 text-slate-900 shadow-lg">
        <div className="flex items-center gap-1.5 text-[11px] text-slate-700">
          <BrowserMark browser="firefox" />
          <span className="font-medium">Firefox</span>
          <span aria-hidden="true">·</span>
          <span className="truncate" data-testid="preview-host">
            {shown.host}
          </span>
          <span aria-hidden="true">·</span>
          <span className="shrink-0">now</span>
        </div>
        <div className="mt-2 flex gap-3">
          <div className="min-w-0 flex-1">
            <p className="text-sm font-semibold break-words">{shown.title}</p>
            <p className="text-[13px] break-words text-slate-700">{shown.message}</p>
          </div>
          <PreviewIcon url={shown.iconUrl} className="size-10 rounded-full" />
        </div>
        <PreviewImage url={shown.imageUrl} className="mt-3 aspect-[1200/628] rounded-xl" />
        {shown.actions.length ? (
          <div className="mt-3 flex gap-4">
            {shown.actions.map((action, index) => (
              <span key={index} className="truncate text-xs font-semibold tracking-wide text-orange-800 uppercase">
                {action}
              </span>
            ))}
          </div>
        ) : null}
      </div>
    </div>
  );
}

function SafariIos({ shown }: { shown: Shown }) {
  return (
    <div className="bg-gradient-to-b from-indigo-950 via-purple-900 to-rose-900 px-3 py-6">
      <p className="text-center text-3xl font-light text-white" aria-hidden="true">
        9:41
      </p>
      <div className="mt-4 flex items-start gap-3 rounded-2xl bg-white/80 p-3 text-slate-900 shadow-lg backdrop-blur">
        <PreviewIcon url={shown.iconUrl} className="size-9 rounded-lg" />
        <div className="min-w-0 flex-1">
          <div className="flex items-baseline justify-between gap-2">
            <p className="truncate text-[13px] font-semibold">{shown.title}</p>
            <span className="shrink-0 text-[11px] text-slate-700">now</span>
          </div>
          <p className="text-[13px] break-words text-slate-900">{shown.message}</p>
          <p className="mt-0.5 flex items-center gap-1 truncate text-[11px] text-slate-700">
            <BrowserMark browser="safari" />
            <span data-testid="preview-host">{shown.host}</span>
          </p>
        </div>
      </div>
    </div>
  );
}

const RENDERERS: Record<PreviewStyle, (props: { shown: Shown }) => ReactNode> = {
  'chrome-windows': ChromeWindows,
  'chrome-macos': ChromeMac,
  'firefox-android': FirefoxAndroid,
  'safari-ios': SafariIos,
};

const NOTES: Record<PreviewStyle, string> = {
  'chrome-windows': 'Windows shows the large image and up to 2 action buttons.',
  'chrome-macos': 'macOS shows no large image; action buttons sit under "Options".',
  'firefox-android': 'Android shows the large image when the notification is expanded.',
  'safari-ios': 'iOS shows no large image or action buttons.',
};

/**
 * Spec §2: a live preview in four mock browser/OS styles, with placeholder
 * text when fields are empty and the host of the destination URL.
 */
export function NotificationPreview({ content }: { content: PreviewContent }) {
  const [style, setStyle] = useState<PreviewStyle>('chrome-windows');
  const shown = shownContent(content);
  const Renderer = RENDERERS[style];
  const current = STYLES.find((s) => s.value === style)!;
  return (
    <section aria-labelledby="notification-preview-heading" className="flex flex-col gap-3" data-testid="notification-preview">
      <h2 id="notification-preview-heading" className="text-base font-semibold text-slate-900">
        Preview
      </h2>
      <ToggleGroup label="Preview style" items={STYLES} value={style} onValueChange={setStyle} size="sm" />
      <figure className="overflow-hidden rounded-xl border border-slate-200" aria-label={`${current.name} preview`} data-testid={`preview-${style}`}>
        <Renderer shown={shown} />
      </figure>
      <p className="text-xs text-slate-600">{NOTES[style]}</p>
    </section>
  );
}
