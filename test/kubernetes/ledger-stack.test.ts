import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { TEST_PG_ADMIN_URL } from '../support/database.js';
import { isAlive } from '../support/supervised.js';
import { until } from '../support/wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function databaseExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
  await client.connect();
  try {
    return ((await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

/** The first line `holder` prints, or a rejection when it exits first. */
function firstLine(holder: ReturnType<typeof spawn>): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    holder.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0] ?? '');
    });
    holder.once('exit', (code) => reject(new Error(`the holder exited with ${code} before its stack was up`)));
  });
}

describe('our stack against a control plane, when its test process is SIGKILLed', () => {
  it('leaves no process, no directory and no database behind', async () => {
    const holder = spawn(process.execPath, ['--import', 'tsx', 'test/kubernetes/fixtures/hold-ledger-stack.ts'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    const { pids, dirs, database } = JSON.parse(await firstLine(holder)) as { pids: number[]; dirs: string[]; database: string };
    // etcd, kube-apiserver, kube-controller-manager; the API, the projection worker, the reconciler.
    expect(pids).toHaveLength(6);
    expect(pids.every(isAlive)).toBe(true);
    expect(await databaseExists(database)).toBe(true);

    holder.kill('SIGKILL');
    await exited;
    const killed = Date.now();
    await until(
      'the stack to be gone',
      async () => (pids.some(isAlive) || dirs.some(existsSync) || (await databaseExists(database)) ? undefined : true),
      15_000,
    );
    console.log(
      `after SIGKILL: ${pids.length} processes, ${dirs.length} directories and database ${database} gone in ${Date.now() - killed} ms`,
    );
  });
});
