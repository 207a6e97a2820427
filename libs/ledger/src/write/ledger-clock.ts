import type { DataSource } from 'typeorm';

/**
 * The ledger's time, epoch ms: an injected clock (tests), else the database's, so every
 * replica and the reconciler's listings agree on one clock with the events' `recorded_at`.
 */
export class LedgerClock {
  constructor(
    private readonly dataSource: DataSource,
    private readonly clock?: () => number,
  ) {}

  async now(): Promise<number> {
    if (this.clock) return this.clock();
    const rows: { now_ms: number }[] = await this.dataSource.query(
      `SELECT (extract(epoch from clock_timestamp()) * 1000)::float8 AS now_ms`,
    );
    return Math.floor(rows[0]?.now_ms ?? Date.now());
  }
}
