import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { ensureBuilt, startApiProcess, type ApiProcess } from '../support/processes.js';
import { admissionReview } from '../support/review.js';
import { until } from '../support/wait.js';

/**
 * A rollout as a load balancer following /readyz sees it: two built API processes
 * on one migrated database; clients send admissions without pause to whichever replicas last
 * answered /readyz 200 (the manifests' probe, `?exclude=queue`); one replica gets SIGTERM.
 * It must answer /readyz `[-]shutdown` from then on while still serving every admission that
 * reaches it (the balancer only learns at its next probe), close only once its drain is over,
 * and exit 0. No admission may be refused or see a connection error while the other replica is
 * ready: under failurePolicy Fail that would have denied a cluster write.
 */
const DRAIN_SECONDS = 2;
const CLIENTS = 4;
const PROBE_EVERY_MS = 500;
const NAMESPACE = 'drain';

interface Probe {
  readonly status: number;
  readonly body: string;
}

let db: TestDatabase & { dataSource: DataSource };
const replicas: ApiProcess[] = [];

beforeAll(async () => {
  ensureBuilt();
  db = await createMigratedDatabase('qlsigterm');
  for (let i = 0; i < 2; i++)
    replicas.push(await startApiProcess({ DATABASE_URL: db.url, DATABASE_POOL_SIZE: '4', SHUTDOWN_DRAIN_SECONDS: String(DRAIN_SECONDS) }));
});

afterAll(async () => {
  for (const replica of replicas) if (replica.child.exitCode === null && replica.child.signalCode === null) await replica.stop('SIGKILL');
  await db?.drop();
});

let seq = 0;
function review(): { uid: string; body: unknown } {
  const n = ++seq;
  const uid = `drain-${n}`;
  const object = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p-${n}`, namespace: NAMESPACE, uid: `pod-${n}` },
    spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1m' } } }] },
  };
  return {
    uid,
    body: admissionReview({
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: NAMESPACE,
      name: `p-${n}`,
      operation: 'CREATE',
      object,
    }),
  };
}

/** One admission: undefined when allowed for this very review, else what went wrong (a status, a connection error). */
async function admit(base: string): Promise<{ failure?: string; connection: string | null }> {
  const { uid, body } = review();
  try {
    const response = await fetch(`${base}/v1/admission/validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    const answer = JSON.parse(text) as { response?: { uid?: string; allowed?: boolean } };
    const ok = response.status === 200 && answer.response?.uid === uid && answer.response.allowed === true;
    return { ...(ok ? {} : { failure: `HTTP ${response.status} ${text.slice(0, 200)}` }), connection: response.headers.get('connection') };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return {
      failure: `${error instanceof Error ? error.message : String(error)} ${cause?.code ?? cause?.message ?? ''}`,
      connection: null,
    };
  }
}

/**
 * One readiness probe as the kubelet sends it: a new connection each time (its HTTP prober disables
 * keep-alive). A probe on a reused keep-alive connection can meet the server closing that idle
 * connection as it drains, and fail without the server having stopped answering.
 */
function probe(base: string): Promise<Probe> {
  return new Promise((resolve) => {
    const request = http.get(`${base}/readyz?exclude=queue`, { agent: false, timeout: 5_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', (error) => resolve({ status: 0, body: error.message }));
    });
    request.on('timeout', () => request.destroy(new Error('the probe timed out')));
    request.on('error', (error) => resolve({ status: 0, body: error.message }));
  });
}

describe('SIGTERM during a rollout', () => {
  it('fails /readyz with [-]shutdown at once, serves through the drain, refuses no admission while another replica is ready, and exits 0', async () => {
    const [leaving, staying] = replicas as [ApiProcess, ApiProcess];
    const put = await fetch(`${staying.base}/v1/namespaces/${NAMESPACE}/resourcequotas/compute`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { pods: '1000000', 'requests.cpu': '100000' } } }),
    });
    expect(put.status).toBe(201);

    // The load balancer: each replica in rotation while its last probe answered 200.
    const ready = new Set<ApiProcess>();
    const probesAfterSigterm: { leaving: Probe[]; staying: Probe[] } = { leaving: [], staying: [] };
    let sigtermSent = false;
    let balancing = true;
    const balancer = (async () => {
      while (balancing) {
        for (const replica of replicas) {
          const answer = await probe(replica.base);
          if (sigtermSent) probesAfterSigterm[replica === leaving ? 'leaving' : 'staying'].push(answer);
          if (answer.status === 200) ready.add(replica);
          else ready.delete(replica);
        }
        await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
      }
    })();
    await until('both replicas in rotation', async () => (ready.size === 2 ? true : undefined));

    const failures: string[] = [];
    const served = new Map<ApiProcess, number>(replicas.map((r) => [r, 0]));
    let servedByLeavingAfterSigterm = 0;
    let sending = true;
    let turn = 0;
    const clients = Array.from({ length: CLIENTS }, async () => {
      while (sending) {
        const inRotation = [...ready];
        const target = inRotation[turn++ % Math.max(1, inRotation.length)];
        if (!target) {
          failures.push('no replica in rotation');
          await new Promise((resolve) => setTimeout(resolve, 10));
          continue;
        }
        const afterSigterm = sigtermSent;
        const { failure } = await admit(target.base);
        if (failure)
          failures.push(`${target === leaving ? 'leaving' : 'staying'} replica${afterSigterm ? ' after SIGTERM' : ''}: ${failure}`);
        else {
          served.set(target, (served.get(target) ?? 0) + 1);
          if (target === leaving && afterSigterm) servedByLeavingAfterSigterm++;
        }
      }
    });

    await until('both replicas serving admissions', async () =>
      (served.get(leaving) ?? 0) >= 20 && (served.get(staying) ?? 0) >= 20 ? true : undefined,
    );
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      leaving.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    sigtermSent = true;
    leaving.child.kill('SIGTERM');

    // A client whose endpoint list is stale still reaches the leaving replica during the drain:
    // it is served, and told to close its connection so that its next one goes elsewhere.
    let gone = false;
    void exited.then(() => (gone = true));
    await until('the leaving replica to answer [-]shutdown, or to exit', async () =>
      gone || probesAfterSigterm.leaving.some((p) => p.status === 503) ? true : undefined,
    );
    const stale = gone ? { failure: 'the replica exited before it answered [-]shutdown', connection: null } : await admit(leaving.base);

    const exit = await exited;
    const servedAtExit = served.get(staying) ?? 0;
    // Keep sending for a while after the exit: the staying replica alone.
    await until('admissions after the exit', async () => ((served.get(staying) ?? 0) >= servedAtExit + 20 ? true : undefined));
    sending = false;
    await Promise.all(clients);
    balancing = false;
    await balancer;

    console.log(
      `sigterm-drain: ${served.get(leaving)} admissions served by the leaving replica (${servedByLeavingAfterSigterm} after SIGTERM, before its balancer noticed), ` +
        `${served.get(staying)} by the staying one; ${probesAfterSigterm.leaving.length} probes of the leaving replica after SIGTERM`,
    );
    expect(failures).toEqual([]);
    expect(stale.failure, 'an admission sent straight to the draining replica').toBeUndefined();
    expect(stale.connection).toBe('close');
    expect(exit).toEqual({ code: 0, signal: null });
    // The staying replica was ready throughout: every failure above would have been a refusal.
    expect(probesAfterSigterm.staying.every((p) => p.status === 200)).toBe(true);
    // From the signal on, the leaving replica was never ready again: [-]shutdown while it served, then no answer once closed.
    const answered = probesAfterSigterm.leaving.filter((p) => p.status !== 0);
    expect(answered.length).toBeGreaterThan(0);
    for (const p of answered) {
      expect(p.status).toBe(503);
      expect(p.body).toMatch(/^\[-\]shutdown failed: SIGTERM received: .+$/m);
      expect(p.body).toMatch(/^\[\+\]database ok$/m);
      expect(p.body).toMatch(/readyz check failed\n$/);
    }
    // Once it stopped answering, it never answered again.
    const lastAnswered = probesAfterSigterm.leaving.findLastIndex((p) => p.status !== 0);
    expect(probesAfterSigterm.leaving.slice(0, lastAnswered).every((p) => p.status !== 0)).toBe(true);
  });
});
