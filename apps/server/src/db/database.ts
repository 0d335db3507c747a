// The one place that knows which database engine is underneath. Everything
// else talks to Kysely and, for the few differences, to `DatabaseHandle.kind`.
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDialectConfig } from 'kysely';
import pg from 'pg';
import type { Config } from '../config';
import type { Database } from './schema';
import { walCheckpointsFor } from './wal-checkpoints';

export type DatabaseKind = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  kind: DatabaseKind;
  /** The SQLite file (undefined on PostgreSQL). */
  file?: string;
  /**
   * For a bulk write (an import): on SQLite, WAL checkpoints run on another
   * thread until the returned function is called (wal-checkpoints.ts); on
   * PostgreSQL, nothing to do.
   */
  holdBackgroundCheckpoints(): () => void;
  close(): Promise<void>;
}

// int8 (count(*), bigint epoch-millisecond columns) and numeric come back as
// strings from node-postgres; every value Herald stores fits in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export function openDatabase(database: Config['database'], options: { poolSize?: number; onBackgroundError?: (error: unknown) => void } = {}): DatabaseHandle {
  if (database.kind === 'postgres') {
    const pool = new pg.Pool({
      connectionString: database.url,
      max: options.poolSize ?? 10,
      // A dead server must not hang a request forever.
      connectionTimeoutMillis: 10_000,
    });
    // An idle client losing its connection (server restart) must not crash the process.
    pool.on('error', () => undefined);
    // Nor may a client checked out of the pool: inside a transaction, between
    // two statements, a server restart makes it emit 'error', and an 'error'
    // event nobody listens to ends a Node process. Its next statement fails
    // and the transaction is rolled back; the caller sees that failure.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', holdBackgroundCheckpoints: () => () => undefined, close: () => db.destroy() };
  }

  fs.mkdirSync(path.dirname(database.file), { recursive: true });
  const sqlite = new SQLite(database.file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }) });
  const checkpoints = walCheckpointsFor(sqlite, database.file, options.onBackgroundError);
  return {
    db,
    kind: 'sqlite',
    file: database.file,
    holdBackgroundCheckpoints: () => checkpoints.hold(),
    close: async () => {
      await checkpoints.close();
      await db.destroy();
    },
  };
}

/**
 * SQLite transactions begin IMMEDIATE: they take the database's write lock
 * at BEGIN, waiting for it up to busy_timeout (docs/storage.md, "SQLite
 * transactions take the write lock first"). A plain (deferred) BEGIN starts
 * as a reader and asks for the lock at its first write; if another process
 * (a `scheduler` beside `serve`, a CLI command) holds it then, SQLite fails
 * the write at once with SQLITE_BUSY instead of waiting, because a reader
 * that waited could deadlock with that writer. Within one process nothing
 * changes: its one connection runs one transaction at a time anyway.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew; on the delivery hot path the same SQL
 * (batch-sized IN lists included) runs thousands of times, and preparing it
 * cost more than running it. better-sqlite3 statements are reusable, so keep
 * the most recently used ones by their SQL text.
 */
function withStatementCache(sqlite: SQLite.Database): Pick<SQLite.Database, 'prepare' | 'close'> {
  const statements = new Map<string, SQLite.Statement>();
  return {
    prepare(source: string) {
      let statement = statements.get(source);
      if (statement) {
        // Move to the most recently used end.
        statements.delete(source);
      } else {
        statement = sqlite.prepare(source);
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
      }
      statements.set(source, statement);
      return statement;
    },
    close() {
      statements.clear();
      return sqlite.close();
    },
  } as Pick<SQLite.Database, 'prepare' | 'close'>;
}

/** True when a write failed on a unique constraint (both engines). */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * PostgreSQL's SQLSTATE classes and codes that mean "the server cannot be
 * talked to right now" (restarting, shutting down, connection lost), and
 * the socket errors of a server that is not there. A request failing on
 * one of these is answered 503 with Retry-After, not 500 (issue 17, 7c).
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const UNAVAILABLE_MESSAGES = [/connection terminated/i, /timeout exceeded when trying to connect/i, /the database system is (starting up|shutting down|in recovery mode)/i, /terminating connection/i, /Client has encountered a connection error/i];

/** True when an error says the database cannot be reached for now (either engine), as opposed to a bug or bad data. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      // Class 08: connection exception.
      if (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_SOCKET_CODES.has(code)) return true;
      // SQLite: another connection held the write lock for longer than busy_timeout.
      if (code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT') return true;
    }
    const message = (current as { message?: unknown }).message;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))) return true;
    // AggregateError (several addresses refused) and wrapped causes.
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
