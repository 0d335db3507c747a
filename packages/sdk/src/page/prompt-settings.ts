import { siteEndpoint, type HeraldConfig } from '../common/config';
import type { PromptType } from './herald';

/**
 * The opt-in prompt the site's owner chose (Settings → Installation), read
 * from GET /api/public/sites/{siteId}/prompt-settings. Mirrors contracts
 * `promptSettings`; every field is read on its own, so a missing or odd one
 * takes its default and the rest still applies.
 */
export interface PromptSettings {
  type: PromptType;
  delaySeconds: number;
  pageViews: number;
  dismissDays: number;
  /** Empty: "Get notifications from <host>?". */
  headline: string;
  text: string;
  acceptLabel: string;
  laterLabel: string;
  position: 'top' | 'bottom';
  backgroundColor: string;
  textColor: string;
  buttonColor: string;
  buttonTextColor: string;
}

/** What a page shows when the settings cannot be fetched: the defaults a new site has. */
export const DEFAULT_PROMPT_SETTINGS: PromptSettings = {
  type: 'slide',
  delaySeconds: 5,
  pageViews: 1,
  dismissDays: 7,
  headline: '',
  text: '',
  acceptLabel: 'Allow',
  laterLabel: 'Not now',
  position: 'bottom',
  backgroundColor: '#ffffff',
  textColor: '#111827',
  buttonColor: '#1d4ed8',
  buttonTextColor: '#ffffff',
};

const FETCH_TIMEOUT_MS = 5000;

const isColour = (value: unknown): value is string => typeof value === 'string' && /^#[0-9a-fA-F]{6}$/.test(value);
const wholeNumber = (value: unknown, min: number, max: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
const text = (value: unknown, max: number): value is string => typeof value === 'string' && value.length <= max;
const label = (value: unknown): value is string => text(value, 30) && value.trim() !== '';

export function readPromptSettings(value: unknown): PromptSettings {
  const fields = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  const d = DEFAULT_PROMPT_SETTINGS;
  return {
    type: fields.type === 'slide' || fields.type === 'native' || fields.type === 'bell' ? fields.type : d.type,
    delaySeconds: wholeNumber(fields.delaySeconds, 0, 3600) ? fields.delaySeconds : d.delaySeconds,
    pageViews: wholeNumber(fields.pageViews, 1, 100) ? fields.pageViews : d.pageViews,
    dismissDays: wholeNumber(fields.dismissDays, 0, 365) ? fields.dismissDays : d.dismissDays,
    headline: text(fields.headline, 80) ? fields.headline : d.headline,
    text: text(fields.text, 200) ? fields.text : d.text,
    acceptLabel: label(fields.acceptLabel) ? fields.acceptLabel : d.acceptLabel,
    laterLabel: label(fields.laterLabel) ? fields.laterLabel : d.laterLabel,
    position: fields.position === 'top' || fields.position === 'bottom' ? fields.position : d.position,
    backgroundColor: isColour(fields.backgroundColor) ? fields.backgroundColor : d.backgroundColor,
    textColor: isColour(fields.textColor) ? fields.textColor : d.textColor,
    buttonColor: isColour(fields.buttonColor) ? fields.buttonColor : d.buttonColor,
    buttonTextColor: isColour(fields.buttonTextColor) ? fields.buttonTextColor : d.buttonTextColor,
  };
}

/** The site's prompt settings; the defaults when Herald cannot be reached (a prompt still appears, as before). */
export async function fetchPromptSettings(config: HeraldConfig): Promise<PromptSettings> {
  try {
    const response = await fetch(siteEndpoint(config, 'prompt-settings'), {
      method: 'GET',
      mode: 'cors',
      credentials: 'omit',
      signal: typeof AbortSignal.timeout === 'function' ? AbortSignal.timeout(FETCH_TIMEOUT_MS) : undefined,
    });
    if (!response.ok) return { ...DEFAULT_PROMPT_SETTINGS };
    const body = (await response.json()) as { data?: { prompt?: unknown } };
    return readPromptSettings(body.data?.prompt);
  } catch {
    return { ...DEFAULT_PROMPT_SETTINGS };
  }
}

/** Tells Herald a prompt was shown (the denominator of its conversion). Never rejects: a lost count is no error for the visitor. */
export async function reportPromptShown(config: HeraldConfig, prompt: PromptType): Promise<void> {
  try {
    await fetch(siteEndpoint(config, 'prompt-events'), {
      method: 'POST',
      mode: 'cors',
      credentials: 'omit',
      // text/plain keeps it a CORS "simple" request: no preflight for a count.
      headers: { 'Content-Type': 'text/plain' },
      body: JSON.stringify({ prompt, event: 'shown' }),
      keepalive: true,
    });
  } catch {
    // Offline: one count less.
  }
}
