import type pg from 'pg';
import type { DataSource, QueryRunner } from 'typeorm';
import { LEDGER_EVENTS_CHANNEL } from '../write/append-notifier.js';
import type { UsageProjection } from './projection.js';

export interface ProjectionRunnerOptions {
  /** Longest wait without a notification before looking again, in ms. */
  readonly pollMs: number;
  /** Told about every failed step or lost LISTEN connection; the runner carries on. */
  readonly onError?: (error: unknown) => void;
  /** Told after each step that applied events: how many, and how long the step took (its transaction, in seconds). */
  readonly onApplied?: (count: number, seconds: number) => void;
  /**
   * Most events one step applies (capped by the projection's batch size): a step is one
   * transaction and one uninterrupted stretch of CPU, so smaller steps keep the worker from
   * taking a core away from admissions for long. Default 250.
   */
  readonly stepMax?: number;
  /**
   * How long to wait after a notification before stepping, in ms: the commits of that window
   * are applied together in one step instead of one step each. Default 25.
   */
  readonly coalesceMs?: number;
}

export const RUNNER_DEFAULTS = { stepMax: 250, coalesceMs: 25 } as const;

/**
 * Keeps a projection caught up: steps while there is work, then sleeps until the ledger's
 * NOTIFY (sent by a trigger when events are appended) or the polling interval, whichever
 * comes first. A notification can arrive before the writing transaction's events are safe to
 * read (an older transaction still runs), which the poll then picks up.
 */
export class ProjectionRunner {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private listener: QueryRunner | undefined;
  private wake: (() => void) | undefined;
  private notified = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly projection: UsageProjection,
    private readonly options: ProjectionRunnerOptions,
  ) {}

  start(): void {
    if (this.loop) return;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    await this.unlisten();
  }

  private async run(): Promise<void> {
    let failures = 0;
    const stepMax = this.options.stepMax ?? RUNNER_DEFAULTS.stepMax;
    const coalesceMs = this.options.coalesceMs ?? RUNNER_DEFAULTS.coalesceMs;
    // Behind by more than a step: the next step follows at once (after other callbacks ran).
    let behind = true;
    while (!this.stopped) {
      await this.listen();
      try {
        if (!behind && coalesceMs > 0) await this.sleep(coalesceMs, false);
        else await new Promise((resolve) => setImmediate(resolve));
        this.notified = false;
        const started = performance.now();
        const applied = await this.projection.step(stepMax);
        failures = 0;
        behind = applied >= stepMax;
        if (applied > 0) {
          this.options.onApplied?.(applied, (performance.now() - started) / 1000);
          continue;
        }
      } catch (error) {
        failures++;
        this.options.onError?.(error);
        await this.sleep(Math.min(this.options.pollMs, 50 * 2 ** Math.min(failures, 6)));
        continue;
      }
      if (!this.notified) await this.sleep(this.options.pollMs);
    }
  }

  /** Waits `ms`; a notification (when `wakeable`) or stop() ends the wait early. */
  private sleep(ms: number, wakeable = true): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.wake = wakeable ? done : () => (this.stopped ? done() : undefined);
    });
  }

  private async listen(): Promise<void> {
    if (this.listener || this.stopped) return;
    // A connection of its own for as long as it listens (a query runner holds one); when it
    // fails, TypeORM hands it back to the pool as broken and the next round listens anew.
    const runner = this.dataSource.createQueryRunner();
    try {
      const client = (await runner.connect()) as pg.PoolClient;
      client.on('notification', () => {
        this.notified = true;
        this.wake?.();
      });
      client.on('error', (error) => {
        this.options.onError?.(error);
        if (this.listener === runner) this.listener = undefined;
      });
      await client.query(`LISTEN ${LEDGER_EVENTS_CHANNEL}`);
      this.listener = runner;
    } catch (error) {
      await runner.release();
      // Polling still works; the next round tries to listen again.
      this.options.onError?.(error);
    }
  }

  private async unlisten(): Promise<void> {
    const runner = this.listener;
    this.listener = undefined;
    if (!runner) return;
    await runner.query(`UNLISTEN ${LEDGER_EVENTS_CHANNEL}`).catch(() => undefined);
    await runner.release();
  }
}
