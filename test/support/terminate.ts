import pg from 'pg';
import { TEST_PG_ADMIN_URL } from './database.js';

export interface Hammered {
  /** Backends the server terminated. */
  readonly terminated: number;
  /** Errors thrown out of the process's event loop meanwhile (an 'error' event nobody heard). */
  readonly uncaught: readonly string[];
}

/**
 * Runs `work` in `workers` loops for `ms` while another session terminates every backend of
 * `database` named `applicationName`, as fast as it can: new connections are ended during their
 * start-up, between checkout and first query, and mid-query. Reports what escaped the process's
 * handlers, which must be nothing.
 */
export async function hammerWhileTerminating(options: {
  database: string;
  applicationName: string;
  ms: number;
  workers: number;
  work: () => Promise<void>;
}): Promise<Hammered> {
  const uncaught: string[] = [];
  const heard = (error: unknown) => uncaught.push(error instanceof Error ? error.message : String(error));
  process.on('uncaughtException', heard);
  const killer = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
  await killer.connect();
  let stop = false;
  let terminated = 0;
  const killing = (async () => {
    while (!stop) {
      const { rows } = await killer.query<{ n: number }>(
        `WITH victims AS MATERIALIZED (SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2)
         SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM victims`,
        [options.database, options.applicationName],
      );
      terminated += rows[0]?.n ?? 0;
    }
  })();
  const timer = setTimeout(() => (stop = true), options.ms);
  try {
    await Promise.all(
      Array.from({ length: options.workers }, async () => {
        while (!stop) await options.work().catch(() => undefined);
      }),
    );
    await killing;
  } finally {
    clearTimeout(timer);
    stop = true;
    await killer.end();
    process.off('uncaughtException', heard);
  }
  return { terminated, uncaught };
}
