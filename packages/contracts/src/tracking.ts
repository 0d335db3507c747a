import { z } from 'zod';
import { envelope } from './common';

/** The service worker's beacon: the token travels inside the push payload. */
export const beaconBody = z.object({
  type: z.enum(['delivered', 'clicked'], { message: 'type must be "delivered" or "clicked"' }),
  token: z.string().min(1, 'token is required').max(200, 'Invalid token'),
});
export const beaconResponse = envelope(z.object({ counted: z.boolean() }));
