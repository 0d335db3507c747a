// Column conventions shared by every table (the same on SQLite and PostgreSQL):
// - ids are text (random UUIDs), except deliveries, which use an integer key
//   because there is one row per (run, subscriber) and they are many;
// - every *_at column is a bigint of epoch milliseconds (UTC);
// - booleans are integers 0/1; JSON documents are text.
import type { ColumnType } from 'kysely';

/** A bigint column of epoch milliseconds (UTC); see database.ts for PostgreSQL's int8 parsing. */
export type Millis = number;
/** A boolean stored as 0/1 on both databases. */
export type Flag = number;
/** A counter the database defaults to 0 on insert. */
export type Counter = ColumnType<number, number | undefined, number>;
/** A 0/1 flag the database defaults on insert (a column added after rows existed). */
export type DefaultedFlag = ColumnType<number, number | undefined, number>;
/** A JSON text column the database defaults on insert. */
export type DefaultedJson = ColumnType<string, string | undefined, string>;
