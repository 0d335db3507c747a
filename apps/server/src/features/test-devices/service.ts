import crypto from 'node:crypto';
import {
  defaultTestDeviceName,
  TEST_DEVICE_LINK_MINUTES,
  TEST_DEVICE_LINK_PARAMETER,
  UNKNOWN,
  type TestDevice,
  type TestDeviceLink,
  type TestSendResult,
  type testSendContentBody,
  type updateTestDeviceBody,
} from '@herald/contracts';
import type { z } from 'zod';
import type { AppContext } from '../../context';
import type { SiteRow } from '../../db/schema';
import { notificationContent, siteVapidCredentials, subscriberVapidCredentials } from '../../delivery/notification-content';
import type { NotificationContent } from '../../delivery/payload';
import { PushPayloadError } from '../../delivery/payload';
import { endpointHash } from '../../delivery/push-endpoints';
import { sendTestPushes, TEST_PUSH_MAX_DEVICES } from '../../delivery/test-push';
import { VapidSubjectError } from '../../delivery/vapid';
import { badRequest, conflict, HttpError, notFound, retryAfterSeconds, tooManyRequests } from '../../platform/errors';
import { DatabaseRateLimiter } from '../../platform/rate-limit';
import { iso } from '../../platform/responses';
import { checkSiteRole } from '../../platform/site-roles';
import { requireSiteRole } from '../sites/service';
import * as repo from './repository';

const HOUR_MS = 3_600_000;
/** Test-device links one user may make per hour. */
export const TEST_DEVICE_LINKS_PER_USER_PER_HOUR = 30;
/** Test sends one user may make per hour: each is a push to every test device. */
export const TEST_SENDS_PER_USER_PER_HOUR = 120;

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

function toTestDevice(row: { id: string; browser: string | null; os: string | null; test_device_name: string | null }): TestDevice {
  const browser = row.browser ?? UNKNOWN;
  const os = row.os ?? UNKNOWN;
  return { subscriber_id: row.id, name: row.test_device_name ?? defaultTestDeviceName(browser, os), browser, os };
}

/** The site's address with `?herald_test=CODE`, keeping its own path and query. */
function linkUrl(siteUrl: string, code: string): string {
  const url = new URL(siteUrl);
  url.searchParams.set(TEST_DEVICE_LINK_PARAMETER, code);
  url.hash = '';
  return url.href;
}

/** Upload paths (`/uploads/…`) become absolute: a push payload carries absolute URLs only. */
function absolute(url: string | null | undefined, publicUrl: string): string | null {
  if (!url) return null;
  return url.startsWith('/') ? new URL(url, `${publicUrl}/`).href : url;
}

/**
 * Test devices (issue 12): the owner's own browsers, marked from a one-time
 * link the SDK claims or from the Subscribers page, and "Send test", which
 * reaches them and nobody else and counts nowhere (delivery/test-push.ts).
 */
export function createTestDevicesService(ctx: AppContext) {
  const { db, clock, config } = ctx;
  const limiter = new DatabaseRateLimiter(db);

  async function limit(key: string, perHour: number, what: string): Promise<void> {
    const { hits, retryAfterMs } = await limiter.hit(key, HOUR_MS, clock.now());
    if (hits <= perHour) return;
    const seconds = retryAfterSeconds(retryAfterMs);
    throw tooManyRequests(`Too many ${what}. Please try again in ${seconds} seconds.`, seconds);
  }

  async function sendToTestDevices(userId: string, site: SiteRow, content: NotificationContent): Promise<TestSendResult> {
    const devices = await repo.listTestDevices(db, site.id, TEST_PUSH_MAX_DEVICES);
    if (!devices.length) {
      throw conflict(
        'This site has no test devices yet. Open the test-device link from the setup checklist in the browser you want to test with, or mark a subscriber as a test device on the Subscribers page.',
      );
    }
    await limit(`test-send:user:${userId}`, TEST_SENDS_PER_USER_PER_HOUR, 'test sends');
    let outcomes;
    try {
      // Each device is signed with the key it subscribed with.
      const vapidOf = subscriberVapidCredentials(siteVapidCredentials(site, await repo.findUserEmail(db, userId), config.vapidSubject));
      outcomes = await sendTestPushes({
        config,
        secret: ctx.secret,
        content,
        targets: devices.map((device) => ({ subscriberId: device.id, endpoint: device.endpoint, keys: { p256dh: device.p256dh, auth: device.auth }, vapid: vapidOf(device) })),
      });
    } catch (error) {
      // Nothing was sent: the content or the site's VAPID subject cannot be used; the owner must change it.
      if (error instanceof PushPayloadError) throw badRequest(error.message, 'payload_too_large');
      if (error instanceof VapidSubjectError) throw badRequest(error.message, 'vapid_subject');
      throw error;
    }

    const now = clock.now();
    const expired = outcomes.filter((outcome) => outcome.outcome === 'expired');
    if (expired.length) {
      // 404/410: the browser's subscription is gone for good, as on any send (docs/web-push.md).
      await db.transaction().execute(async (trx) => {
        const gone = expired.map((outcome) => ({ subscriberId: outcome.subscriberId, endpointHashSentTo: endpointHash(devices.find((d) => d.id === outcome.subscriberId)!.endpoint) }));
        const unsubscribed = await ctx.deliveryPorts.deactivateGoneSubscribers(trx, gone, now);
        // Lost at its push service, as a real send counts it (delivery/run-counters.ts).
        await ctx.deliveryPorts.addToSiteCounters(trx, site.id, now, { unsubscribed, lost_at_push_service: unsubscribed });
      });
    }
    const sent = outcomes.filter((outcome) => outcome.outcome === 'sent').length;
    if (sent) await repo.markTestSent(db, site.id, now);
    return {
      devices: devices.length,
      sent,
      failed: outcomes.length - sent,
      results: outcomes.map((outcome) => ({
        subscriber_id: outcome.subscriberId,
        name: toTestDevice(devices.find((d) => d.id === outcome.subscriberId)!).name,
        outcome: outcome.outcome,
        error: outcome.error,
      })),
    };
  }

  return {
    async list(userId: string, siteId: string): Promise<TestDevice[]> {
      await requireSiteRole(ctx, userId, siteId, 'viewer');
      return (await repo.listTestDevices(db, siteId, TEST_PUSH_MAX_DEVICES)).map(toTestDevice);
    },

    /** A one-time link to the site that makes the browser opening it a test device. Only the code's hash is kept. */
    async createLink(userId: string, siteId: string): Promise<TestDeviceLink> {
      const site = await requireSiteRole(ctx, userId, siteId, 'editor');
      await limit(`test-device-link:user:${userId}`, TEST_DEVICE_LINKS_PER_USER_PER_HOUR, 'test-device links');
      const now = clock.now();
      const code = crypto.randomBytes(24).toString('base64url');
      const expiresAt = now + TEST_DEVICE_LINK_MINUTES * 60_000;
      await repo.deleteSpentLinks(db, site.id, now);
      await repo.insertLink(db, { code_hash: sha256(code), site_id: site.id, created_by: userId, created_at: now, expires_at: expiresAt });
      return { url: linkUrl(site.url, code), expires_at: iso(expiresAt) };
    },

    /** Public: the SDK, subscribed from a test-device link, makes its subscriber a test device. */
    async claim(siteId: string, endpoint: string, code: string): Promise<TestDevice> {
      const codeHash = sha256(code);
      const link = await repo.findLink(db, codeHash);
      const now = clock.now();
      const createNew = 'Create a new one in Herald’s setup checklist.';
      if (!link || link.site_id !== siteId) throw notFound('Test-device link');
      if (link.used_at !== null) throw new HttpError(410, `This test-device link was used already. ${createNew}`, 'link_used');
      if (link.expires_at <= now) throw new HttpError(410, `This test-device link has expired. ${createNew}`, 'link_expired');
      const subscriber = await repo.findSubscriberByEndpointHash(db, siteId, endpointHash(endpoint));
      if (!subscriber || subscriber.is_active !== 1) throw notFound('Subscriber');
      const name = subscriber.test_device === 1 && subscriber.test_device_name ? subscriber.test_device_name : toTestDevice({ ...subscriber, test_device_name: null }).name;
      const claimed = await db.transaction().execute(async (trx) => {
        if (!(await repo.useLink(trx, codeHash, subscriber.id, now))) return false;
        await repo.setTestDevice(trx, subscriber.id, name, now);
        return true;
      });
      if (!claimed) throw new HttpError(410, `This test-device link was used already. ${createNew}`, 'link_used');
      return toTestDevice({ ...subscriber, test_device_name: name });
    },

    /** Marks a subscriber as a test device (named "<Browser> on <OS>" unless given a name), or unmarks it. */
    async update(userId: string, subscriberId: string, input: z.output<typeof updateTestDeviceBody>): Promise<TestDevice | null> {
      const subscriber = checkSiteRole(await repo.findSubscriberOfUser(db, userId, subscriberId), 'editor', 'Subscriber');
      const now = clock.now();
      if (!input.enabled) {
        await repo.setTestDevice(db, subscriber.id, null, now);
        return null;
      }
      if (subscriber.is_active !== 1) throw conflict('This subscriber has unsubscribed: only active subscribers can be test devices.');
      const kept = subscriber.test_device === 1 ? subscriber.test_device_name : null;
      const name = input.name || kept || toTestDevice({ ...subscriber, test_device_name: null }).name;
      await repo.setTestDevice(db, subscriber.id, name, now);
      return toTestDevice({ ...subscriber, test_device_name: name });
    },

    /** "Send test" of a saved notification: its current content, to the site's test devices only. */
    async sendNotificationTest(userId: string, notificationId: string): Promise<TestSendResult> {
      const notification = checkSiteRole(await repo.findNotificationOfUser(db, userId, notificationId), 'editor', 'Notification');
      const site = await requireSiteRole(ctx, userId, notification.site_id, 'editor');
      const content = notificationContent(notification, site);
      return sendToTestDevices(userId, site, { ...content, collapseKey: `test-${crypto.randomUUID()}`, icon: absolute(content.icon, config.publicUrl) });
    },

    /** "Send test" from the composer before saving: the content as typed. */
    async sendContentTest(userId: string, siteId: string, input: z.output<typeof testSendContentBody>): Promise<TestSendResult> {
      const site = await requireSiteRole(ctx, userId, siteId, 'editor');
      const content: NotificationContent = {
        collapseKey: `test-${crypto.randomUUID()}`,
        title: input.title,
        body: input.message,
        url: input.destination_url,
        icon: absolute(input.icon_url ?? site.icon, config.publicUrl),
        image: absolute(input.image_url, config.publicUrl),
        actions: (input.actions ?? []).map((action, index) => ({ action: `action-${index + 1}`, title: action.title, url: action.url })),
      };
      return sendToTestDevices(userId, site, content);
    },
  };
}

export type TestDevicesService = ReturnType<typeof createTestDevicesService>;
