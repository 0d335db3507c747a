// One row of an import file, checked (docs/product.md, "Importing
// subscribers"): the push subscription by the very rules the public subscribe
// API applies (subscribers/push-subscription.ts: push-service allow-list,
// p256dh on the curve, auth 16 bytes, the endpoint normalised), the VAPID key
// it was made with, and the descriptive fields, which never reject a row.
import { EXTERNAL_ID_MAX, SUBSCRIBER_EXPORT_TAG_SEPARATOR, SUBSCRIBER_IMPORT_FIELDS, SUBSCRIBER_TAG_MAX_COUNT, SUBSCRIBER_TAG_MAX_LENGTH, UNKNOWN, type SubscriberImportField, type SubscriberImportRejectReason } from '@herald/contracts';
import { endpointHash } from '../../delivery/push-endpoints';
import { HttpError } from '../../platform/errors';
import { checkPushEndpoint, checkPushKeys, knownTimezone, languageTag } from '../subscribers/push-subscription';
import { csvCells } from './import-file';

export type RowFields = Partial<Record<SubscriberImportField, string | string[]>>;

export interface ImportedRow {
  line: number;
  endpoint: string;
  endpointHash: string;
  p256dh: string;
  auth: string;
  vapidKeyId: string;
  /** Epoch ms from created_at, or null (the import's time). */
  subscribedAt: number | null;
  browser: string | null;
  os: string | null;
  country: string | null;
  language: string | null;
  timezone: string | null;
  tags: string[];
  externalId: string | null;
}

export interface RejectedRow {
  line: number;
  reason: SubscriberImportRejectReason;
  detail: string;
  endpoint: string | null;
}

export interface RowContext {
  extraPushOrigins: readonly string[];
  /** The site's keys (not retired) by base64url public key. */
  keysByPublicKey: ReadonlyMap<string, string>;
  /** The key of rows that name none: the form's vapid_key_id, or the site's primary key. */
  defaultKeyId: string;
  now: number;
}

const REQUIRED = ['endpoint', 'p256dh', 'auth'] as const;

/** Herald's own export guards formula-looking cells with an apostrophe (platform/csv.ts); reading drops it again. */
function unguard(cell: string): string {
  return cell.length > 1 && cell[0] === "'" && '=+-@'.includes(cell[1]!) ? cell.slice(1) : cell;
}

/** The header row's columns; an error text when the required ones are missing. */
export function csvColumns(text: string): { columns: string[] } | { error: string } {
  const columns = csvCells(text).map((cell) => cell.trim().toLowerCase());
  const missing = REQUIRED.filter((name) => !columns.includes(name));
  if (missing.length) return { error: `The header row must name the columns endpoint, p256dh and auth (missing: ${missing.join(', ')}); the columns an import reads are ${SUBSCRIBER_IMPORT_FIELDS.join(', ')}` };
  return { columns };
}

/** The known fields of a CSV record; other columns (Herald's export adds id) are ignored. */
export function csvFields(text: string, columns: readonly string[]): RowFields | string {
  const cells = csvCells(text);
  if (cells.length !== columns.length) return `the row has ${cells.length} cells, the header ${columns.length}`;
  const fields: RowFields = {};
  for (let i = 0; i < columns.length; i += 1) {
    const name = columns[i] as SubscriberImportField;
    if ((SUBSCRIBER_IMPORT_FIELDS as readonly string[]).includes(name)) fields[name] = unguard(cells[i]!.trim());
  }
  return fields;
}

/** The known fields of a JSON Lines record; numbers (created_at) are taken as text. */
export function jsonFields(text: string): RowFields | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'the line is not valid JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'the line is not a JSON object';
  const fields: RowFields = {};
  for (const name of SUBSCRIBER_IMPORT_FIELDS) {
    const cell = (value as Record<string, unknown>)[name];
    if (typeof cell === 'string') fields[name] = cell.trim();
    else if (typeof cell === 'number' && Number.isFinite(cell)) fields[name] = String(cell);
    else if (name === 'tags' && Array.isArray(cell)) fields.tags = cell.filter((tag): tag is string => typeof tag === 'string');
  }
  // A nested browser PushSubscription ({ endpoint, keys: { p256dh, auth } }) is read as well.
  const keys = (value as { keys?: unknown }).keys;
  if (typeof keys === 'object' && keys !== null) {
    for (const name of ['p256dh', 'auth'] as const) {
      const key = (keys as Record<string, unknown>)[name];
      if (fields[name] === undefined && typeof key === 'string') fields[name] = key.trim();
    }
  }
  return fields;
}

const text = (value: string | string[] | undefined): string => (typeof value === 'string' ? value : '');

/** `status` values of a subscriber who left (Herald's export writes `inactive`). */
const INACTIVE_STATUSES = new Set(['inactive', 'unsubscribed']);

/** Below this an epoch number is seconds, not milliseconds: 10^11 ms is March 1973, 10^11 s the year 5138. */
const EPOCH_SECONDS_BELOW = 1e11;

/** ISO 8601, epoch seconds or epoch milliseconds, not in the future; else null (the row is kept, subscribed "now"). */
function subscribedAt(value: string, now: number): number | null {
  if (!value) return null;
  let millis: number;
  if (/^\d{1,15}$/.test(value)) millis = Number(value) < EPOCH_SECONDS_BELOW ? Number(value) * 1000 : Number(value);
  else if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) millis = Date.parse(value);
  else return null;
  return Number.isFinite(millis) && millis > 0 && millis <= now ? millis : null;
}

function tagsOf(value: string | string[] | undefined): string[] {
  const list = Array.isArray(value) ? value : (value ?? '').split(SUBSCRIBER_EXPORT_TAG_SEPARATOR);
  const tags = new Set<string>();
  for (const raw of list) {
    const tag = raw.trim();
    if (tag && tag.length <= SUBSCRIBER_TAG_MAX_LENGTH && tags.size < SUBSCRIBER_TAG_MAX_COUNT) tags.add(tag);
  }
  return [...tags];
}

const label = (value: string, max = 64): string | null => (value ? value.slice(0, max) : null);

/** base64url without padding, as keys are stored. */
const base64url = (key: string) => key.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/** A row's fields checked: the subscriber to store, or why not. */
export function checkRow(line: number, fields: RowFields | string, context: RowContext): ImportedRow | RejectedRow {
  if (typeof fields === 'string') return { line, reason: 'bad_row', detail: fields, endpoint: null };
  const rawEndpoint = text(fields.endpoint);
  const endpointOrNull = rawEndpoint || null;
  for (const name of REQUIRED) {
    if (!text(fields[name])) return { line, reason: 'bad_row', detail: `${name} is empty`, endpoint: endpointOrNull };
  }
  // Herald's export says who had left; other platforms' words for it are mapped to this column by the owner.
  if (INACTIVE_STATUSES.has(text(fields.status).toLowerCase())) {
    return { line, reason: 'inactive', detail: 'status says this subscriber had left: an import never brings back someone who unsubscribed', endpoint: endpointOrNull };
  }
  // The public subscribe API's own checks, the endpoint's and the keys' apart, so each failure has its reason.
  let endpoint: string;
  let keys: { p256dh: string; auth: string };
  try {
    endpoint = checkPushEndpoint(rawEndpoint, context.extraPushOrigins);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return { line, reason: 'endpoint_not_allowed', detail: error.message.replace(/^subscription\./, ''), endpoint: endpointOrNull };
  }
  try {
    keys = checkPushKeys({ p256dh: text(fields.p256dh), auth: text(fields.auth) });
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return { line, reason: 'bad_key', detail: error.message.replace(/^subscription\.keys\./, ''), endpoint: endpointOrNull };
  }
  const checked = { endpoint, ...keys };
  const named = text(fields.vapid_public_key);
  let vapidKeyId = context.defaultKeyId;
  if (named) {
    const found = context.keysByPublicKey.get(base64url(named));
    if (!found) return { line, reason: 'unknown_vapid_key', detail: 'no VAPID key of this site has that public key: import the key pair first (Settings → VAPID Keys)', endpoint: checked.endpoint };
    vapidKeyId = found;
  }
  const country = text(fields.country).toUpperCase();
  const externalId = text(fields.external_id);
  return {
    line,
    endpoint: checked.endpoint,
    endpointHash: endpointHash(checked.endpoint),
    p256dh: checked.p256dh,
    auth: checked.auth,
    vapidKeyId,
    subscribedAt: subscribedAt(text(fields.created_at), context.now),
    browser: label(text(fields.browser)),
    os: label(text(fields.os)),
    country: /^[A-Z]{2}$/.test(country) ? country : country === UNKNOWN.toUpperCase() ? UNKNOWN : null,
    language: languageTag(text(fields.language)),
    timezone: knownTimezone(text(fields.timezone)),
    tags: tagsOf(fields.tags),
    externalId: externalId && externalId.length <= EXTERNAL_ID_MAX ? externalId : null,
  };
}

export const isRejected = (row: ImportedRow | RejectedRow): row is RejectedRow => 'reason' in row;
