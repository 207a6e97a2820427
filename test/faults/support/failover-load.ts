import { sleep } from './load.js';

/**
 * The clients of the failover test (failover.test.ts): each sends admissions and, whatever it
 * is answered short of a decision (a 503, a broken connection), sends the same request again —
 * same requestId, same review uid — until it gets one, as a kube-apiserver retrying under
 * failurePolicy: Fail or a platform's client does. Every attempt is logged with its answer, and
 * every acknowledgment (a 201 reservation, an allowed review) goes into the log that the ledger
 * must hold afterwards.
 */

/** One HTTP attempt as the client saw it. */
export interface Exchange {
  readonly what: 'reserve' | 'release' | 'review';
  readonly key: string;
  readonly sentAt: number;
  readonly answeredAt: number;
  /** 0: no answer (connection refused or broken, or the client's timeout). */
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are arbitrary JSON, checked field by field
  readonly body: any;
  readonly retryAfter: string | null;
  readonly error?: string;
}

/** An admission the client was told was made: it must be in the ledger. */
export interface Acknowledged {
  readonly namespace: string;
  /** The ledger's request id: `rest:<requestId>` or `review:<uid>`. */
  readonly requestId: string;
  /** The REST answer's reservation id (reviews do not name one). */
  readonly reservationId?: string;
  readonly sentAt: number;
  readonly answeredAt: number;
}

export class LoadLog {
  readonly exchanges: Exchange[] = [];
  readonly acknowledged: Acknowledged[] = [];
  stopping = false;
  /** Set when the test gives up (a process it sends to exited): every client stops at once with it. */
  aborted: string | undefined;

  constructor(private readonly base: string) {}

  async send(what: Exchange['what'], key: string, method: string, path: string, body?: unknown): Promise<Exchange> {
    const sentAt = Date.now();
    let exchange: Exchange;
    try {
      const response = await fetch(`${this.base}${path}`, {
        method,
        // kube-apiserver's webhook timeout (10 s): a longer wait is a hang.
        signal: AbortSignal.timeout(10_000),
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON
      }
      exchange = {
        what,
        key,
        sentAt,
        answeredAt: Date.now(),
        status: response.status,
        body: parsed,
        retryAfter: response.headers.get('retry-after'),
      };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      exchange = {
        what,
        key,
        sentAt,
        answeredAt: Date.now(),
        status: 0,
        body: undefined,
        retryAfter: null,
        error: cause?.code ?? (error instanceof Error ? error.message : String(error)),
      };
    }
    this.exchanges.push(exchange);
    return exchange;
  }

  /** Sends until the answer is one of `final` (a decision); gives up after `deadlineMs`, which fails the test. */
  async untilFinal(
    what: Exchange['what'],
    key: string,
    method: string,
    path: string,
    body: unknown,
    final: readonly number[],
    deadlineMs = 60_000,
  ): Promise<Exchange> {
    const deadline = Date.now() + deadlineMs;
    for (let attempt = 0; ; attempt++) {
      if (this.aborted !== undefined) throw new Error(`${what} ${key}: ${this.aborted}`);
      const exchange = await this.send(what, key, method, path, body);
      if (final.includes(exchange.status)) return exchange;
      if (Date.now() > deadline)
        throw new Error(
          `${what} ${key}: no decision within ${deadlineMs} ms; last answer ${exchange.status} ${JSON.stringify(exchange.body ?? exchange.error)}`,
        );
      await sleep(Math.min(200, 50 * 2 ** Math.min(attempt, 2)));
    }
  }
}

/**
 * A REST client racing the others for one quota: it keeps at most `window` reservations live,
 * releasing its oldest when the window is full or it was denied, so the quota binds all along.
 */
export async function restClient(log: LoadLog, namespace: string, worker: number, window: number): Promise<void> {
  const live: string[] = [];
  const releaseOldest = async (): Promise<void> => {
    const id = live.shift();
    if (id !== undefined) await log.untilFinal('release', id, 'DELETE', `/v1/namespaces/${namespace}/reservations/${id}`, undefined, [200]);
  };
  for (let seq = 1; !log.stopping; seq++) {
    if (live.length >= window) await releaseOldest();
    const key = `${namespace}-r${worker}-${seq}`;
    const body = {
      requestId: key,
      kind: 'Widget',
      resource: 'widgets.example.com',
      name: key,
      resources: { 'example.com/gpu': String(1 + (seq % 3)) },
    };
    const answer = await log.untilFinal('reserve', key, 'POST', `/v1/namespaces/${namespace}/reservations`, body, [201, 403]);
    if (answer.status === 201) {
      live.push(answer.body.id as string);
      log.acknowledged.push({
        namespace,
        requestId: `rest:${key}`,
        reservationId: answer.body.id as string,
        sentAt: answer.sentAt,
        answeredAt: answer.answeredAt,
      });
    } else await releaseOldest();
  }
}

/** REST reservations with a one-second TTL, never committed: the reconciler releases them as expired. */
export async function expiringClient(log: LoadLog, namespace: string): Promise<void> {
  for (let seq = 1; !log.stopping; seq++) {
    const key = `${namespace}-t${seq}`;
    const body = {
      requestId: key,
      kind: 'Widget',
      resource: 'widgets.example.com',
      name: key,
      resources: { 'example.com/gpu': '1' },
      ttlSeconds: 1,
    };
    const answer = await log.untilFinal('reserve', key, 'POST', `/v1/namespaces/${namespace}/reservations`, body, [201, 403]);
    if (answer.status === 201)
      log.acknowledged.push({
        namespace,
        requestId: `rest:${key}`,
        reservationId: answer.body.id as string,
        sentAt: answer.sentAt,
        answeredAt: answer.answeredAt,
      });
    else await sleep(200);
  }
}

/** AdmissionReviews of pod CREATEs, as kube-apiserver sends them to the validating webhook, until the quota is full and after. */
export async function webhookClient(log: LoadLog, namespace: string, worker: number): Promise<void> {
  for (let seq = 1; !log.stopping; seq++) {
    const uid = `${namespace}-h${worker}-${seq}`;
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid,
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        name: uid,
        namespace,
        operation: 'CREATE',
        userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
        object: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: uid, namespace, uid: `pod-${uid}` },
          spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '10m' }, limits: { cpu: '10m' } } }] },
        },
        oldObject: null,
        dryRun: false,
        options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
      },
    };
    const answer = await log.untilFinal('review', uid, 'POST', '/v1/admission/validate', review, [200]);
    if (answer.body?.response?.allowed === true)
      log.acknowledged.push({ namespace, requestId: `review:${uid}`, sentAt: answer.sentAt, answeredAt: answer.answeredAt });
    else await sleep(20);
  }
}
