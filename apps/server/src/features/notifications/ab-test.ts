// A/B tests of a one-time notification (docs/product.md, "A/B tests";
// docs/delivery.md, "A/B tests"): saving the variants with the notification,
// the decision (automatic, by the scheduler, or the owner's pick), and the
// figures the report shows. The engine's half (who gets which variant, the
// payload of each) is delivery/ab-split.ts.
import crypto from 'node:crypto';
import {
  AB_VARIANT_LETTERS,
  rate,
  type AbTestInput,
  type AbTestPerformance,
  type AbVariantInput,
  type AbVariantPerformance,
  type Notification,
  type NotificationType,
} from '@herald/contracts';
import type { AppContext } from '../../context';
import type { AbTestRow, NotificationRow } from '../../db/schema';
import { abRestRunKey, variantsOf, type StoredAbVariant } from '../../delivery/ab-split';
import { insertRun } from '../../delivery/runs';
import type { DueWorkSource } from '../../jobs/scheduler';
import { badRequest, conflict } from '../../platform/errors';
import { isoOrNull } from '../../platform/responses';
import { recordAudit } from '../audit-log/record';
import { audited, changeableNotification } from './access';
import * as repo from './ab-test-repository';
import { abVerdict } from './ab-test-stats';

type Db = Parameters<typeof repo.findAbTest>[0];

const letter = (index: number) => AB_VARIANT_LETTERS[index] ?? String(index + 1);

function toStored(variants: readonly AbVariantInput[]): StoredAbVariant[] {
  return variants.map((v) => ({ title: v.title, message: v.message, destination_url: v.destination_url, image_url: v.image_url ?? null }));
}

/** Variant A is the notification's own content: lists, "Send test" and duplicates show it. */
export function contentOfVariantA(variants: readonly AbVariantInput[]): Pick<NotificationRow, 'title' | 'message' | 'destination_url' | 'image_url'> {
  const [a] = toStored(variants);
  return { title: a!.title, message: a!.message, destination_url: a!.destination_url, image_url: a!.image_url };
}

/** The notification row as each variant renders it, for the payload size check on save. */
export function variantRows(row: NotificationRow, variants: readonly AbVariantInput[]): NotificationRow[] {
  return toStored(variants).map((v) => ({ ...row, ...v }));
}

/** What a create or edit body may say about A/B tests, checked against the notification's type (a clear 400). */
export function checkAbFields(
  type: NotificationType,
  body: { variants?: AbVariantInput[] | null; ab_test?: AbTestInput | null },
  hasVariants: boolean,
  /** The notification will be sent at a local time in each subscriber's zone (as saved, or as this body sets it). */
  localTime: boolean,
): void {
  if (type !== 'ONE_TIME' && (body.variants || body.ab_test)) throw badRequest('A/B tests are for one-time notifications: variants and ab_test need type ONE_TIME');
  if (body.ab_test && (body.variants === null || (body.variants === undefined && !hasVariants))) throw badRequest('ab_test needs variants: give 2 to 4 variants to test');
  // A sample drawn zone by zone would not be a random sample of the audience (docs/delivery.md, "A/B tests").
  const variants = body.variants !== undefined ? body.variants !== null : hasVariants;
  if (variants && localTime) throw badRequest('An A/B test is sent to the whole audience at once: turn off the local-time delivery, or remove the variants');
}

/** A test before its sample is drawn: nothing drawn, nothing decided (a new test, an edited one, a duplicate's). */
const NOT_STARTED = {
  status: 'testing',
  winner_index: null,
  decided_at: null,
  decided_by: null,
  significant: null,
  sample_audience: null,
  sample_seen: 0,
  sample_picked: 0,
} as const;

/**
 * Stores (or replaces, or removes) the variants and the test of a draft or
 * scheduled notification. `variants` undefined: unchanged, unless `ab_test`
 * changes the test's settings.
 */
export async function writeAbTest(
  db: Db,
  notification: Pick<NotificationRow, 'id' | 'site_id'>,
  body: { variants?: AbVariantInput[] | null; ab_test?: AbTestInput | null },
  now: number,
): Promise<void> {
  if (body.variants === null) return repo.deleteAbTest(db, notification.id);
  const existing = await repo.findAbTest(db, notification.id);
  const variants = body.variants ? JSON.stringify(toStored(body.variants)) : existing?.variants;
  if (!variants) return;
  const test = body.ab_test !== undefined ? body.ab_test : existing ? settingsOf(existing) : null;
  await repo.upsertAbTest(db, {
    notification_id: notification.id,
    site_id: notification.site_id,
    variants,
    sample_percent: test?.sample_percent ?? null,
    decide_after_minutes: test?.decide_after_minutes ?? null,
    decide: test?.decide ?? 'auto',
    ...NOT_STARTED,
    created_at: now,
    updated_at: now,
  });
}

/** An edit of variant A's fields without `variants` changes variant A too, so the two never disagree. */
export async function syncVariantA(db: Db, id: string, content: Partial<Pick<NotificationRow, 'title' | 'message' | 'destination_url' | 'image_url'>>, now: number): Promise<void> {
  const existing = await repo.findAbTest(db, id);
  if (!existing) return;
  const [a, ...others] = variantsOf(existing);
  const next: StoredAbVariant = {
    title: content.title ?? a!.title,
    message: content.message ?? a!.message,
    destination_url: content.destination_url ?? a!.destination_url,
    image_url: content.image_url !== undefined ? content.image_url : a!.image_url,
  };
  await db.updateTable('ab_tests').set({ variants: JSON.stringify([next, ...others]), updated_at: now }).where('notification_id', '=', id).execute();
}

/** A copy of a notification (duplicate) gets its variants and test settings, not its decision. */
export async function copyAbTest(db: Db, fromId: string, to: Pick<NotificationRow, 'id' | 'site_id'>, now: number): Promise<void> {
  const existing = await repo.findAbTest(db, fromId);
  if (!existing) return;
  await repo.upsertAbTest(db, {
    ...existing,
    notification_id: to.id,
    site_id: to.site_id,
    ...NOT_STARTED,
    created_at: now,
    updated_at: now,
  });
}

function settingsOf(row: AbTestRow): AbTestInput | null {
  if (row.sample_percent === null || row.decide_after_minutes === null) return null;
  return { sample_percent: row.sample_percent, decide_after_minutes: row.decide_after_minutes, metric: 'click_rate', decide: row.decide };
}

/** The notification response's `variants` and `ab_test`. */
export function abFieldsOf(row: AbTestRow | undefined): Pick<Notification, 'variants' | 'ab_test'> {
  if (!row) return { variants: null, ab_test: null };
  return { variants: variantsOf(row), ab_test: settingsOf(row) };
}

/** The report's per-variant figures and the test's state (GET /notifications/{id}/performance). */
export async function abPerformance(db: Db, notificationId: string): Promise<{ variants: AbVariantPerformance[]; ab_test: AbTestPerformance | null }> {
  const test = await repo.findAbTest(db, notificationId);
  if (!test) return { variants: [], ab_test: null };
  const [figures, sampleRun] = await Promise.all([repo.variantFigures(db, notificationId), repo.sampleRunOf(db, notificationId)]);
  const variants = variantsOf(test).map((variant, index) => {
    const f = figures.get(index) ?? { index, reach: 0, delivered: 0, clicked: 0 };
    return { index, title: variant.title, reach: f.reach, delivered: f.delivered, clicked: f.clicked, click_rate: rate(f.clicked, f.delivered) };
  });
  const verdict = abVerdict(variants);
  const sampleStarted = sampleRun?.started_at ?? null;
  const decided = test.status === 'decided';
  const status = test.sample_percent === null ? 'all_variants' : decided ? 'decided' : sampleStarted === null ? 'waiting' : 'testing';
  return {
    variants,
    ab_test: {
      status,
      sample_percent: test.sample_percent,
      decide: test.sample_percent === null ? null : test.decide,
      decides_at: !decided && test.decide === 'auto' && sampleStarted !== null && test.decide_after_minutes !== null ? isoOrNull(sampleStarted + test.decide_after_minutes * 60_000) : null,
      winner_index: test.winner_index,
      decided_at: isoOrNull(test.decided_at),
      decided_by: test.decided_by,
      leader_index: decided ? test.winner_index : verdict.leader,
      significant: decided ? test.significant === 1 : verdict.significant,
    },
  };
}

/**
 * Decides a test once: the winner is `pick` (the owner's) or the best click
 * rate of the sample. The status moves testing → decided by one conditional
 * UPDATE, and the remainder's run (dedupe key `ab-rest:<id>`) is created in
 * the same transaction, so however many schedulers race, or a process dies
 * half-way, there is one decision and one remainder run. False when another
 * caller decided first.
 */
export async function decideAbTest(ctx: Pick<AppContext, 'db' | 'clock'>, notificationId: string, now: number, pick?: { index: number; userId: string }): Promise<boolean> {
  return ctx.db.transaction().execute(async (trx) => {
    const test = await repo.findAbTest(trx, notificationId);
    const sampleRun = await repo.sampleRunOf(trx, notificationId);
    if (!test || test.status !== 'testing' || test.sample_percent === null || !sampleRun) return false;
    const figures = await repo.variantFigures(trx, notificationId);
    const verdict = abVerdict(variantsOf(test).map((_, index) => figures.get(index) ?? { index, delivered: 0, clicked: 0 }));
    const winner = pick?.index ?? verdict.leader;
    // Recorded: whether the winner's lead was significant; an owner's pick of a variant that was not ahead has none.
    const significant = verdict.significant && winner === verdict.leader;
    if (!(await repo.markDecided(trx, notificationId, { winner, significant, by: pick ? 'manual' : 'auto', at: now }))) return false;
    await insertRun(trx, {
      id: crypto.randomUUID(),
      notification_id: notificationId,
      site_id: test.site_id,
      dedupe_key: abRestRunKey(notificationId),
      due_at: now,
      segment_id: sampleRun.segment_id,
      subscriber_id: null,
      created_at: now,
    });
    await repo.markSendingToRest(trx, notificationId, now);
    if (pick) {
      const notification = await trx.selectFrom('notifications').select(['id', 'site_id', 'title']).where('id', '=', notificationId).executeTakeFirstOrThrow();
      await recordAudit(ctx, audited(pick.userId, notification, 'sent', { detail: { ab_test_winner: letter(winner) } }), trx);
    }
    return true;
  });
}

/** The scheduler's source of automatic decisions: tests whose wait has passed since their sample started, once the sample has finished. */
export function abTestDecisionSource(ctx: AppContext): DueWorkSource {
  return {
    name: 'ab-test-decisions',
    async runDue(now) {
      for (const id of await repo.dueAbDecisions(ctx.db, now)) {
        if (await decideAbTest(ctx, id, now)) ctx.log.info({ notificationId: id }, 'A/B test decided; the winner goes to the rest');
      }
    },
  };
}

/** "Send this variant to the rest": the owner's pick, once the sample has been sent and before the test is decided. */
export async function pickAbWinner(ctx: AppContext, userId: string, id: string, index: number): Promise<AbTestPerformance> {
  await changeableNotification(ctx.db, userId, id);
  const test = await repo.findAbTest(ctx.db, id);
  if (!test || test.sample_percent === null) throw conflict('This notification has no A/B test on a sample: there is no rest to send a winner to');
  if (index >= variantsOf(test).length) throw badRequest(`variant_index must be below ${variantsOf(test).length}: this test has variants ${variantsOf(test).map((_, i) => letter(i)).join(', ')}`);
  if (test.status === 'decided') throw conflict(`The winner was already decided: variant ${letter(test.winner_index ?? 0)}`);
  const sampleRun = await repo.sampleRunOf(ctx.db, id);
  if (!sampleRun || sampleRun.status === 'pending' || sampleRun.status === 'cancelled') throw conflict('The sample has not been sent yet: send the notification first');
  // The rest is everyone the sample did not take: known only once the sample's fan-out is over.
  if (sampleRun.status === 'sending') throw conflict('The sample is still being sent: pick the winner once it has finished');
  if (!(await decideAbTest(ctx, id, ctx.clock.now(), { index, userId }))) {
    const after = await repo.findAbTest(ctx.db, id);
    throw conflict(`The winner was already decided: variant ${letter(after?.winner_index ?? 0)}`);
  }
  ctx.wakeScheduler();
  return (await abPerformance(ctx.db, id)).ab_test!;
}
