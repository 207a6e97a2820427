import http from 'node:http';

/**
 * A load generator over keep-alive HTTP/1.1 connections, in the benchmark's own process
 * (one core's worth of JSON and sockets; the service, PostgreSQL and this share the
 * machine, as pgbench shares it with PostgreSQL in the baselines). Closed loop: N clients,
 * each sends its next request when the last is answered. Open loop: requests start on a
 * fixed schedule, and latency counts from the scheduled instant, so a stall is not hidden
 * by the requests it delayed (coordinated omission).
 */
export interface RequestSpec {
  readonly kind: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly body?: unknown;
}

export interface Answer {
  readonly status: number;
  readonly body: string;
}

export interface KindFigures {
  count: number;
  /** 2xx answers that the classifier counted as allowed (admissions) or served (reads). */
  ok: number;
  denied: number;
  /** Anything else: 4xx other than a denial, 5xx, a connection error, a timeout. */
  errors: number;
  readonly latenciesMs: number[];
  readonly statuses: Record<string, number>;
}

export interface LoadResult {
  readonly elapsedSeconds: number;
  readonly byKind: Record<string, KindFigures>;
}

export type Classifier = (spec: RequestSpec, answer: Answer) => 'ok' | 'denied' | 'error';

const REQUEST_TIMEOUT_MS = 30_000;

export class HttpClient {
  private readonly agent: http.Agent;
  private readonly url: URL;

  constructor(
    base: string,
    private readonly token: string,
    maxSockets: number,
  ) {
    this.url = new URL(base);
    this.agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  send(spec: RequestSpec): Promise<Answer> {
    const payload = spec.body === undefined ? undefined : Buffer.from(JSON.stringify(spec.body));
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          agent: this.agent,
          host: this.url.hostname,
          port: this.url.port,
          method: spec.method,
          path: spec.path,
          timeout: REQUEST_TIMEOUT_MS,
          headers: {
            authorization: `Bearer ${this.token}`,
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
      request.on('error', reject);
      request.end(payload);
    });
  }

  /** Sends and throws unless the answer is 2xx: for setting up. */
  async must(spec: RequestSpec): Promise<Answer> {
    const answer = await this.send(spec);
    if (answer.status < 200 || answer.status > 299)
      throw new Error(`${spec.method} ${spec.path}: ${answer.status} ${answer.body.slice(0, 500)}`);
    return answer;
  }

  close(): void {
    this.agent.destroy();
  }
}

function figuresFor(result: Record<string, KindFigures>, kind: string): KindFigures {
  let figures = result[kind];
  if (!figures) {
    figures = { count: 0, ok: 0, denied: 0, errors: 0, latenciesMs: [], statuses: {} };
    result[kind] = figures;
  }
  return figures;
}

async function measure(
  client: HttpClient,
  spec: RequestSpec,
  classify: Classifier,
  figures: KindFigures,
  startedAt: number,
): Promise<void> {
  let outcome: 'ok' | 'denied' | 'error';
  let status: string;
  try {
    const answer = await client.send(spec);
    outcome = classify(spec, answer);
    status = String(answer.status);
  } catch {
    outcome = 'error';
    status = 'connection';
  }
  figures.latenciesMs.push(performance.now() - startedAt);
  figures.count++;
  figures[outcome === 'ok' ? 'ok' : outcome === 'denied' ? 'denied' : 'errors']++;
  figures.statuses[status] = (figures.statuses[status] ?? 0) + 1;
}

/** `clients` loops, each sending `next(i)` until `seconds` pass or `total` requests were sent. */
export async function closedLoop(
  client: HttpClient,
  options: { clients: number; seconds: number; total?: number; next: (i: number) => RequestSpec; classify: Classifier },
): Promise<LoadResult> {
  const byKind: Record<string, KindFigures> = {};
  const deadline = performance.now() + options.seconds * 1000;
  let sequence = 0;
  const loop = async (): Promise<void> => {
    while (performance.now() < deadline && (options.total === undefined || sequence < options.total)) {
      const spec = options.next(sequence++);
      await measure(client, spec, options.classify, figuresFor(byKind, spec.kind), performance.now());
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: options.clients }, loop));
  return { elapsedSeconds: (performance.now() - t0) / 1000, byKind };
}

/**
 * Requests at `perSecond`, for `seconds`; at most `maxInFlight` outstanding (a request whose
 * slot is not free yet waits, and its wait counts in its latency).
 */
export async function openLoop(
  client: HttpClient,
  options: { perSecond: number; seconds: number; maxInFlight: number; next: (i: number) => RequestSpec; classify: Classifier },
): Promise<LoadResult> {
  const byKind: Record<string, KindFigures> = {};
  const intervalMs = 1000 / options.perSecond;
  const total = Math.floor(options.perSecond * options.seconds);
  const inFlight = new Set<Promise<void>>();
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const scheduled = t0 + i * intervalMs;
    const wait = scheduled - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    while (inFlight.size >= options.maxInFlight) await Promise.race(inFlight);
    const spec = options.next(i);
    const done = measure(client, spec, options.classify, figuresFor(byKind, spec.kind), scheduled).finally(() => inFlight.delete(done));
    inFlight.add(done);
  }
  await Promise.all(inFlight);
  return { elapsedSeconds: (performance.now() - t0) / 1000, byKind };
}
