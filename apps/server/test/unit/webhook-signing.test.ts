import { describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../src/features/webhooks/deliver';
import { generateWebhookSecret, newMessageId, signWebhook } from '../../src/features/webhooks/signing';

// Standard Webhooks (https://www.standardwebhooks.com): the example of the
// specification's documentation, signed by Herald's code.
describe('webhook signing', () => {
  it('signs the specification’s example exactly as it says', () => {
    expect(signWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it('makes whsec_ secrets of 32 random bytes and msg_ ids, never twice the same', () => {
    const secrets = new Set(Array.from({ length: 50 }, generateWebhookSecret));
    expect(secrets.size).toBe(50);
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    }
    expect(newMessageId()).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
  });

  it('waits 30 s after the first failure, doubling up to 6 hours', () => {
    expect([1, 2, 3, 4, 10, 11, 12, 20].map(retryDelayMs)).toEqual([30_000, 60_000, 120_000, 240_000, 15_360_000, 21_600_000, 21_600_000, 21_600_000]);
  });
});
