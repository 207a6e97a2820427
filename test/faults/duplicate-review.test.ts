import { isDeepStrictEqual } from 'node:util';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { poolOf } from '../support/api.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { ensureBuilt, startApiProcess, type ApiProcess } from '../support/processes.js';
import {
  createReview,
  overHardPoints,
  pod,
  quotaBody,
  repeatedIn,
  restReservation,
  send,
  streamOf,
  usageOfStream,
  withoutDeliveryId,
  type Attempt,
} from './support/load.js';

/**
 * Duplicate deliveries, the way they really arrive: kube-apiserver retries a webhook call
 * that timed out (same AdmissionReview uid), calls the webhook again for the same object
 * (same metadata.uid, new review uid), and a platform's client retries a reservation (same
 * requestId) — all at once, and through two API processes on one database, so the
 * duplicates race in different batchers and different transactions. The ledger must answer
 * every copy alike and charge once.
 */
const COPIES = 50;
const EDGE_COPIES = 20;
const EDGE_ROUNDS = 8;

let db: TestDatabase & { dataSource: DataSource };
let pool: pg.Pool;
let apis: ApiProcess[] = [];

beforeAll(async () => {
  ensureBuilt();
  db = await createMigratedDatabase('qlfdup');
  pool = poolOf(db.dataSource);
  apis = await Promise.all([0, 1].map(() => startApiProcess({ DATABASE_URL: db.url, DATABASE_POOL_SIZE: '4' })));
});

afterAll(async () => {
  await Promise.all(apis.map((api) => api.stop()));
  await db?.drop();
});

/** The process a copy goes through: alternating, so both processes always race. */
const via = (copy: number): string => (apis[copy % apis.length] as ApiProcess).base;

async function defineQuota(namespace: string, pods: number): Promise<void> {
  const put = await send('PUT', `${via(0)}/v1/namespaces/${namespace}/resourcequotas/compute`, quotaBody(pods));
  expect(put.ok && put.status).toBe(201);
}

/** Every copy of every request at once (interleaved, so copies of different requests contend too); answers grouped per request. */
async function deliverAll(requests: readonly { path: string; body: unknown }[], copies: number): Promise<Attempt[][]> {
  const answers: Attempt[][] = requests.map(() => []);
  await Promise.all(
    Array.from({ length: copies * requests.length }, async (_, i) => {
      const which = i % requests.length;
      const request = requests[which] as { path: string; body: unknown };
      (answers[which] as Attempt[]).push(await send('POST', `${via(Math.floor(i / requests.length))}${request.path}`, request.body));
    }),
  );
  return answers;
}

/** The distinct answers among copies (as JSON: a repeat comes back from jsonb, with its own key order). */
/**
 * The answers that differ, each once. A denial names the HTTP request that carried it
 * (`details.requestId`, as X-Request-Id does), which is each delivery's own: compared without it.
 */
function distinct(attempts: readonly Attempt[]): Attempt[] {
  const kinds: Attempt[] = [];
  for (const attempt of attempts) {
    const same = kinds.some(
      (k) =>
        k.ok && attempt.ok && k.status === attempt.status && isDeepStrictEqual(withoutDeliveryId(k.body), withoutDeliveryId(attempt.body)),
    );
    if (!same) kinds.push(attempt);
  }
  return kinds;
}

async function count(sql: string, params: unknown[]): Promise<number> {
  return Number((await pool.query<{ n: string }>(sql, params)).rows[0]?.n);
}
const reservedEvents = (namespace: string): Promise<number> =>
  count(`SELECT count(*) AS n FROM ledger_events WHERE namespace = $1 AND type = 'Reserved'`, [namespace]);
const decisionsFor = (namespace: string): Promise<number> =>
  count(`SELECT count(*) AS n FROM admission_decisions WHERE namespace = $1`, [namespace]);

/** The fold of the namespace's stream, which must never have passed hard; and /usage (the head row) must equal it. */
async function foldedUsage(namespace: string): Promise<Record<string, Record<string, string>>> {
  const stream = await streamOf(pool, namespace);
  expect(overHardPoints(stream)).toEqual([]);
  const folded = usageOfStream(stream);
  const usage = await send('GET', `${via(1)}/v1/namespaces/${namespace}/usage`);
  expect(usage.ok && Object.fromEntries(usage.body.quotas.map((q: { name: string; used: unknown }) => [q.name, q.used]))).toEqual(folded);
  return folded;
}

const oneCharge = { compute: { pods: '1', 'requests.cpu': '10m' } };

describe('duplicate deliveries through two API processes', () => {
  it(`answers ${COPIES} concurrent copies of one AdmissionReview alike and reserves once, round after round`, async () => {
    const namespace = 'dup-review';
    await defineQuota(namespace, 10);
    for (let round = 0; round < 5; round++) {
      const uid = `review-${round}`;
      const [copies] = await deliverAll(
        [{ path: '/v1/admission/validate', body: createReview(uid, pod(namespace, `web-${round}`, `obj-${round}`)) }],
        COPIES,
      );
      expect(copies).toHaveLength(COPIES);
      expect(distinct(copies as Attempt[])).toEqual([
        expect.objectContaining({
          ok: true,
          status: 200,
          body: {
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: {
              uid,
              allowed: true,
              auditAnnotations: { decision: expect.stringMatching(/^\d+$/), reservation: expect.any(String) },
            },
          },
        }),
      ]);
      expect(await count(`SELECT count(*) AS n FROM ledger_events WHERE type = 'Reserved' AND request_id = $1`, [`review:${uid}`])).toBe(1);
      expect(await count(`SELECT count(*) AS n FROM admission_decisions WHERE request_key = $1`, [`review:${uid}`])).toBe(1);
    }
    expect(await reservedEvents(namespace)).toBe(5);
    expect(await decisionsFor(namespace)).toBe(5);
    expect(await foldedUsage(namespace)).toEqual({ compute: { pods: '5', 'requests.cpu': '50m' } });
  });

  it(`answers ${COPIES} concurrent copies of one REST reservation (same requestId) with one reservation id`, async () => {
    const namespace = 'dup-rest';
    await defineQuota(namespace, 10);
    const [copies] = await deliverAll(
      [{ path: `/v1/namespaces/${namespace}/reservations`, body: restReservation('deploy-7-web-1', pod(namespace, 'web-1', 'obj-web-1')) }],
      COPIES,
    );
    const kinds = distinct(copies as Attempt[]);
    expect(kinds).toEqual([
      expect.objectContaining({
        ok: true,
        status: 201,
        body: expect.objectContaining({ id: expect.any(String), namespace, state: 'reserved' }),
      }),
    ]);
    const id = (kinds[0] as { body: { id: string } }).body.id;
    const { rows } = await pool.query(
      `SELECT data->>'reservationId' AS id, request_id FROM ledger_events WHERE namespace = $1 AND type = 'Reserved'`,
      [namespace],
    );
    expect(rows).toEqual([{ id, request_id: 'rest:deploy-7-web-1' }]);
    expect(await decisionsFor(namespace)).toBe(1);
    expect(await foldedUsage(namespace)).toEqual(oneCharge);
  });

  it('charges one object once when it is admitted under many review uids and many requestIds at once', async () => {
    // kube-apiserver may call a webhook twice for one create (reinvocation, a retried
    // request): new review uids, the same metadata.uid. A REST client may do the same with
    // new requestIds. Each call is a decision of its own, but the object is charged once.
    const namespace = 'dup-object';
    await defineQuota(namespace, 10);
    const object = pod(namespace, 'web-1', 'obj-shared');
    const reviews = Array.from({ length: 20 }, (_, i) => ({ path: '/v1/admission/validate', body: createReview(`call-${i}`, object) }));
    const answers = await deliverAll(reviews, 1);
    expect(answers.flat().filter((a) => !(a.ok && a.status === 200 && a.body.response.allowed === true))).toEqual([]);
    expect(await reservedEvents(namespace)).toBe(1);

    const other = pod(namespace, 'web-2', 'obj-shared-rest');
    const reservations = Array.from({ length: 20 }, (_, i) => ({
      path: `/v1/namespaces/${namespace}/reservations`,
      body: restReservation(`attempt-${i}`, other),
    }));
    const rest = (await deliverAll(reservations, 1)).flat();
    const ids = new Set(rest.map((a) => (a.ok && a.status === 201 ? a.body.id : `HTTP ${a.ok ? a.status : a.error}`)));
    expect(ids.size).toBe(1);
    const { rows } = await pool.query(
      `SELECT data->>'reservationId' AS id FROM ledger_events WHERE namespace = $1 AND type = 'Reserved' AND data->'object'->>'uid' = $2`,
      [namespace, 'obj-shared-rest'],
    );
    expect(rows).toEqual([{ id: [...ids][0] }]);

    expect(await reservedEvents(namespace)).toBe(2);
    expect(await decisionsFor(namespace)).toBe(40);
    expect(await foldedUsage(namespace)).toEqual({ compute: { pods: '2', 'requests.cpu': '20m' } });
  });

  it(`at pods: 1, admits exactly one of two reviews each delivered ${EDGE_COPIES}× at once, and every copy of each gets its answer`, async () => {
    for (let round = 0; round < EDGE_ROUNDS; round++) {
      const namespace = `edge-review-${round}`;
      await defineQuota(namespace, 1);
      const uids = [`first-${round}`, `second-${round}`];
      const answers = await deliverAll(
        uids.map((uid) => ({ path: '/v1/admission/validate', body: createReview(uid, pod(namespace, uid, `obj-${uid}`)) })),
        EDGE_COPIES,
      );
      const verdicts = answers.map((copies, i) => {
        const kinds = distinct(copies);
        // One answer per review, whichever process each copy went through.
        expect(kinds, `copies of ${uids[i]}`).toHaveLength(1);
        const only = kinds[0] as Attempt;
        expect(only.ok && only.status, `copies of ${uids[i]}`).toBe(200);
        return only.ok ? (only.body.response as { uid: string; allowed: boolean; status?: { code: number; message: string } }) : undefined;
      });
      expect(verdicts.filter((v) => v?.allowed === true)).toHaveLength(1);
      const denied = verdicts.find((v) => v?.allowed === false);
      expect(denied?.status?.code).toBe(403);
      expect(denied?.status?.message).toBe(
        `pods "${denied?.uid}" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1`,
      );
      const allowedUid = verdicts.find((v) => v?.allowed)?.uid as string;
      const { rows } = await pool.query(`SELECT request_id FROM ledger_events WHERE namespace = $1 AND type = 'Reserved'`, [namespace]);
      expect(rows).toEqual([{ request_id: `review:${allowedUid}` }]);
      expect(await decisionsFor(namespace)).toBe(2);
      expect(await foldedUsage(namespace)).toEqual(oneCharge);
    }
  });

  it(`at pods: 1, admits exactly one of two REST reservations each sent ${EDGE_COPIES}× at once (same requestId per copy)`, async () => {
    for (let round = 0; round < EDGE_ROUNDS; round++) {
      const namespace = `edge-rest-${round}`;
      await defineQuota(namespace, 1);
      const requestIds = [`a-${round}`, `b-${round}`];
      const answers = await deliverAll(
        requestIds.map((id) => ({
          path: `/v1/namespaces/${namespace}/reservations`,
          body: restReservation(id, pod(namespace, id, `obj-${id}`)),
        })),
        EDGE_COPIES,
      );
      const verdicts = answers.map((copies, i) => {
        const kinds = distinct(copies);
        expect(kinds, `copies of ${requestIds[i]}`).toHaveLength(1);
        return kinds[0] as Attempt;
      });
      const statuses = verdicts.map((v) => (v.ok ? v.status : v.error)).sort();
      expect(statuses).toEqual([201, 403]);
      const admitted = verdicts.find((v) => v.ok && v.status === 201) as Extract<Attempt, { ok: true }>;
      const refused = verdicts.find((v) => v.ok && v.status === 403) as Extract<Attempt, { ok: true }>;
      expect(refused.body.details.denial).toMatchObject({
        kind: 'Exceeded',
        quota: 'compute',
        resource: 'pods',
        requested: '1',
        used: '1',
        hard: '1',
      });
      const { rows } = await pool.query(
        `SELECT data->>'reservationId' AS id FROM ledger_events WHERE namespace = $1 AND type = 'Reserved'`,
        [namespace],
      );
      expect(rows).toEqual([{ id: admitted.body.id }]);
      expect(await decisionsFor(namespace)).toBe(2);
      expect(await foldedUsage(namespace)).toEqual(oneCharge);
    }
  });

  it('left no reservation recorded twice anywhere in the ledger', async () => {
    expect(await repeatedIn(pool, 'Reserved', "data->>'reservationId'")).toEqual([]);
    expect(await repeatedIn(pool, 'Reserved', 'request_id')).toEqual([]);
  });
});
