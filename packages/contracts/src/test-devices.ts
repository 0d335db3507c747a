import { z } from 'zod';
import { envelope, httpUrl, optionalImageUrl } from './common';
import { actionButtons, NOTIFICATION_MESSAGE_MAX, notificationMessage, notificationTitle } from './notifications';
import { PUSH_ENDPOINT_MAX_LENGTH } from './subscribers';

// Test devices (issue 12): the owner's own browsers, marked so that "Send
// test" reaches them and nobody else. A test push carries the same payload as
// a real one with a token that counts nowhere.

export const TEST_DEVICE_NAME_MAX = 60;
/** How long a "make this browser a test device" link works. */
export const TEST_DEVICE_LINK_MINUTES = 60;
/** The query parameter the SDK looks for: `https://shop.example/?herald_test=CODE`. */
export const TEST_DEVICE_LINK_PARAMETER = 'herald_test';

/** "Firefox on Linux": what a device marked without a name is called. */
export function defaultTestDeviceName(browser: string, os: string): string {
  return `${browser} on ${os}`;
}

export const testDevice = z.object({
  subscriber_id: z.string(),
  name: z.string(),
  browser: z.string(),
  os: z.string(),
});
export type TestDevice = z.infer<typeof testDevice>;

export const testDevicesResponse = envelope(z.object({ devices: z.array(testDevice) }));

export const updateTestDeviceBody = z
  .object({
    enabled: z.boolean({ message: 'enabled must be true or false' }),
    /** Empty or left out: "<Browser> on <OS>" (or the name it has). */
    name: z.string({ message: 'name must be text' }).trim().max(TEST_DEVICE_NAME_MAX, `name must be at most ${TEST_DEVICE_NAME_MAX} characters`).optional(),
  })
  .strict();
export type UpdateTestDeviceBody = z.input<typeof updateTestDeviceBody>;
/** The device as marked; null once it is no test device any more. */
export const updateTestDeviceResponse = envelope(z.object({ device: testDevice.nullable() }));

export const testDeviceLinkResponse = envelope(z.object({ link: z.object({ url: z.string(), expires_at: z.string() }) }));
export type TestDeviceLink = z.infer<typeof testDeviceLinkResponse>['data']['link'];

/** Public: the SDK, after subscribing from a test-device link, claims the link for this browser's subscription. */
export const claimTestDeviceBody = z.object({
  endpoint: z.string({ message: 'endpoint is required' }).trim().min(1, 'endpoint is required').max(PUSH_ENDPOINT_MAX_LENGTH),
  code: z.string({ message: 'code is required' }).trim().min(1, 'code is required').max(100, 'Invalid code'),
});
export const claimTestDeviceResponse = envelope(z.object({ device: testDevice }));

/** The composer's content, for a test of a notification not saved yet. */
export const testSendContentBody = z.object({
  title: notificationTitle,
  message: notificationMessage(NOTIFICATION_MESSAGE_MAX),
  destination_url: httpUrl,
  icon_url: optionalImageUrl,
  image_url: optionalImageUrl,
  actions: actionButtons.optional(),
});
export type TestSendContentBody = z.input<typeof testSendContentBody>;

export const TEST_SEND_OUTCOMES = ['sent', 'failed', 'expired'] as const;

export const testSendResult = z.object({
  /** Test devices the test went to. */
  devices: z.number(),
  /** Accepted by their push services. */
  sent: z.number(),
  failed: z.number(),
  results: z.array(
    z.object({
      subscriber_id: z.string(),
      name: z.string(),
      /** expired: the push service says the subscription is gone (404/410); the subscriber was deactivated. */
      outcome: z.enum(TEST_SEND_OUTCOMES),
      error: z.string().nullable(),
    }),
  ),
});
export type TestSendResult = z.infer<typeof testSendResult>;
export const testSendResponse = envelope(z.object({ test: testSendResult }));
