import type { PromptSettings } from '@herald/contracts';
import { Bell } from 'lucide-react';
import { cn } from '../../../lib/class-names';

/** What the site's visitors will see, drawn like the SDK draws it (packages/sdk page/banner.ts, soft-prompt.ts). */
export function PromptPreview({ settings, host }: { settings: PromptSettings; host: string }) {
  const headline = settings.headline || `Get notifications from ${host}?`;
  return (
    <figure className="flex flex-col gap-2" aria-label="Prompt preview">
      <div
        className={cn('relative flex min-h-56 overflow-hidden rounded-lg border border-slate-300 bg-slate-100 p-3', settings.position === 'top' ? 'items-start' : 'items-end')}
        data-testid="prompt-preview"
      >
        <div className="pointer-events-none absolute inset-x-3 top-10 flex flex-col gap-2" aria-hidden="true">
          <div className="h-3 w-2/3 rounded bg-slate-300" />
          <div className="h-3 w-1/2 rounded bg-slate-300" />
          <div className="h-3 w-3/5 rounded bg-slate-300" />
        </div>
        {settings.type === 'slide' ? (
          <div
            className="relative flex w-full max-w-[400px] flex-wrap items-center gap-x-3 gap-y-2.5 rounded-[10px] border border-black/15 p-4 shadow-lg"
            style={{ background: settings.backgroundColor, color: settings.textColor, font: '14px/1.45 system-ui, sans-serif' }}
          >
            <div className="min-w-0 flex-[1_1_200px]">
              <p className="font-semibold break-words">{headline}</p>
              {settings.text ? <p className="mt-1 break-words">{settings.text}</p> : null}
            </div>
            <div className="flex gap-2">
              <span className="rounded-lg border px-4 py-2 font-semibold" style={{ background: settings.buttonColor, borderColor: settings.buttonColor, color: settings.buttonTextColor }}>
                {settings.acceptLabel}
              </span>
              <span className="rounded-lg border border-current px-4 py-2 font-semibold">{settings.laterLabel}</span>
            </div>
          </div>
        ) : settings.type === 'bell' ? (
          <span
            className="relative ml-auto flex size-14 items-center justify-center rounded-full shadow-lg"
            style={{ background: settings.buttonColor, color: settings.buttonTextColor }}
            title={headline}
          >
            <Bell className="size-6" aria-hidden="true" />
          </span>
        ) : (
          <div className="relative w-full max-w-xs rounded-lg border border-slate-300 bg-white p-3 text-sm text-slate-800 shadow-lg">
            <p className="font-semibold">{host} wants to show notifications</p>
            <div className="mt-2 flex justify-end gap-2 text-xs">
              <span className="rounded border border-slate-300 px-2 py-1">Block</span>
              <span className="rounded bg-slate-800 px-2 py-1 text-white">Allow</span>
            </div>
          </div>
        )}
      </div>
      <figcaption className="text-xs text-slate-600">
        {settings.type === 'native'
          ? 'The browser’s own prompt (it looks different in each browser), asked at the visitor’s next click once the timing rules are met.'
          : settings.type === 'bell'
            ? 'A bell button in the corner of the page; a click asks for permission.'
            : 'Herald’s banner; its button asks for permission, which is also the tap Safari needs.'}
      </figcaption>
    </figure>
  );
}
