import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, type DataSourceSettings } from './data-source.js';
import { isConnectionError } from './postgres-errors.js';

/**
 * Where history is read: a PostgreSQL hot standby of the ledger's database, fed by
 * PostgreSQL's own streaming replication (DATABASE_READ_URL), so that audit, as-of, series,
 * export and dashboard reads do not compete with admissions for the primary. Writes, and the
 * reads a decision depends on, stay on the primary.
 *
 * - A read that must see a write its caller made names that write's position (`?minPosition=`):
 *   it waits, bounded (`waitMs`), until the standby has replayed the commit that wrote it (the
 *   event at that position is there), and otherwise reads from the primary.
 * - A standby that cannot answer (down, refusing connections, a query cancelled by a recovery
 *   conflict) sends the read to the primary, and is left alone for `downForMs` before it is
 *   tried again: a caller never gets a 5xx because the standby is away.
 */
export interface ReadPathOptions {
  /** Longest a read waits for the standby to replay a position it asks for, in ms; then the primary answers. */
  readonly waitMs?: number;
  /** How long a standby that failed is not tried, in ms. */
  readonly downForMs?: number;
  /** How often a waiting read looks again, in ms. */
  readonly pollMs?: number;
  readonly log?: (level: 'warn' | 'info', message: string, fields?: Record<string, unknown>) => void;
}

/** Reads by where they were answered. */
export interface ReadPathStats {
  /** By the standby. */
  replica: number;
  /** By the primary: no standby configured, or it was marked down. */
  primary: number;
  /** By the primary because the standby had not replayed the asked position in time. */
  waitedOut: number;
  /** By the primary after the standby failed the read. */
  fellBack: number;
}

export type ReadSource = 'replica' | 'primary';

const readAfter = new AsyncLocalStorage<{ readonly minPosition?: string }>();

/**
 * Runs `work` (and everything it starts) as a request that must see the ledger at least up to
 * `minPosition`; undefined: any state the standby has.
 */
export function withReadAfter<T>(minPosition: string | undefined, work: () => T): T {
  return readAfter.run(minPosition === undefined ? {} : { minPosition }, work);
}

// A read waiting for a position it names costs the standby one keyed lookup per poll: at most 40 a second.
const DEFAULTS = { waitMs: 1000, downForMs: 5000, pollMs: 25 };

export class ReadPath {
  readonly stats: ReadPathStats = { replica: 0, primary: 0, waitedOut: 0, fellBack: 0 };
  private readonly options: Required<Omit<ReadPathOptions, 'log'>> & Pick<ReadPathOptions, 'log'>;
  private downUntil = 0;
  private opening: Promise<boolean> | undefined;

  /**
   * @param primary the ledger's data source
   * @param replica the standby's data source, not yet initialized (it is opened on the first read,
   *   and again after a failure, so a standby that is down at boot does not stop the process)
   */
  constructor(
    readonly primary: DataSource,
    readonly replica: DataSource | undefined,
    options: ReadPathOptions = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** A standby's data source on these settings: short connect timeout, so a dead host costs little. */
  static replicaDataSource(settings: DataSourceSettings): DataSource {
    const options = buildDataSourceOptions({ ...settings, applicationName: settings.applicationName ?? 'quota-ledger-reads' });
    const extra = (options as { extra?: Record<string, unknown> }).extra ?? {};
    return new DataSource({ ...options, migrations: [], extra: { ...extra, connectionTimeoutMillis: 2000 } } as typeof options);
  }

  /** Runs one read where it can be answered: the standby when it is up (and has replayed what is asked), else the primary. */
  async run<T>(read: (source: ReadSource) => Promise<T>): Promise<T> {
    if (!(await this.replicaUp())) {
      this.stats.primary++;
      return read('primary');
    }
    const minPosition = readAfter.getStore()?.minPosition;
    try {
      if (minPosition !== undefined && !(await this.replayed(minPosition))) {
        this.stats.waitedOut++;
        return await read('primary');
      }
      const answer = await read('replica');
      this.stats.replica++;
      return answer;
    } catch (error) {
      if (!unavailable(error)) throw error;
      this.markDown(error);
      this.stats.fellBack++;
      return read('primary');
    }
  }

  /** Whether the standby answers now: opened, and not marked down. */
  private async replicaUp(): Promise<boolean> {
    const replica = this.replica;
    if (!replica || Date.now() < this.downUntil) return false;
    if (replica.isInitialized) return true;
    this.opening ??= replica
      .initialize()
      .then(() => true)
      .catch((error: unknown) => {
        this.markDown(error);
        return false;
      })
      .finally(() => (this.opening = undefined));
    return this.opening;
  }

  /** Waits, at most `waitMs`, until the standby holds the event at `position` (its commit was replayed). */
  private async replayed(position: string): Promise<boolean> {
    const replica = this.replica as DataSource;
    const deadline = Date.now() + this.options.waitMs;
    for (;;) {
      const rows: unknown[] = await replica.query(`SELECT 1 FROM ledger_events WHERE position = $1`, [position]);
      if (rows.length > 0) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, this.options.pollMs));
    }
  }

  private markDown(error: unknown): void {
    this.downUntil = Date.now() + this.options.downForMs;
    this.options.log?.('warn', 'the read replica failed; reading from the primary', {
      error: error instanceof Error ? error.message : String(error),
      retryInMs: this.options.downForMs,
    });
  }

  async close(): Promise<void> {
    if (this.replica?.isInitialized) await this.replica.destroy();
  }
}

/**
 * Errors that say the standby cannot answer now, as opposed to a bad query: a connection error
 * (postgres-errors.ts), or a query cancelled by a conflict with recovery (40001 on a standby).
 */
function unavailable(error: unknown): boolean {
  const e = error as { code?: unknown; driverError?: unknown } | undefined;
  if (isConnectionError(error) || e?.code === '40001') return true;
  return e?.driverError !== undefined && e.driverError !== error ? unavailable(e.driverError) : false;
}

/**
 * The query class `Q` with the named methods answered through `reads` (on a copy of the class
 * made on the standby, or on the primary's); its other methods always on the primary. Without a
 * standby, the primary's instance itself.
 */
export function routedReads<Q extends object>(
  make: (dataSource: DataSource) => Q,
  reads: ReadPath,
  methods: readonly (keyof Q & string)[],
): Q {
  const onPrimary = make(reads.primary);
  if (!reads.replica) return onPrimary;
  const onReplica = make(reads.replica);
  const routed = new Set<string>(methods);
  return new Proxy(onPrimary, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !routed.has(property) || typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        reads.run((source) =>
          (Reflect.get(source === 'replica' ? onReplica : onPrimary, property) as (...a: unknown[]) => Promise<unknown>).apply(
            source === 'replica' ? onReplica : onPrimary,
            args,
          ),
        );
    },
  });
}
