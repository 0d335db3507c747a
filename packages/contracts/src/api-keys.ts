import { z } from 'zod';
import { envelope } from './common';

// Site API keys: the credential a site's own backend uses for the v1 API
// (POST /api/v1/sites/{siteId}/events). One key belongs to one site.

/** Every key starts with this, so a leaked one is easy to recognise (and to grep for in a repository). */
export const API_KEY_PREFIX = 'hk_';
export const API_KEY_NAME_MAX = 100;

export const createApiKeyBody = z.object({
  name: z
    .string({ message: 'Name is required' })
    .trim()
    .min(1, 'Name is required')
    .max(API_KEY_NAME_MAX, `Name must be at most ${API_KEY_NAME_MAX} characters`),
});
export type CreateApiKeyBody = z.infer<typeof createApiKeyBody>;

/** A key as listed: never the key itself, only its first characters to tell keys apart. */
export const apiKey = z.object({
  id: z.string(),
  name: z.string(),
  /** The key's first characters, e.g. `hk_3fA9x2Qe`. */
  prefix: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
});
export type ApiKey = z.infer<typeof apiKey>;

/** `key` is the secret: shown in this answer only; Herald stores a hash. */
export const createApiKeyResponse = envelope(z.object({ api_key: apiKey, key: z.string() }));
export type CreatedApiKey = z.infer<typeof createApiKeyResponse>['data'];

export const apiKeysResponse = envelope(z.object({ api_keys: z.array(apiKey) }));

export const revokeApiKeyResponse = envelope(z.object({ revoked: z.literal(true) }));
