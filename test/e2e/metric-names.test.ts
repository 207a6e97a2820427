import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { ensureBuilt, freePort, startApiProcess, type ApiProcess } from '../support/processes.js';
import { until } from '../support/wait.js';

/**
 * The metrics reference (docs/reference/metrics.md, generated from the registries; and the
 * README's "Operations" table while it has one) against what each built process serves on
 * /metrics: the same names, process by process, of the types it says, and no
 * quota_ledger_ series exported by two processes. Then each process stops on SIGTERM and exits 0.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PROCESSES = ['api', 'projection-worker', 'reconciler'] as const;
type ProcessName = (typeof PROCESSES)[number];
/** prom-client reads these from /proc: other systems do not serve them. */
const LINUX_ONLY = new Set(['process_virtual_memory_bytes', 'process_heap_bytes', 'process_open_fds', 'process_max_fds']);

interface Documented {
  readonly names: Set<string>;
  /** The type the table gives a name, when its row has one type. */
  readonly types: Map<string, string>;
}

/**
 * The metrics table of a document, by process: docs/reference/metrics.md (generated from the
 * registries), and the README's "Operations" section for as long as it still has the table.
 */
function documented(text: string, where: string): Record<ProcessName, Documented> {
  const byProcess = Object.fromEntries(PROCESSES.map((p) => [p, { names: new Set<string>(), types: new Map<string, string>() }])) as Record<
    ProcessName,
    Documented
  >;
  let rows = 0;
  for (const line of text.split('\n')) {
    if (!/^\s*\| `/.test(line)) continue;
    const cells = line
      .trim()
      .replace(/^\|/, '')
      .replace(/\|$/, '')
      .split('|')
      .map((cell) => cell.trim());
    const [metrics = '', type = '', processCell = ''] = cells;
    const names = [...metrics.matchAll(/`([a-z_:][a-z0-9_:]*)`/g)].map((m) => m[1] as string);
    const owners = processCell === 'every process' ? PROCESSES : PROCESSES.filter((p) => p === processCell);
    expect(owners.length, `${where}: the process column of ${metrics.slice(0, 60)}: "${processCell}"`).toBeGreaterThan(0);
    expect(names.length, line).toBeGreaterThan(0);
    rows++;
    for (const owner of owners) {
      for (const name of names) {
        if (LINUX_ONLY.has(name) && process.platform !== 'linux') continue;
        expect(byProcess[owner].names.has(name), `${where}: ${name} listed twice for ${owner}`).toBe(false);
        byProcess[owner].names.add(name);
        if (['counter', 'gauge', 'histogram', 'summary'].includes(type)) byProcess[owner].types.set(name, type);
      }
    }
  }
  expect(rows, `metric rows in ${where}`).toBeGreaterThan(0);
  return byProcess;
}

/** The tables to hold against the processes: the generated reference, and the README's while it has one. */
function tables(): [string, Record<ProcessName, Documented>][] {
  const found: [string, Record<ProcessName, Documented>][] = [
    ['docs/reference/metrics.md', documented(readFileSync(`${ROOT}docs/reference/metrics.md`, 'utf8'), 'docs/reference/metrics.md')],
  ];
  const readme = readFileSync(`${ROOT}README.md`, 'utf8');
  const start = readme.indexOf('\n## Operations\n');
  const section = start < 0 ? '' : readme.slice(start, readme.indexOf('\n## ', start + 5));
  if (/^\s*\| `quota_ledger_/m.test(section)) found.push(['README.md', documented(section, 'the README\'s "Operations" section')]);
  return found;
}

/** Name → type of every metric a /metrics answer declares (its `# TYPE` lines: a metric with no sample yet is declared too). */
async function served(base: string): Promise<Map<string, string>> {
  const response = await fetch(`${base}/metrics`);
  expect(response.status).toBe(200);
  const text = await response.text();
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]));
}

interface Worker {
  readonly base: string;
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/** A built worker (`dist/apps/<name>/src/main.js`) with its /metrics and /healthz on a port of its own. */
async function startWorker(name: 'projection-worker' | 'reconciler', env: Record<string, string>): Promise<Worker> {
  const port = await freePort();
  const child = spawn(process.execPath, [`${ROOT}dist/apps/${name}/src/main.js`], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'error', HOST: '127.0.0.1', METRICS_PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const base = `http://127.0.0.1:${port}`;
  await until(
    `the ${name}'s /healthz`,
    async () => {
      if (child.exitCode !== null) throw new Error(`the ${name} exited with ${child.exitCode}: ${output}`);
      return (await fetch(`${base}/healthz`).catch(() => undefined))?.ok ? true : undefined;
    },
    30_000,
  );
  return { base, child, exited, output: () => output };
}

let db: TestDatabase & { dataSource: DataSource };
let api: ApiProcess | undefined;
const workers: Partial<Record<'projection-worker' | 'reconciler', Worker>> = {};

beforeAll(async () => {
  ensureBuilt();
  db = await createMigratedDatabase('qlmetrics');
  // The queue on the test's own database (BullMQ's PostgreSQL backend), never a shared Redis.
  const env = { DATABASE_URL: db.url, REDIS_URL: '' };
  api = await startApiProcess(env);
  workers['projection-worker'] = await startWorker('projection-worker', env);
  workers.reconciler = await startWorker('reconciler', env);
});

afterAll(async () => {
  for (const worker of Object.values(workers))
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
  await api?.stop('SIGKILL');
  await db?.drop();
});

describe('the metrics the documentation lists', () => {
  it('are exactly what each process serves on /metrics, of the types it says, each quota_ledger_ series from one process', async () => {
    const bases: Record<ProcessName, string> = {
      api: api!.base,
      'projection-worker': workers['projection-worker']!.base,
      reconciler: workers.reconciler!.base,
    };
    const owners = new Map<string, ProcessName[]>();
    for (const name of PROCESSES) {
      const serving = await served(bases[name]);
      for (const [where, table] of tables()) {
        expect(
          [...serving.keys()].filter((metric) => !table[name].names.has(metric)).sort(),
          `${name} serves, ${where} does not list`,
        ).toEqual([]);
        expect(
          [...table[name].names].filter((metric) => !serving.has(metric)).sort(),
          `${where} lists for ${name}, it does not serve`,
        ).toEqual([]);
        for (const [metric, type] of table[name].types) expect(serving.get(metric), `${where}: ${metric}'s type`).toBe(type);
      }
      for (const metric of serving.keys())
        if (metric.startsWith('quota_ledger_')) owners.set(metric, [...(owners.get(metric) ?? []), name]);
      // Node's own series unprefixed in every process.
      expect(serving.has('process_cpu_seconds_total') && serving.has('nodejs_heap_size_used_bytes'), name).toBe(true);
    }
    expect([...owners].filter(([, by]) => by.length > 1)).toEqual([]);
  });

  it('come from processes that each stop on SIGTERM and exit 0', async () => {
    for (const name of ['projection-worker', 'reconciler'] as const) {
      const worker = workers[name]!;
      worker.child.kill('SIGTERM');
      expect(await worker.exited, `${name}: ${worker.output().slice(-2000)}`).toEqual({ code: 0, signal: null });
    }
    const exited = new Promise((resolve) => api!.child.once('exit', (code, signal) => resolve({ code, signal })));
    api!.child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
  });
});
