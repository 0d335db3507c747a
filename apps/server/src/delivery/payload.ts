// The JSON Herald's service worker receives in its `push` event:
//
//   { title, body, url, icon, image, tag, token, api, actions? }
//
// - icon / image: absolute http(s) URLs, or null when the notification has none.
// - tag: derived from the notification, so the browser replaces rather than
//   stacks a second copy of the same notification (Notification API `tag`).
// - token: the caller's opaque delivery token, sent back in the worker's
//   delivered/clicked beacons.
// - api: Herald's PUBLIC_URL, where those beacons go.
// - actions: at most 2 buttons (spec "Constants": up to 2 action buttons),
//   each `{ action, title, url }`; left out when there are none.
//
// A fan-out sends the same notification to every subscriber with only the
// token changing, so the JSON is serialised once into a template and each
// message costs one buffer of the final size.
import { MAX_PLAINTEXT_LENGTH } from './encryption';

/** Chrome shows at most two action buttons (Notification.maxActions), and the spec allows two. */
export const MAX_ACTIONS = 2;

export interface PushAction {
  /** Identifier the worker receives in `notificationclick` as `event.action`. */
  action: string;
  title: string;
  /** Where a click on this button goes. */
  url: string;
}

/** What the notification shows; the same for every subscriber of one send. */
export interface NotificationContent {
  /** Identifies the send (notification id, or id and run): becomes the tag. */
  collapseKey: string | number;
  title: string;
  body: string;
  /** Destination URL opened on click. */
  url: string;
  icon?: string | null;
  image?: string | null;
  actions?: PushAction[];
  /** Keep it on screen until the visitor acts on it (Notification `requireInteraction`). */
  requireInteraction?: boolean;
  /** Alert again when it replaces a notification with the same tag (Notification `renotify`). */
  renotify?: boolean;
}

export class PushPayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PushPayloadError';
  }
}

/** Thrown when the encoded payload would not fit in one 4096-byte push message. */
export class PushPayloadTooLargeError extends PushPayloadError {
  constructor(
    public readonly bytes: number,
    public readonly limit: number = MAX_PLAINTEXT_LENGTH,
  ) {
    super(
      `This notification is too large for web push: its payload is ${bytes} bytes and at most ${limit} fit in one push message. Shorten the title, message, URLs or action buttons.`,
    );
    this.name = 'PushPayloadTooLargeError';
  }
}

/** The Notification `tag` for a send. */
export function notificationTag(collapseKey: string | number): string {
  return `herald-${collapseKey}`;
}

function checkHttpUrl(value: string, field: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new PushPayloadError(`The ${field} "${value}" is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new PushPayloadError(`The ${field} must be an http:// or https:// URL`);
  }
}

/** Renders the payload for one subscriber; the template has already been size-checked without a token. */
export interface PayloadTemplate {
  /** Bytes of the payload with an empty token. */
  readonly baseLength: number;
  /** The UTF-8 JSON bytes for one delivery token; throws PushPayloadTooLargeError when it does not fit. */
  render(token: string): Buffer;
}

/**
 * Serialises a notification once for a whole fan-out. The service worker
 * reads `{title, body, url, icon, image, tag, token, api, actions?}`
 * (packages/sdk worker/handlers.ts, HeraldNotificationData): the token is the
 * only part that differs per subscriber, so it is spliced into fixed bytes. Throws PushPayloadError
 * for a bad URL or too many actions, and PushPayloadTooLargeError when even an
 * empty token would not fit — before anything is sent.
 */
export function createPayloadTemplate(content: NotificationContent, api: string): PayloadTemplate {
  checkHttpUrl(content.url, 'destination URL');
  if (content.icon) checkHttpUrl(content.icon, 'icon URL');
  if (content.image) checkHttpUrl(content.image, 'image URL');
  const actions = content.actions ?? [];
  if (actions.length > MAX_ACTIONS) throw new PushPayloadError(`A notification can have at most ${MAX_ACTIONS} action buttons`);
  for (const action of actions) checkHttpUrl(action.url, `URL of the "${action.title}" button`);

  const json = JSON.stringify;
  const head = Buffer.from(
    `{"title":${json(content.title)},"body":${json(content.body)},"url":${json(content.url)},` +
      `"icon":${json(content.icon || null)},"image":${json(content.image || null)},` +
      `"tag":${json(notificationTag(content.collapseKey))},"token":`,
  );
  const actionsJson = actions.length ? `,"actions":${json(actions.map((a) => ({ action: a.action, title: a.title, url: a.url })))}` : '';
  // Only when set: every byte counts against the 4 KB a push message holds.
  const flagsJson = `${content.requireInteraction ? ',"requireInteraction":true' : ''}${content.renotify ? ',"renotify":true' : ''}`;
  const tail = Buffer.from(`,"api":${json(api)}${actionsJson}${flagsJson}}`);
  const baseLength = head.length + 2 + tail.length; // 2 = the quotes of an empty token
  if (baseLength > MAX_PLAINTEXT_LENGTH) throw new PushPayloadTooLargeError(baseLength);

  return {
    baseLength,
    render(token: string): Buffer {
      const quoted = json(token);
      const tokenLength = Buffer.byteLength(quoted);
      const length = head.length + tokenLength + tail.length;
      if (length > MAX_PLAINTEXT_LENGTH) throw new PushPayloadTooLargeError(length);
      const out = Buffer.allocUnsafe(length);
      head.copy(out, 0);
      out.write(quoted, head.length);
      tail.copy(out, head.length + tokenLength);
      return out;
    },
  };
}
