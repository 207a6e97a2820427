import { randomInt } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { poolOf } from '../support/api.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { ensureBuilt, startApiProcess, type ApiProcess } from '../support/processes.js';
import { until } from '../support/wait.js';
import {
  createReview,
  overHardPoints,
  pod,
  quotaBody,
  repeatedIn,
  restReservation,
  runClients,
  send,
  streamOf,
  Target,
  usageOfStream,
  withoutDeliveryId,
  type Attempt,
} from './support/load.js';

/**
 * The admission API is SIGKILLed four times under load (32 clients, REST reservations and
 * webhook reviews over four namespaces whose quotas run out), and a new process is started
 * on the same database each time. A client whose connection broke retries the very same
 * request (same requestId / AdmissionReview uid) against the new process, as kube-apiserver
 * or a platform's client would. Whatever the kill interrupted, the ledger must hold every
 * acknowledged reservation exactly once, nothing twice, and never more than the quota.
 */
const CLIENTS = 32;
const NAMESPACES = ['kill-a', 'kill-b', 'kill-c', 'kill-d'];
const HARD = 300;
/** Answers received before each kill: two while every request is admitted, two as the quotas fill (denials in flight too). */
const KILL_AFTER_ANSWERS = [350, 800, 1180, 1300];
/** Denials every namespace must have answered before the load stops: each quota has certainly run out. */
const DENIALS_PER_NAMESPACE = 40;
/** Answered requests asked again at the end, besides every request a kill interrupted. */
const REASKED = 60;

interface Answer {
  readonly allowed: boolean;
  readonly status: number;
  readonly text: string;
  /** REST: the reservation id the client was given. */
  readonly reservationId?: string;
}

interface Request {
  readonly seq: number;
  readonly key: string;
  readonly kind: 'rest' | 'webhook';
  readonly namespace: string;
  readonly path: string;
  readonly body: unknown;
  /** Generations of the process that broke this request's connection (it was in flight at a kill). */
  readonly broken: number[];
  answer?: Answer;
}

let db: TestDatabase & { dataSource: DataSource };
let api: ApiProcess | undefined;

beforeAll(async () => {
  ensureBuilt();
  db = await createMigratedDatabase('qlfkill');
});

afterAll(async () => {
  // A killed child has a null exitCode (it has a signalCode), so stop() would wait for an exit already seen.
  if (api && api.child.exitCode === null && api.child.signalCode === null) await api.stop();
  await db?.drop();
});

/** An answer as a client reads it, or undefined when it is neither an admission nor a denial. */
function answerOf(request: Request, attempt: Extract<Attempt, { ok: true }>): Answer | undefined {
  if (request.kind === 'rest') {
    if (attempt.status === 201 && typeof attempt.body?.id === 'string')
      return { allowed: true, status: 201, text: attempt.text, reservationId: attempt.body.id };
    if (attempt.status === 403 && attempt.body?.details?.denial?.resource === 'pods')
      return { allowed: false, status: 403, text: attempt.text };
    return undefined;
  }
  const response = attempt.body?.response;
  if (attempt.status !== 200 || response?.uid !== (request.body as { request: { uid: string } }).request.uid) return undefined;
  if (response.allowed === true) return { allowed: true, status: 200, text: attempt.text };
  if (response.allowed === false && response.status?.code === 403) return { allowed: false, status: 200, text: attempt.text };
  return undefined;
}

describe('SIGKILL of the admission API under load', () => {
  it('keeps every acknowledged reservation exactly once, charges nothing twice, never exceeds hard, and answers retries consistently', async () => {
    const env = { DATABASE_URL: db.url, DATABASE_POOL_SIZE: '4' };
    api = await startApiProcess(env);
    for (const namespace of NAMESPACES) {
      const put = await send('PUT', `${api.base}/v1/namespaces/${namespace}/resourcequotas/compute`, quotaBody(HARD));
      expect(put.ok && put.status).toBe(201);
    }
    const target = new Target(api.base);

    const requests: Request[] = [];
    const unexpected: string[] = [];
    const breaks: { generation: number; at: number; key: string; error: string }[] = [];
    let answered = 0;
    let running = true;

    const next = (client: number): Request => {
      const seq = requests.length;
      // Every namespace gets both kinds of client.
      const namespace = NAMESPACES[Math.floor(client / 2) % NAMESPACES.length] as string;
      const object = pod(namespace, `p-${seq}`, `obj-${seq}`);
      const request: Request =
        client % 2 === 0
          ? {
              seq,
              key: `rest:req-${seq}`,
              kind: 'rest',
              namespace,
              path: `/v1/namespaces/${namespace}/reservations`,
              body: restReservation(`req-${seq}`, object),
              broken: [],
            }
          : {
              seq,
              key: `review:rev-${seq}`,
              kind: 'webhook',
              namespace,
              path: '/v1/admission/validate',
              body: createReview(`rev-${seq}`, object),
              broken: [],
            };
      requests.push(request);
      return request;
    };

    const load = runClients(CLIENTS, async (client) => {
      while (running) {
        const request = next(client);
        // The same request, again and again, until a process answers it.
        for (;;) {
          const { base, generation } = target.current;
          const attempt = await send('POST', `${base}${request.path}`, request.body);
          if (attempt.ok) {
            const answer = answerOf(request, attempt);
            if (answer) request.answer = answer;
            else unexpected.push(`${request.key}: HTTP ${attempt.status} ${attempt.text.slice(0, 300)}`);
            answered++;
            break;
          }
          request.broken.push(generation);
          breaks.push({ generation, at: Date.now(), key: request.key, error: attempt.error });
          await target.after(generation);
        }
      }
    });

    const kills: { generation: number; at: number }[] = [];
    try {
      for (const threshold of KILL_AFTER_ANSWERS) {
        await until(`${threshold} answers`, async () => (answered >= threshold ? true : undefined), 60_000);
        const victim = api;
        const exited = new Promise((resolve) => victim.child.once('exit', resolve));
        kills.push({ generation: target.current.generation, at: Date.now() });
        victim.child.kill('SIGKILL');
        await exited;
        api = await startApiProcess(env);
        target.moveTo(api.base);
      }
      const denials = (namespace: string): number =>
        requests.filter((r) => r.namespace === namespace && r.answer?.allowed === false).length;
      await until(
        'every quota exhausted',
        async () => (NAMESPACES.every((ns) => denials(ns) >= DENIALS_PER_NAMESPACE) ? true : undefined),
        60_000,
      );
    } finally {
      running = false;
      await load;
    }
    const base = api.base;
    const pool = poolOf(db.dataSource);

    // Every answer was an admission or a quota denial; connections broke only at the kills,
    // and each kill did interrupt requests in flight.
    expect(unexpected).toEqual([]);
    expect(requests.filter((r) => !r.answer).map((r) => r.key)).toEqual([]);
    const killed = new Map(kills.map((k) => [k.generation, k.at]));
    expect(breaks.filter((b) => !killed.has(b.generation) || b.at < (killed.get(b.generation) as number))).toEqual([]);
    for (const kill of kills)
      expect(
        breaks.filter((b) => b.generation === kill.generation).length,
        `requests broken by kill of generation ${kill.generation}`,
      ).toBeGreaterThan(0);

    // Per namespace: exactly HARD admitted, every other request denied, and the ledger agrees.
    const { rows: reservedRows } = await pool.query<{ namespace: string; request_id: string | null; reservation_id: string }>(
      `SELECT namespace, request_id, data->>'reservationId' AS reservation_id FROM ledger_events WHERE type = 'Reserved'`,
    );
    const reservedByKey = new Map<string, { namespace: string; reservationIds: string[] }>();
    for (const row of reservedRows) {
      const key = row.request_id ?? '(none)';
      const entry = reservedByKey.get(key) ?? { namespace: row.namespace, reservationIds: [] };
      entry.reservationIds.push(row.reservation_id);
      reservedByKey.set(key, entry);
    }
    for (const namespace of NAMESPACES) {
      const mine = requests.filter((r) => r.namespace === namespace);
      const allowed = mine.filter((r) => r.answer?.allowed).length;
      expect({ namespace, allowed, denied: mine.length - allowed }).toEqual({ namespace, allowed: HARD, denied: mine.length - HARD });
      expect(reservedRows.filter((r) => r.namespace === namespace)).toHaveLength(HARD);
    }
    // Each admitted request has exactly one Reserved event (the REST one with the id its client was given); a denied one none.
    const mismatched = requests.flatMap((r) => {
      const reserved = reservedByKey.get(r.key);
      const ids = reserved?.reservationIds ?? [];
      if (!r.answer?.allowed) return ids.length === 0 ? [] : [`${r.key} denied but reserved ${ids.join(',')}`];
      if (ids.length !== 1 || reserved?.namespace !== r.namespace)
        return [`${r.key} allowed, reserved ${ids.length}× in ${reserved?.namespace}`];
      if (r.answer.reservationId !== undefined && ids[0] !== r.answer.reservationId)
        return [`${r.key} answered id ${r.answer.reservationId}, ledger has ${ids[0]}`];
      return [];
    });
    expect(mismatched).toEqual([]);
    expect(reservedByKey.size).toBe(HARD * NAMESPACES.length);
    expect(await repeatedIn(pool, 'Reserved', "data->>'reservationId'")).toEqual([]);
    expect(await repeatedIn(pool, 'Reserved', 'request_id')).toEqual([]);

    // One decision per request, agreeing with the answer its client finally got.
    const { rows: decisions } = await pool.query<{ request_key: string; allowed: boolean }>(
      `SELECT request_key, allowed FROM admission_decisions`,
    );
    expect(decisions).toHaveLength(requests.length);
    const decided = new Map(decisions.map((d) => [d.request_key, d.allowed]));
    expect(requests.filter((r) => decided.get(r.key) !== r.answer?.allowed).map((r) => r.key)).toEqual([]);

    // The fold of each stream never passed hard at any version, and ends exactly at hard;
    // the head row (what /usage and admission read) is that fold.
    for (const namespace of NAMESPACES) {
      const stream = await streamOf(pool, namespace);
      expect(overHardPoints(stream)).toEqual([]);
      const folded = usageOfStream(stream);
      expect(folded).toEqual({ compute: { pods: String(HARD), 'requests.cpu': String((HARD * 10) / 1000) } });
      const usage = await send('GET', `${base}/v1/namespaces/${namespace}/usage`);
      expect(usage.ok && Object.fromEntries(usage.body.quotas.map((q: { name: string; used: unknown }) => [q.name, q.used]))).toEqual(
        folded,
      );
    }

    // Asked again (every request a kill interrupted, and a sample of the others), each gets
    // the answer its client got, and nothing more is appended or decided.
    const interrupted = requests.filter((r) => r.broken.length > 0);
    const others = requests.filter((r) => r.broken.length === 0);
    const sample = [...interrupted, ...Array.from({ length: REASKED }, () => others[randomInt(others.length)] as Request)];
    const eventsBefore = Number((await pool.query(`SELECT count(*) AS n FROM ledger_events`)).rows[0].n);
    const changed: string[] = [];
    await runClients(8, async (client) => {
      for (let i = client; i < sample.length; i += 8) {
        const request = sample[i] as Request;
        const again = await send('POST', `${base}${request.path}`, request.body);
        // Equal as JSON, not as text: the stored answer comes back from jsonb, which orders keys its
        // own way; and without the request id a denial names, which is each HTTP request's own.
        if (
          !again.ok ||
          again.status !== request.answer?.status ||
          !isDeepStrictEqual(withoutDeliveryId(again.body), withoutDeliveryId(JSON.parse(request.answer.text)))
        ) {
          changed.push(
            `${request.key}: ${request.answer?.status} ${request.answer?.text} -> ${again.ok ? `${again.status} ${again.text}` : again.error}`,
          );
        }
      }
    });
    expect(changed).toEqual([]);
    expect(Number((await pool.query(`SELECT count(*) AS n FROM ledger_events`)).rows[0].n)).toBe(eventsBefore);
    expect(Number((await pool.query(`SELECT count(*) AS n FROM admission_decisions`)).rows[0].n)).toBe(requests.length);
  });
});
