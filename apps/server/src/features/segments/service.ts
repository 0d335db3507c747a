import crypto from 'node:crypto';
import { SEGMENTS_PER_SITE_MAX, type Audience, type CreateSegmentInput, type Segment, type SegmentEstimate, type SegmentRules, type SiteRole, type UpdateSegmentInput } from '@herald/contracts';
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { AppContext } from '../../context';
import { isUniqueViolation } from '../../db/database';
import type { Database, SegmentRow, SegmentsTable } from '../../db/schema';
import { badRequest, conflict } from '../../platform/errors';
import { iso } from '../../platform/responses';
import { checkSiteRole } from '../../platform/site-roles';
import { changedFields, recordAudit } from '../audit-log/record';
import { requireSiteRole } from '../sites/service';
import * as repo from './repository';
import { countSegments, estimateBasis } from './sample-estimate';
import { parseStoredRules } from './segment-rules';
import { describeSegmentUses, findSegmentUses } from './segment-uses';

type Db = Kysely<Database> | Transaction<Database>;

/** A count as the API shows it: `is_estimate` with the sample's size, or exact. */
interface CountShown {
  count: number;
  is_estimate: boolean;
  sample_size: number | null;
}

/** The key two segments of a site may not share: names differ by more than case and spacing. */
const nameKey = (name: string) => name.trim().replace(/\s+/g, ' ').toLowerCase();

function duplicateName(name: string) {
  return conflict(`A segment named "${name}" already exists for this site`);
}

/**
 * Stored rules, read back. Only a hand-edited database holds rules that do
 * not parse: that is a server fault (a logged 500), and a send treats such a
 * segment as matching nobody (delivery/audience.ts).
 */
function rulesOf(row: SegmentRow): SegmentRules {
  const rules = parseStoredRules(row.rules);
  if (!rules) throw new Error(`segment ${row.id} has unreadable rules`);
  return rules;
}

/**
 * For other features (notifications, feeds, campaigns): the segment a send
 * targets must be one of the same site's. Answers 400 "Segment not found"
 * otherwise, also for another site's or another user's segment.
 */
export async function requireSegmentOfSite(db: Db, siteId: string, segmentId: string): Promise<SegmentRow> {
  const segment = await repo.findSegmentOfSite(db, siteId, segmentId);
  if (!segment) throw badRequest('Segment not found', 'segment_not_found');
  return segment;
}

export function createSegmentsService(ctx: AppContext) {
  const { db, clock } = ctx;

  async function ownedSegment(userId: string, id: string, needed: SiteRole): Promise<SegmentRow> {
    return checkSiteRole(await repo.findSegmentOfUser(db, userId, id), needed, 'Segment');
  }

  /** Active subscribers matching now, per rules: exact, or on a large site estimated from a sample and labelled so (sample-estimate.ts). */
  async function segmentCounts(siteId: string, rulesList: readonly SegmentRules[]): Promise<CountShown[]> {
    const now = clock.now();
    const counted = await countSegments(db, siteId, rulesList, now, await estimateBasis(db, siteId), (rules) => repo.countMatchingSubscribers(db, siteId, rules, now));
    return counted.map(({ count, sample_size }) => ({ count, is_estimate: sample_size !== null, sample_size }));
  }

  async function segmentCount(siteId: string, rules: SegmentRules): Promise<CountShown> {
    return (await segmentCounts(siteId, [rules]))[0]!;
  }

  /** Spec §3: estimated_count is the number of active subscribers matching now. */
  function toResponse(row: SegmentRow, rules: SegmentRules, { count, is_estimate, sample_size }: CountShown): Segment {
    return {
      id: row.id,
      site_id: row.site_id,
      name: row.name,
      rules,
      estimated_count: count,
      is_estimate,
      sample_size,
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
    };
  }

  async function withCount(row: SegmentRow): Promise<Segment> {
    const rules = rulesOf(row);
    return toResponse(row, rules, await segmentCount(row.site_id, rules));
  }

  return {
    async list(userId: string, siteId: string): Promise<Segment[]> {
      await requireSiteRole(ctx, userId, siteId, 'viewer');
      const rows = await repo.listSegmentsOfSite(db, siteId, SEGMENTS_PER_SITE_MAX);
      // The site's counter and sample size once for the list; the counts one by one, or in one read of the sample for a long list (sample-estimate.ts).
      const rules = rows.map(rulesOf);
      const counts = await segmentCounts(siteId, rules);
      return rows.map((row, i) => toResponse(row, rules[i]!, counts[i]!));
    },

    async get(userId: string, id: string): Promise<Segment> {
      return withCount(await ownedSegment(userId, id, 'viewer'));
    },

    async create(userId: string, siteId: string, input: CreateSegmentInput): Promise<Segment> {
      await requireSiteRole(ctx, userId, siteId, 'editor');
      if ((await repo.countSegmentsOfSite(db, siteId)) >= SEGMENTS_PER_SITE_MAX) {
        throw conflict(`A site can have at most ${SEGMENTS_PER_SITE_MAX} segments; delete one you no longer use first`);
      }
      const now = clock.now();
      const row: SegmentRow = {
        id: crypto.randomUUID(),
        site_id: siteId,
        name: input.name,
        name_key: nameKey(input.name),
        rules: JSON.stringify(input.rules),
        created_at: now,
        updated_at: now,
      };
      try {
        await db.transaction().execute(async (trx) => {
          await repo.insertSegment(trx, row);
          await recordAudit(ctx, { siteId, actor: { userId }, action: 'created', subject: { type: 'segment', id: row.id, label: row.name } }, trx);
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw duplicateName(input.name);
        throw error;
      }
      return withCount(row);
    },

    /**
     * Name and/or rules; `rules` replaces the whole rule set. Sends already
     * queued pick the new rules up: a segment's audience is decided when it is sent to.
     */
    async update(userId: string, id: string, input: UpdateSegmentInput): Promise<Segment> {
      const existing = await ownedSegment(userId, id, 'editor');
      const changes: Updateable<SegmentsTable> = { updated_at: clock.now() };
      if (input.name !== undefined) {
        changes.name = input.name;
        changes.name_key = nameKey(input.name);
      }
      if (input.rules !== undefined) changes.rules = JSON.stringify(input.rules);
      const changed = changedFields(existing, { name: changes.name, rules: changes.rules });
      try {
        await db.transaction().execute(async (trx) => {
          await repo.updateSegment(trx, id, changes);
          const subject = { type: 'segment' as const, id, label: changes.name ?? existing.name };
          if (changed.length > 0) await recordAudit(ctx, { siteId: existing.site_id, actor: { userId }, action: 'updated', subject, changedFields: changed }, trx);
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw duplicateName(input.name ?? existing.name);
        throw error;
      }
      return withCount((await repo.findSegmentOfSite(db, existing.site_id, id)) ?? existing);
    },

    /**
     * Refused (409, naming them) while anything may still send to the
     * segment; see segment-uses.ts for why it is not cleared instead.
     */
    async remove(userId: string, id: string): Promise<void> {
      const existing = await ownedSegment(userId, id, 'editor');
      const uses = await findSegmentUses(ctx.segmentUseFinders, db, existing.site_id, id);
      if (uses.length) throw conflict(describeSegmentUses(uses));
      await db.transaction().execute(async (trx) => {
        await repo.deleteSegment(trx, id);
        await recordAudit(ctx, { siteId: existing.site_id, actor: { userId }, action: 'deleted', subject: { type: 'segment', id, label: existing.name } }, trx);
      });
    },

    /**
     * Issue 11 "reach before sending": the active subscribers a send to all
     * subscribers, or to one of the site's segments, would reach now.
     */
    async audience(userId: string, siteId: string, segmentId: string | undefined): Promise<Audience> {
      await requireSiteRole(ctx, userId, siteId, 'viewer');
      const rules = segmentId ? rulesOf(await requireSegmentOfSite(db, siteId, segmentId)) : {};
      return { ...(await segmentCount(siteId, rules)), segment_id: segmentId ?? null };
    },

    /** POST /segments/{id}/estimate: counts again, now. */
    async estimate(userId: string, id: string): Promise<SegmentEstimate> {
      const row = await ownedSegment(userId, id, 'viewer');
      const { count, is_estimate, sample_size } = await segmentCount(row.site_id, rulesOf(row));
      return { estimated_count: count, is_estimate, sample_size };
    },
  };
}
