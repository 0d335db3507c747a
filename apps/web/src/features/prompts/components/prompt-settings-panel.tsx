import { RoleGatedButton } from '../../../components/role-gate';
import {
  PROMPT_DELAY_MAX_SECONDS,
  PROMPT_DISMISS_MAX_DAYS,
  PROMPT_HEADLINE_MAX,
  PROMPT_LABEL_MAX,
  PROMPT_PAGE_VIEWS_MAX,
  PROMPT_TEXT_MAX,
  type PromptConversion,
  type PromptSettings,
  type PromptType,
  type Site,
} from '@herald/contracts';
import { Save } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { Alert, Card, CardContent, CardDescription, CardFooter, CardHeader, CardTitle, Field, Input, Select, Spinner, ToggleGroup } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { notify } from '../../../lib/dialogs';
import { usePromptConversionsQuery, usePromptSettingsQuery, useSavePromptSettingsMutation } from '../api';
import { PromptPreview } from './prompt-preview';

const TYPE_ITEMS = [
  { value: 'slide', label: 'Slide-down banner' },
  { value: 'native', label: 'Browser prompt' },
  { value: 'bell', label: 'Bell button' },
] as const satisfies ReadonlyArray<{ value: PromptType; label: string }>;

const TYPE_NAMES: Record<PromptType, string> = { slide: 'Slide-down banner', native: 'Browser prompt', bell: 'Bell button' };

type Draft = Omit<PromptSettings, 'delaySeconds' | 'pageViews' | 'dismissDays'> & { delaySeconds: string; pageViews: string; dismissDays: string };

const toDraft = (settings: PromptSettings): Draft => ({
  ...settings,
  delaySeconds: String(settings.delaySeconds),
  pageViews: String(settings.pageViews),
  dismissDays: String(settings.dismissDays),
});

/** The draft as the preview draws it: numbers that do not parse yet keep the saved value. */
function previewOf(draft: Draft, saved: PromptSettings): PromptSettings {
  const number = (text: string, fallback: number) => (/^\d+$/.test(text.trim()) ? Number(text) : fallback);
  return {
    ...draft,
    delaySeconds: number(draft.delaySeconds, saved.delaySeconds),
    pageViews: number(draft.pageViews, saved.pageViews),
    dismissDays: number(draft.dismissDays, saved.dismissDays),
  };
}

function ColourField({ label, value, onChange }: { label: string; value: string; onChange: (value: string) => void }) {
  return (
    <Field label={label}>
      {(control) => (
        <div className="flex items-center gap-2">
          <input
            type="color"
            value={/^#[0-9a-fA-F]{6}$/.test(value) ? value : '#000000'}
            onChange={(event) => onChange(event.target.value)}
            className="h-10 w-12 shrink-0 cursor-pointer rounded-lg border border-slate-300 bg-white p-1"
            aria-label={`${label} picker`}
          />
          <Input {...control} value={value} onChange={(event) => onChange(event.target.value)} className="font-mono" maxLength={7} />
        </div>
      )}
    </Field>
  );
}

function Conversions({ rows }: { rows: PromptConversion[] }) {
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-xs sm:text-sm">
        <caption className="sr-only">Prompt performance over the last 30 days</caption>
        <thead className="text-xs text-slate-600 uppercase">
          <tr>
            <th scope="col" className="py-2 pr-2 sm:pr-4 font-medium">
              Prompt
            </th>
            <th scope="col" className="py-2 pr-2 sm:pr-4 text-right font-medium">
              Shown
            </th>
            <th scope="col" className="py-2 pr-2 sm:pr-4 text-right font-medium">
              Subscribed
            </th>
            <th scope="col" className="py-2 text-right font-medium">
              Conversion
            </th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-200">
          {rows.map((row) => (
            <tr key={row.prompt}>
              <th scope="row" className="py-2 pr-2 sm:pr-4 font-medium text-slate-900">
                {TYPE_NAMES[row.prompt]}
              </th>
              <td className="py-2 pr-2 sm:pr-4 text-right tabular-nums">{row.shown.toLocaleString('en-US')}</td>
              <td className="py-2 pr-2 sm:pr-4 text-right tabular-nums">{row.subscribed.toLocaleString('en-US')}</td>
              <td className="py-2 text-right tabular-nums">{row.shown ? `${row.conversion_rate}%` : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function PromptForm({ site, saved }: { site: Site; saved: PromptSettings }) {
  const [draft, setDraft] = useState<Draft>(() => toDraft(saved));
  const save = useSavePromptSettingsMutation(site.id);
  const set = <K extends keyof Draft>(key: K) => (value: Draft[K]) => setDraft((current) => ({ ...current, [key]: value }));
  const host = (() => {
    try {
      return new URL(site.url).hostname;
    } catch {
      return site.url;
    }
  })();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body = {
      ...draft,
      delaySeconds: Number(draft.delaySeconds),
      pageViews: Number(draft.pageViews),
      dismissDays: Number(draft.dismissDays),
    };
    save.mutate(body, {
      onSuccess: (settings) => {
        setDraft(toDraft(settings));
        notify('Prompt settings saved. Your pages show them within a minute.');
      },
    });
  };

  const slide = draft.type === 'slide';
  return (
    <form onSubmit={submit} noValidate>
      <CardContent className="grid grid-cols-1 gap-6 lg:grid-cols-2">
        <div className="flex min-w-0 flex-col gap-4">
          <div className="flex flex-col gap-1.5">
            <span className="text-sm font-medium text-slate-900">
              Prompt
            </span>
            <ToggleGroup label="Prompt type" items={TYPE_ITEMS} value={draft.type} onValueChange={set('type')} />
          </div>
          <div className="grid grid-cols-1 gap-4 sm:grid-cols-3 sm:items-end">
            <Field label="Show after (seconds)">
              {(control) => <Input {...control} type="number" min={0} max={PROMPT_DELAY_MAX_SECONDS} value={draft.delaySeconds} onChange={(e) => set('delaySeconds')(e.target.value)} />}
            </Field>
            <Field label="From page view">
              {(control) => <Input {...control} type="number" min={1} max={PROMPT_PAGE_VIEWS_MAX} value={draft.pageViews} onChange={(e) => set('pageViews')(e.target.value)} />}
            </Field>
            <Field label="Ask again after (days)">
              {(control) => <Input {...control} type="number" min={0} max={PROMPT_DISMISS_MAX_DAYS} value={draft.dismissDays} onChange={(e) => set('dismissDays')(e.target.value)} />}
            </Field>
            <p className="text-xs text-slate-600 sm:col-span-3">
              The prompt appears from the visitor’s Nth page view, that many seconds after the page loads, and stays away for the given days after “later”.
            </p>
          </div>
          {draft.type !== 'native' ? (
            <>
              <Field label={slide ? 'Headline' : 'Button tooltip'} hint={`Empty: “Get notifications from ${host}?”`}>
                {(control) => <Input {...control} value={draft.headline} maxLength={PROMPT_HEADLINE_MAX} onChange={(e) => set('headline')(e.target.value)} />}
              </Field>
              {slide ? (
                <>
                  <Field label="Text">
                    {(control) => <Input {...control} value={draft.text} maxLength={PROMPT_TEXT_MAX} onChange={(e) => set('text')(e.target.value)} />}
                  </Field>
                  <div className="grid grid-cols-1 gap-4 sm:grid-cols-2">
                    <Field label="Accept button" required>
                      {(control) => <Input {...control} value={draft.acceptLabel} maxLength={PROMPT_LABEL_MAX} onChange={(e) => set('acceptLabel')(e.target.value)} />}
                    </Field>
                    <Field label="Later button" required>
                      {(control) => <Input {...control} value={draft.laterLabel} maxLength={PROMPT_LABEL_MAX} onChange={(e) => set('laterLabel')(e.target.value)} />}
                    </Field>
                  </div>
                </>
              ) : null}
              <Field label="Position">
                {(control) => (
                  <Select {...control} value={draft.position} onChange={(e) => set('position')(e.target.value as Draft['position'])}>
                    <option value="top">{slide ? 'Top (slides down)' : 'Top right'}</option>
                    <option value="bottom">{slide ? 'Bottom' : 'Bottom right'}</option>
                  </Select>
                )}
              </Field>
              <div className="grid grid-cols-1 gap-4 sm:grid-cols-2">
                {slide ? (
                  <>
                    <ColourField label="Background colour" value={draft.backgroundColor} onChange={set('backgroundColor')} />
                    <ColourField label="Text colour" value={draft.textColor} onChange={set('textColor')} />
                  </>
                ) : null}
                <ColourField label="Button colour" value={draft.buttonColor} onChange={set('buttonColor')} />
                <ColourField label="Button text colour" value={draft.buttonTextColor} onChange={set('buttonTextColor')} />
              </div>
            </>
          ) : null}
        </div>
        {/* First on a phone, so the preview is in view while the fields below change it. */}
        <div className="order-first min-w-0 lg:order-none">
          <PromptPreview settings={previewOf(draft, saved)} host={host} />
        </div>
        {save.isError ? (
          <Alert tone="error" className="lg:col-span-2">
            {errorMessage(save.error, 'The prompt settings could not be saved. Please try again.')}
          </Alert>
        ) : null}
      </CardContent>
      <CardFooter>
        <RoleGatedButton needed="admin" action="change the opt-in prompt" type="submit" loading={save.isPending} icon={<Save className="size-4" aria-hidden="true" />}>
          Save prompt
        </RoleGatedButton>
      </CardFooter>
    </form>
  );
}

/** Settings → Installation: how visitors are asked to subscribe, with a live preview and each prompt's conversion. */
export function PromptSettingsPanel({ site }: { site: Site }) {
  const query = usePromptSettingsQuery(site.id);
  const conversions = usePromptConversionsQuery(site.id);
  return (
    <Card>
      <CardHeader>
        <CardTitle>Opt-in prompt</CardTitle>
        <CardDescription>
          How the snippet asks your visitors to subscribe. Browsers only show their permission prompt after a click, so the banner and the bell ask first.
        </CardDescription>
      </CardHeader>
      {query.data ? (
        <PromptForm key={JSON.stringify(query.data)} site={site} saved={query.data} />
      ) : query.isError ? (
        <CardContent>
          <Alert tone="error">{errorMessage(query.error, 'The prompt settings could not be loaded.')}</Alert>
        </CardContent>
      ) : (
        <CardContent>
          <Spinner label="Loading prompt settings" />
        </CardContent>
      )}
      {conversions.data ? (
        <CardContent className="border-t border-slate-200">
          <h3 className="mb-2 text-sm font-semibold text-slate-900">Last 30 days</h3>
          <Conversions rows={conversions.data} />
        </CardContent>
      ) : null}
    </Card>
  );
}
