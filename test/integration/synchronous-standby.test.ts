import { createServer, type AddressInfo, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, checkSynchronousStandby, runMigrationsLocked } from '@quota/ledger';
import { createAdmissionApi } from '../../apps/admission-api/src/app.js';
import { startApi, type RunningApi } from '../support/api.js';
import { startFailoverPair, type FailoverPair } from '../support/failover-pair.js';
import { freePort } from '../support/processes.js';
import { until } from '../support/wait.js';
import { loadConfig } from '@quota/config';

/**
 * Never losing an acknowledged admission, on a real primary and streaming standby
 * (test/support/failover-pair.ts): the synchronous standby the API can be told to require
 * (DATABASE_REQUIRE_SYNCHRONOUS_STANDBY), and the ledger's pools on a multi-host DATABASE_URL
 * (libs/ledger host-failover.ts). The failover itself, under load and with the built processes, is
 * test/faults/failover.test.ts.
 */
let pair: FailoverPair;

async function adminQuery(text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: pair.primary.url() });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

const setting = async (name: string, value: string | undefined): Promise<void> => {
  await adminQuery(value === undefined ? `ALTER SYSTEM RESET ${name}` : `ALTER SYSTEM SET ${name} = '${value}'`);
  await adminQuery('SELECT pg_reload_conf()');
  // The postmaster reloads, then signals every backend, which reads the file before its next statement.
  await until(`${name} reloaded`, async () => {
    const { rows } = await adminQuery(
      `SELECT setting = coalesce(${value === undefined ? 'boot_val' : `'${value}'`}, boot_val) AS done FROM pg_settings WHERE name = '${name}'`,
    );
    return rows[0]?.done === true ? true : undefined;
  });
  await new Promise((resolve) => setTimeout(resolve, 100));
};

const openOn = (url: string, chosen?: string[]): Promise<DataSource> =>
  new DataSource(
    buildDataSourceOptions({ url, poolSize: 2, ...(chosen ? { onHostChosen: (host: string) => void chosen.push(host) } : {}) }),
  ).initialize();

beforeAll(async () => {
  pair = await startFailoverPair();
  const migrating = await openOn(pair.primary.url());
  await runMigrationsLocked(migrating);
  await migrating.destroy();
}, 120_000);
afterAll(async () => {
  await pair?.destroy();
});

describe('a multi-host DATABASE_URL (host-failover.ts)', () => {
  const [a, b] = [() => pair.nodes[0], () => pair.nodes[1]];
  const hostOf = (node: { port: number }): string => `127.0.0.1:${node.port}`;

  it('connects to the host that accepts writes, whichever the list names first, past a host that is down', async () => {
    const down = await freePort();
    const chosen: string[] = [];
    const ds = await openOn(
      `postgres://postgres@127.0.0.1:${down},${hostOf(b())},${hostOf(a())}/postgres?target_session_attrs=read-write`,
      chosen,
    );
    try {
      expect(await ds.query('SELECT pg_is_in_recovery() AS recovery, inet_server_port() AS port')).toEqual([
        { recovery: false, port: a().port },
      ]);
      expect(chosen).toEqual([hostOf(a())]);
    } finally {
      await ds.destroy();
    }
  });

  it('does not wait for a host that never answers (a machine gone) when another matches', async () => {
    // Accepts the connection and says nothing, as a host behind a dead route never refuses.
    const accepted: Socket[] = [];
    const silent = createServer((socket) => void accepted.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const started = Date.now();
    const ds = await openOn(
      `postgres://postgres@127.0.0.1:${port},${hostOf(b())},${hostOf(a())}/postgres?target_session_attrs=read-write&connect_timeout=20`,
    );
    try {
      expect(await ds.query('SELECT inet_server_port() AS port')).toEqual([{ port: a().port }]);
      // The silent host's probe gives up only after 20 s; the primary answered long before.
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await ds.destroy();
      for (const socket of accepted) socket.destroy();
      silent.close();
    }
  });

  it('reads from a standby with prefer-standby, and says why when no host matches', async () => {
    const reads = await openOn(`postgres://postgres@${hostOf(a())},${hostOf(b())}/postgres?target_session_attrs=prefer-standby`);
    try {
      expect(await reads.query('SELECT pg_is_in_recovery() AS recovery')).toEqual([{ recovery: true }]);
    } finally {
      await reads.destroy();
    }
    const none = new DataSource(
      buildDataSourceOptions({ url: `postgres://postgres@${hostOf(b())}/postgres?target_session_attrs=read-write`, poolSize: 1 }),
    );
    await expect(none.initialize()).rejects.toMatchObject({
      code: '08001',
      message: `no host of the database URL accepts a session with target_session_attrs=read-write (${hostOf(b())}: a standby (in recovery))`,
    });
  });
});

describe('DATABASE_REQUIRE_SYNCHRONOUS_STANDBY', () => {
  let primary: DataSource;
  beforeAll(async () => {
    primary = await openOn(pair.primary.url());
  });
  afterAll(async () => {
    await primary?.destroy();
  });

  it('says what is missing: the standby names, the commit level, a standby streaming synchronously', async () => {
    await expect(checkSynchronousStandby(primary)).rejects.toThrow(/^synchronous_standby_names is empty: commits wait for no standby/);
    await pair.setSynchronous(true);
    await pair.streaming();
    await checkSynchronousStandby(primary);
    await setting('synchronous_commit', 'remote_write');
    await expect(checkSynchronousStandby(primary)).rejects.toThrow(
      /^synchronous_commit is remote_write: a commit is acknowledged before a standby has flushed it \(needs on or remote_apply\)$/,
    );
    await setting('synchronous_commit', 'remote_apply');
    await checkSynchronousStandby(primary);
    await setting('synchronous_commit', undefined);
    await setting('synchronous_standby_names', 'nobody');
    await expect(checkSynchronousStandby(primary)).rejects.toThrow(
      `no synchronous standby is streaming (synchronous_standby_names = 'nobody'; pg_stat_replication: node_b streaming/async): commits wait until one is`,
    );
    await pair.setSynchronous(true);
  });

  it('refuses to start the API without one, saying so', async () => {
    await pair.setSynchronous(false);
    try {
      const config = {
        ...loadConfig({}),
        host: '127.0.0.1',
        port: 0,
        logLevel: 'error' as const,
        databaseUrl: pair.primary.url(),
        insecureDev: true,
        requireSynchronousStandby: true,
      };
      await expect(createAdmissionApi(config)).rejects.toThrow(
        /^DATABASE_REQUIRE_SYNCHRONOUS_STANDBY=true, but synchronous_standby_names is empty/,
      );
    } finally {
      await pair.setSynchronous(true);
    }
  });

  describe('the API requiring one', () => {
    let api: RunningApi;
    beforeAll(async () => {
      await pair.streaming();
      api = await startApi({ databaseUrl: pair.primary.url(), requireSynchronousStandby: true }, 'qlsync');
      const quota = await api.request('PUT', '/v1/namespaces/sync/resourcequotas/compute', {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        spec: { hard: { pods: '10' } },
      });
      expect(quota.status).toBe(201);
    }, 60_000);
    afterAll(async () => {
      await setting('synchronous_standby_names', '*');
      await api?.close();
    });

    it('answers /readyz with [+]synchronous-standby, and [-] with the reason while no standby confirms commits', async () => {
      const ready = await api.request('GET', '/readyz?exclude=queue');
      expect(ready.status).toBe(200);
      expect(ready.body).toMatch(/^\[\+\]database ok\n\[\+\]synchronous-standby ok\n\[\+\]shutdown ok\n/);
      await setting('synchronous_standby_names', 'nobody');
      const failing = await api.request('GET', '/readyz?exclude=queue');
      expect(failing.status).toBe(503);
      expect(failing.body).toMatch(
        /^\[\+\]database ok\n\[-\]synchronous-standby failed: no synchronous standby is streaming \(synchronous_standby_names = 'nobody'; pg_stat_replication: node_b streaming\/async\): commits wait until one is\n/m,
      );
      await setting('synchronous_standby_names', '*');
      await until(
        '/readyz 200 again',
        async () => ((await api.request('GET', '/readyz?exclude=queue')).status === 200 ? true : undefined),
        10_000,
      );
    });

    it('never answers "admitted" for a commit whose wait for the standby was cancelled; asked again, it answers what the ledger holds', async () => {
      await setting('synchronous_standby_names', 'nobody');
      const body = { requestId: 'sync-1', kind: 'Widget', resource: 'widgets.example.com', name: 'w1', resources: { pods: '1' } };
      const answer = api.request('POST', '/v1/namespaces/sync/reservations', body);
      // The COMMIT waits for a standby named nobody; an operator cancels the wait.
      const waiting = await until('a commit waiting for the synchronous standby', async () => {
        const { rows } = await adminQuery(`SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep'`);
        return rows[0]?.pid as number | undefined;
      });
      await adminQuery(`SELECT pg_cancel_backend(${waiting})`);
      const refused = await answer;
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.body).toMatchObject({
        reason: 'ServiceUnavailable',
        message: expect.stringMatching(
          /^the ledger committed the decision, but no synchronous standby confirmed it in time \(PostgreSQL: "canceling wait for synchronous replication/,
        ),
      });
      // The decision did commit on the primary: the same request reads it once the standby is back.
      await setting('synchronous_standby_names', '*');
      await pair.streaming();
      const again = await api.request('POST', '/v1/namespaces/sync/reservations', body);
      expect(again.status).toBe(201);
      const reserved = await adminQuery(`SELECT count(*)::int AS n FROM ledger_events WHERE request_id = 'rest:sync-1'`);
      expect(reserved.rows[0].n).toBe(1);
    });
  });
});
