import crypto from 'node:crypto';
import { WEBHOOKS_PER_SITE_MAX, WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT, type CreatedWebhook, type Webhook, type WebhookAttempt, type WebhookEventType } from '@herald/contracts';
import type { AppContext } from '../../context';
import { lockSiteLimit } from '../../db/lock-order';
import { conflict, notFound } from '../../platform/errors';
import { createOutboundHttpFromConfig, type OutboundHttp } from '../../platform/outbound-http';
import { iso, isoOrNull } from '../../platform/responses';
import { checkSiteRole } from '../../platform/site-roles';
import { recordAudit } from '../audit-log/record';
import { requireSiteRole } from '../sites/service';
import { WEBHOOK_ATTEMPT_LEASE_MS, attemptDelivery } from './deliver';
import { eventBody } from './events';
import * as repo from './repository';
import { generateWebhookSecret, newMessageId } from './signing';

// Settings → Webhooks (docs/product.md, "Webhooks"). Managing webhooks is the
// admin's, like API keys (docs/product.md §6: an admin may do everything but
// members, the identity secret and deleting the site): a webhook sends the
// site's audience events out of Herald, as the subscriber export does.
const ROLE = 'admin' as const;

function toWebhook(row: repo.WebhookRow): Webhook {
  const events = JSON.parse(row.events) as string[];
  return { id: row.id, url: row.url, events: WEBHOOK_EVENT_TYPES.filter((type) => events.includes(type)), created_at: iso(row.created_at) };
}

type AttemptRow = Awaited<ReturnType<typeof repo.listAttempts>>[number];

function toAttempt(row: AttemptRow): WebhookAttempt {
  return {
    id: row.id,
    message_id: row.delivery_id,
    event_type: row.event_type,
    attempt: Number(row.attempt),
    attempted_at: iso(row.attempted_at),
    status_code: row.status_code === null ? null : Number(row.status_code),
    error: row.error,
    delivery_status: row.status,
    next_attempt_at: row.status === 'pending' ? isoOrNull(row.next_attempt_at) : null,
  };
}

export function createWebhooksService(ctx: Pick<AppContext, 'db' | 'clock' | 'config' | 'dbKind'>, options: { outbound?: OutboundHttp } = {}) {
  const { db, clock } = ctx;
  const outbound = options.outbound ?? createOutboundHttpFromConfig(ctx.config);
  return {
    async create(userId: string, siteId: string, input: { url: string; events: WebhookEventType[] }): Promise<CreatedWebhook> {
      await requireSiteRole(ctx, userId, siteId, ROLE);
      const row: repo.WebhookRow = {
        id: crypto.randomUUID(),
        site_id: siteId,
        url: input.url,
        events: JSON.stringify(input.events),
        secret: generateWebhookSecret(),
        clicks_next_at: null,
        created_at: clock.now(),
      };
      await db.transaction().execute(async (trx) => {
        // Counted under the site's lock for this limit: webhooks created at once cannot all count below it.
        await lockSiteLimit(trx, ctx.dbKind, 'webhooks', siteId);
        if ((await repo.countWebhooks(trx, siteId)) >= WEBHOOKS_PER_SITE_MAX) {
          throw conflict(`A site can have at most ${WEBHOOKS_PER_SITE_MAX} webhooks; delete one you no longer use first`);
        }
        await repo.insertWebhook(trx, row);
        await recordAudit(ctx, { siteId, actor: { userId }, action: 'created', subject: { type: 'webhook', id: row.id, label: row.url }, detail: { events: input.events } }, trx);
      });
      return { ...toWebhook(row), secret: row.secret };
    },

    async list(userId: string, siteId: string): Promise<Webhook[]> {
      await requireSiteRole(ctx, userId, siteId, ROLE);
      return (await repo.listWebhooks(db, siteId)).map(toWebhook);
    },

    /** Deleting a webhook deletes its pending events and its log with it. */
    async remove(userId: string, webhookId: string): Promise<void> {
      const row = checkSiteRole(await repo.findWebhookOfUser(db, userId, webhookId), ROLE, 'Webhook');
      await db.transaction().execute(async (trx) => {
        if (!(await repo.deleteWebhook(trx, row.id))) throw notFound('Webhook');
        await recordAudit(ctx, { siteId: row.site_id, actor: { userId }, action: 'deleted', subject: { type: 'webhook', id: row.id, label: row.url } }, trx);
      });
    },

    async deliveries(userId: string, webhookId: string, limit: number): Promise<WebhookAttempt[]> {
      const row = checkSiteRole(await repo.findWebhookOfUser(db, userId, webhookId), ROLE, 'Webhook');
      return (await repo.listAttempts(db, row.id, limit)).map(toAttempt);
    },

    /**
     * "Send test event": a `webhook.test` event for this webhook alone,
     * attempted now and answered with that attempt; it is retried like any
     * event when it fails.
     */
    async sendTest(userId: string, webhookId: string): Promise<WebhookAttempt> {
      const row = checkSiteRole(await repo.findWebhookOfUser(db, userId, webhookId), ROLE, 'Webhook');
      const now = clock.now();
      const id = newMessageId();
      // Inserted already claimed (next_attempt_at = the lease's end): the scheduler leaves it to this call.
      await repo.insertDeliveries(db, [
        {
          id,
          webhook_id: row.id,
          event_type: WEBHOOK_TEST_EVENT,
          payload: eventBody(WEBHOOK_TEST_EVENT, now, { site_id: row.site_id, webhook_id: row.id, message: 'A test event from Herald: your endpoint receives and verifies webhooks.' }),
          status: 'pending',
          attempts: 0,
          next_attempt_at: now + WEBHOOK_ATTEMPT_LEASE_MS,
          created_at: now,
          finished_at: null,
        },
      ]);
      const result = await attemptDelivery({ db, clock, outbound }, id, now + WEBHOOK_ATTEMPT_LEASE_MS);
      const attempt = result ? (await repo.listAttempts(db, row.id, 1, result.attemptId))[0] : undefined;
      if (!attempt) throw notFound('Webhook');
      return toAttempt(attempt);
    },
  };
}
