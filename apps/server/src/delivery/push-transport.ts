/** One encrypted push to one subscription, as the batch sender hands it to the push client. */
export interface PushMessage {
  endpoint: string;
  /** Subscriber keys, base64url (RFC 8291). */
  p256dh: string;
  auth: string;
  /** The JSON the service worker receives (already size-checked). */
  payload: string;
  ttlSeconds: number;
  urgency: 'very-low' | 'low' | 'normal' | 'high';
  topic: string;
  vapid: { publicKey: string; privateKey: string; subject: string };
}

export type PushResult =
  | { kind: 'sent'; status: number }
  | { kind: 'gone'; status: number; reason: string }
  | { kind: 'retry'; reason: string; retryAfterMs?: number; status?: number }
  | { kind: 'failed'; reason: string; status?: number };

/** The push client seen from the delivery jobs. */
export interface PushTransport {
  /** Sends every message (bounded concurrency); calls onResult once per message, in completion order. */
  sendAll(messages: PushMessage[], onResult: (index: number, result: PushResult) => void): Promise<void>;
  close(): Promise<void>;
}
