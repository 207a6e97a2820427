import type { INestApplication } from '@nestjs/common';
import { type AppConfig, loadConfig } from '@quota/config';
import { UsageProjection } from '@quota/ledger';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { type AdmissionApiOptions, createAdmissionApi } from '../../apps/admission-api/src/app.js';
import { createMigratedDatabase, type TestDatabase } from './database.js';

/** An answer: status, the parsed body (text when not JSON), and the headers (not enumerable, so toEqual compares answers without them). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
export type Answer = { status: number; body: any; readonly headers: Headers };

export interface RunningApi {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly base: string;
  readonly app: INestApplication;
  /** The test's own migrated database (a data source of the test, not the app's). */
  readonly db: TestDatabase & { dataSource: DataSource };
  /** JSON request helper: returns the status and the parsed body (text when not JSON). */
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** Runs the projection until it has applied every committed event (what a projection-worker process does continuously). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Brings the test database's read models up to date with its ledger. Snapshots come every
 * 25 events here (1,000 in production) so that tests cross several.
 */
export async function settleProjection(dataSource: DataSource): Promise<void> {
  await new UsageProjection(dataSource, { snapshotEvery: 25 }).catchUp();
}

export function poolOf(dataSource: DataSource): pg.Pool {
  const pool = (dataSource.driver as unknown as { master?: pg.Pool }).master;
  if (!pool) throw new Error('data source not initialized');
  return pool;
}

/** The admission API on its own fresh, migrated database, listening on a free port. */
export async function startApi(
  overrides: Partial<AppConfig> = {},
  prefix = 'qlapi',
  options: AdmissionApiOptions = {},
): Promise<RunningApi> {
  const db = await createMigratedDatabase(prefix);
  const config: AppConfig = {
    ...loadConfig({}),
    host: '127.0.0.1',
    port: 0,
    logLevel: 'error',
    databaseUrl: db.url,
    databasePoolSize: 4,
    insecureDev: true,
    rateLimitPerSecond: 0,
    ...overrides,
  };
  const app = await createAdmissionApi(config, options);
  await app.listen(0, '127.0.0.1');
  const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return {
    base,
    app,
    db,
    async request(method, path, body, headers = {}) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      // Headers not enumerable: tests compare whole answers with toEqual, and two answers' headers (dates) differ.
      return Object.defineProperty({ status: response.status, body: parsed }, 'headers', {
        value: response.headers,
        enumerable: false,
      }) as Answer;
    },
    settle: () => settleProjection(db.dataSource),
    async close() {
      await app.close();
      await db.drop();
    },
  };
}
