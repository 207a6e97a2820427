import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createDatabase } from './postgres.js';

/**
 * The denominators: the same admission decision issued straight at PostgreSQL by pgbench,
 * with the scripts in bench/baseline/, at the concurrency the service is loaded with.
 */
export type BaselineDesign = 'a' | 'b' | 'c';

export const DESIGNS: Record<BaselineDesign, { readonly script: string; readonly perTransaction: number; readonly what: string }> = {
  a: { script: 'cu1.sql', perTransaction: 1, what: 'conditional UPDATE of a counter row + INSERT, one statement' },
  b: { script: 'ser.sql', perTransaction: 1, what: 'SERIALIZABLE read hard, sum(events), INSERT (retried on 40001)' },
  c: { script: 'batch10.sql', perTransaction: 10, what: 'ten conditional updates in one transaction and round trip' },
};

export interface BaselineFigure {
  readonly design: BaselineDesign;
  readonly namespaces: number;
  readonly clients: number;
  /** Admissions per second (transactions × admissions per transaction). */
  readonly perSecond: number;
  readonly latencyMeanMs: number;
  /** Transactions pgbench retried after a serialization failure (design b). */
  readonly retried: number;
  readonly failed: number;
}

const DIR = fileURLToPath(new URL('../baseline/', import.meta.url));

export function pgbenchAvailable(): string | undefined {
  const probe = spawnSync('pgbench', ['--version'], { encoding: 'utf8' });
  if (probe.status !== 0) return 'pgbench is not installed (Debian: apt-get install postgresql-client)';
  if (!existsSync(`${DIR}schema.sql`)) return `the baseline scripts are missing from ${DIR}`;
  return undefined;
}

export async function runBaseline(design: BaselineDesign, namespaces: number, clients: number, seconds: number): Promise<BaselineFigure> {
  const db = await createDatabase('base');
  try {
    const url = new URL(db.url);
    const common = ['-h', url.hostname, '-p', url.port || '5432', '-U', decodeURIComponent(url.username) || 'postgres'];
    const schema = spawnSync('psql', [...common, '-q', '-v', 'ON_ERROR_STOP=1', '-d', db.name, '-f', `${DIR}schema.sql`], {
      encoding: 'utf8',
    });
    if (schema.status !== 0) throw new Error(`psql schema.sql: ${schema.stderr}`);
    const { script, perTransaction } = DESIGNS[design];
    const args = [
      ...common,
      '-n',
      '-M',
      'extended',
      '-f',
      `${DIR}${script}`,
      '-D',
      `nns=${namespaces}`,
      '-c',
      String(clients),
      '-j',
      '2',
      '-T',
      String(seconds),
    ];
    if (design === 'b') args.push('--max-tries=10');
    const run = spawnSync('pgbench', [...args, db.name], { encoding: 'utf8', timeout: (seconds + 60) * 1000 });
    const out = `${run.stdout}\n${run.stderr}`;
    const tps = /tps = ([0-9.]+) \(without initial connection time\)/.exec(out)?.[1];
    if (!tps) throw new Error(`pgbench ${script} printed no tps:\n${out}`);
    const number = (re: RegExp): number => Number(re.exec(out)?.[1] ?? 0);
    return {
      design,
      namespaces,
      clients,
      perSecond: Number(tps) * perTransaction,
      latencyMeanMs: number(/latency average = ([0-9.]+) ms/),
      retried: number(/number of transactions retried: (\d+)/),
      failed: number(/number of failed transactions: (\d+)/),
    };
  } finally {
    await db.drop();
  }
}
