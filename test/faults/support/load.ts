import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { evolve, fold, initialState, Resources, type NamespaceState, type Pod, type RecordedEvent } from '@quota/domain';
import type pg from 'pg';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Load and ledger-reading helpers for the fault tests: HTTP clients that survive a process
 * being killed under them, the request bodies they send, and the checks that hold whatever
 * happened (the ledger folds without error, usage never passed hard, nothing was charged or
 * released twice).
 */

/** What one HTTP attempt got: an answer, or a failure of the connection (the process died under it). */
export type Attempt =
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests read arbitrary JSON answers
  | { readonly ok: true; readonly status: number; readonly body: any; readonly text: string }
  | { readonly ok: false; readonly error: string };

/**
 * Sends one JSON request. A connection that breaks (the server was killed) is an answer of
 * its own, not an exception, so that a client can retry it. The timeout only stops a hang.
 */
export async function send(method: string, url: string, body?: unknown, timeoutMs = 30_000): Promise<Attempt> {
  try {
    const response = await fetch(url, {
      method,
      signal: AbortSignal.timeout(timeoutMs),
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { ok: true, status: response.status, body: parsed, text };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { ok: false, error: cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error)) };
  }
}

/** A pod charging `pods: 1` and a little CPU; its uid is the key the webhook reserves under. */
export function pod(namespace: string, name: string, uid: string, cpu = '10m'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, uid },
    spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu }, limits: { cpu } } }] },
  };
}

/** A CREATE AdmissionReview for a pod, as kube-apiserver sends it to the validating webhook. */
export function createReview(uid: string, object: Pod): unknown {
  const namespace = object.metadata?.namespace ?? '';
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name: object.metadata?.name ?? '',
      namespace,
      operation: 'CREATE',
      userInfo: {
        username: 'system:serviceaccount:kube-system:replicaset-controller',
        groups: ['system:serviceaccounts', 'system:authenticated'],
      },
      object,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  };
}

/** A REST reservation body for a pod, with an idempotency key. */
export function restReservation(requestId: string, object: Pod): unknown {
  return { requestId, kind: 'Pod', name: object.metadata?.name, object };
}

/** `pods: HARD` with enough CPU that only the pod count can run out. */
export function quotaBody(pods: number): unknown {
  return {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'compute' },
    spec: { hard: { pods: String(pods), 'requests.cpu': '1000' } },
  };
}

/** A namespace's whole stream, as the domain folds it. */
export async function streamOf(pool: pg.Pool, namespace: string): Promise<RecordedEvent[]> {
  const { rows } = await pool.query<{ version: string; type: string; data: unknown; at_ms: number }>(
    `SELECT version::text AS version, type, data, (extract(epoch from recorded_at) * 1000)::float8 AS at_ms
       FROM ledger_events WHERE namespace = $1 ORDER BY ledger_events.version`,
    [namespace],
  );
  return rows.map((r) => ({ type: r.type, data: r.data, version: Number(r.version), at: Math.floor(r.at_ms) }) as RecordedEvent);
}

/** Usage per quota of a folded state, canonical: the shape the head row, /usage and the read models show. */
export function usageOf(state: NamespaceState): Record<string, Record<string, string>> {
  return Object.fromEntries(
    [...state.quotas.keys()].sort().map((name) => [name, Resources.canonicalResourceList(state.used.get(name) ?? Resources.EMPTY)]),
  );
}

/** Usage per quota of a stream (the fold asserts every invariant on the way: gap-free versions, no double release). */
export function usageOfStream(events: readonly RecordedEvent[]): Record<string, Record<string, string>> {
  return usageOf(fold(events));
}

/**
 * Folds a stream one event at a time and names every point where a quota's usage exceeded
 * its hard limit: admission must never let that happen, at any version, not only at the end.
 */
export function overHardPoints(events: readonly RecordedEvent[]): string[] {
  const points: string[] = [];
  let state = initialState();
  for (const event of events) {
    state = evolve(state, event);
    for (const quota of state.quotas.values()) {
      const used = state.used.get(quota.name) ?? Resources.EMPTY;
      const { exceeded } = Resources.lessThanOrEqual(used, quota.hard);
      for (const resource of exceeded) {
        points.push(
          `v${event.version} ${event.type}: ${quota.name} ${resource} used ${Resources.get(used, resource)?.canonical()} > hard ${Resources.get(quota.hard, resource)?.canonical()}`,
        );
      }
    }
  }
  return points;
}

/** Values of `expression` (over ledger_events) that occur in more than one event of `type`: each must occur once. */
export async function repeatedIn(
  pool: pg.Pool,
  type: string,
  expression: "data->>'reservationId'" | 'request_id',
): Promise<{ value: string; n: number }[]> {
  const { rows } = await pool.query<{ value: string; n: number }>(
    `SELECT ${expression} AS value, count(*)::int AS n FROM ledger_events WHERE type = $1 AND ${expression} IS NOT NULL GROUP BY 1 HAVING count(*) > 1 ORDER BY 1`,
    [type],
  );
  return rows;
}

/**
 * The address clients send to, which moves when the process behind it is killed and a new
 * one started. A client whose connection broke waits for the next generation, then retries.
 */
export class Target {
  private state: { base: string; generation: number };
  private waiters: (() => void)[] = [];

  constructor(base: string) {
    this.state = { base, generation: 0 };
  }

  get current(): { readonly base: string; readonly generation: number } {
    return this.state;
  }

  /** Points every client at a new process. */
  moveTo(base: string): void {
    this.state = { base, generation: this.state.generation + 1 };
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves once a process newer than `generation` is in place. */
  async after(generation: number): Promise<void> {
    while (this.state.generation <= generation) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

/** Runs `count` clients until each returns; a client's failure fails the whole run. */
export async function runClients(count: number, client: (index: number) => Promise<void>): Promise<void> {
  await Promise.all(Array.from({ length: count }, (_, index) => client(index)));
}

export interface AppProcess {
  readonly child: ChildProcess;
  /** Resolves with the exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  /** Everything it wrote, for failure messages. */
  output(): string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/** One compiled app (`dist/apps/…/main.js`, path from the repository root), quiet unless it fails. */
export function startApp(script: string, args: readonly string[], env: Record<string, string>): AppProcess {
  const child = spawn(process.execPath, [`${ROOT}${script}`, ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until no connection to `database` but the caller's own data source remains.
 * pg's Pool.end() resolves before its clients' sockets are closed, and a DROP DATABASE
 * WITH (FORCE) that lands in between ends those backends under the closing clients, which
 * then report an unhandled error. Best effort: gives up after `timeoutMs`.
 */
export async function connectionsClosed(
  pool: pg.Pool,
  database: string,
  keepApplication = 'quota-ledger',
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name <> $2`,
      [database, keepApplication],
    );
    if ((rows[0]?.n ?? 0) === 0) return;
    await sleep(50);
  }
}

/** The body without the delivery's request id (a REST Status's details, an AdmissionReview denial's status.details). */
export function withoutDeliveryId(body: unknown): unknown {
  if (typeof body !== 'object' || body === null) return body;
  const copy = structuredClone(body) as { details?: { requestId?: string }; response?: { status?: { details?: { requestId?: string } } } };
  delete copy.details?.requestId;
  delete copy.response?.status?.details?.requestId;
  return copy;
}
