import { z } from 'zod';
import { envelope } from './common';

// A site's VAPID key pairs (docs/product.md, "VAPID keys"): a site may bring
// its own (imported from another push platform) and rotate the primary one.
// Every subscriber stays on the key it subscribed with; the private key never
// leaves the server.

/** Longest key text accepted: a PEM private key with its headers is about 250 characters. */
export const VAPID_KEY_TEXT_MAX = 2000;

export const importVapidKeyBody = z
  .object({
    public_key: z.string({ message: 'public_key is required' }).trim().min(1, 'public_key is required').max(VAPID_KEY_TEXT_MAX, 'public_key is too long'),
    private_key: z.string({ message: 'private_key is required' }).trim().min(1, 'private_key is required').max(VAPID_KEY_TEXT_MAX, 'private_key is too long'),
  })
  .strict();
export type ImportVapidKeyBody = z.infer<typeof importVapidKeyBody>;

export const vapidKey = z.object({
  id: z.string(),
  /** base64url, the 65-byte uncompressed P-256 point (the SDK's applicationServerKey). */
  public_key: z.string(),
  is_primary: z.boolean(),
  /** Active subscribers whose subscription was made with this key. */
  subscriber_count: z.number().int(),
  created_at: z.string(),
});
export type VapidKey = z.infer<typeof vapidKey>;

export const vapidKeyParams = z.object({ siteId: z.string().min(1).max(100), keyId: z.string().min(1).max(100) });

export const vapidKeyResponse = envelope(z.object({ key: vapidKey }));
export const vapidKeysResponse = envelope(z.object({ keys: z.array(vapidKey) }));
export const retireVapidKeyResponse = envelope(z.object({ retired: z.literal(true) }));
