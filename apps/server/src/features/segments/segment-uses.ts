// Deleting a segment that something still sends to is refused (409), never
// "fixed" by clearing the reference: a notification without a segment goes
// to ALL subscribers, so a deleted segment must not silently widen a send.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema';

type Db = Kysely<Database> | Transaction<Database>;

/** Something that may still send to a segment, named for the owner. */
export interface SegmentUse {
  /** Identifies the user across finders (a notification and its pending run are one use). */
  key: string;
  /** A singular noun: "notification", "welcome campaign step", "RSS feed". */
  kind: string;
  name: string;
}

/** Finds what in a site may still send to a segment. */
export type SegmentUseFinder = (db: Db, siteId: string, segmentId: string) => Promise<SegmentUse[]>;

// Every feature whose rows can target a segment (notifications and their runs,
// welcome campaigns, RSS feeds) registers its finder on the AppContext at the
// composition root (runtime.ts), so segments imports none of them.
declare module '../../context' {
  interface AppContext {
    /** What may still send to a segment: deleting it is refused while any finder finds something. */
    segmentUseFinders: SegmentUseFinder[];
  }
}

const NAMES_SHOWN = 3;

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * "This segment is used by 2 notifications ("Summer sale", "Flash deal")
 * and 1 RSS feed ("Blog")." Uses are grouped by kind, each named.
 */
export function describeSegmentUses(uses: SegmentUse[]): string {
  const byKind = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const use of uses) {
    if (seen.has(use.key)) continue;
    seen.add(use.key);
    byKind.set(use.kind, [...(byKind.get(use.kind) ?? []), use.name]);
  }
  const parts = [...byKind].map(([kind, names]) => {
    const shown = names.slice(0, NAMES_SHOWN).map((name) => `"${name}"`);
    if (names.length > NAMES_SHOWN) shown.push(`${names.length - NAMES_SHOWN} more`);
    return `${plural(names.length, kind)} (${shown.join(', ')})`;
  });
  const list = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}` : (parts[0] ?? '');
  return `This segment is used by ${list}. Change their target to All Subscribers or another segment first.`;
}

export async function findSegmentUses(finders: readonly SegmentUseFinder[], db: Db, siteId: string, segmentId: string): Promise<SegmentUse[]> {
  const found = await Promise.all(finders.map((find) => find(db, siteId, segmentId)));
  return found.flat();
}
