/**
 * Queued reservations under load, beside today's 403-and-retry, in one run against
 * the built API as deployed: one namespace whose quota (`cpu: HOLDERS`) is full, a releaser that
 * frees one CPU RELEASES_PER_SECOND times a second (releasing the oldest reservation), and
 * CLIENTS clients that each keep asking for one CPU and, once admitted, hand the reservation to
 * the releaser. So admissions are bounded by the releases, as in a full cluster, and the figures
 * are what waiting costs:
 *
 * - `wait`: a reserve with `"wait": {"seconds": 600}`; a 202 is watched (`?watch=true`) until
 *   the release's transaction admits it.
 * - `403 + retry`: a reserve without a wait, as today; a 403 is retried after a jittered
 *   exponential backoff (AWS's "full jitter": a random 0..min(cap, base × 2^attempt), base
 *   RETRY_BASE_MS, cap RETRY_CAP_MS), what a careful client does.
 *
 * Prints admissions/s, time to admit (first request to admitted: mean, p50/p99/max), HTTP requests and
 * 403s per admission, and the API's CPU per admission. Asserts nothing.
 *
 *   npm run build && npm run bench:queue [-- SECONDS]      (default 20 s per mode; ~1 min in all)
 */
import 'reflect-metadata';
import { HttpClient, type Answer, type RequestSpec } from './lib/load.js';
import { createDatabase } from './lib/postgres.js';
import { benchCredentials, builtAppsMissing, migrate, startApi } from './lib/service.js';
import { ms, summarize } from './lib/stats.js';

const SECONDS = Number(process.argv[2] ?? 20);
const WARMUP_SECONDS = 3;
const CLIENTS = 32;
const HOLDERS = 50;
const RELEASES_PER_SECOND = 100;
const RETRY_BASE_MS = 50;
const RETRY_CAP_MS = 1000;
const NAMESPACE = 'queue-bench';

type Mode = 'wait' | '403 + retry';

interface Figures {
  admitted: number;
  requests: number;
  denied: number;
  errors: number;
  readonly timeToAdmitMs: number[];
}

const missing = builtAppsMissing();
if (missing) {
  console.error(`bench:queue: ${missing}`);
  process.exit(2);
}

const path = `/v1/namespaces/${NAMESPACE}/reservations`;
let seq = 0;
const reserveSpec = (wait: boolean): RequestSpec => ({
  kind: 'admission',
  method: 'POST',
  path,
  body: { kind: 'Job', name: `job-${seq++}`, resources: { cpu: '1' }, ...(wait ? { wait: { seconds: 600 } } : {}) },
});
const idOf = (answer: Answer): string => (JSON.parse(answer.body) as { id: string }).id;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** One mode's load: the releaser and the clients, for warm-up plus SECONDS, counting only after the warm-up. */
async function runMode(client: HttpClient, mode: Mode, holders: string[]): Promise<Figures & { seconds: number }> {
  const figures: Figures = { admitted: 0, requests: 0, denied: 0, errors: 0, timeToAdmitMs: [] };
  const start = performance.now();
  const measureFrom = start + WARMUP_SECONDS * 1000;
  const end = measureFrom + SECONDS * 1000;
  const counting = (): boolean => performance.now() >= measureFrom;
  const send = async (spec: RequestSpec): Promise<Answer | undefined> => {
    if (counting()) figures.requests++;
    try {
      return await client.send(spec);
    } catch {
      if (counting()) figures.errors++;
      return undefined;
    }
  };

  const releaser = (async () => {
    const interval = 1000 / RELEASES_PER_SECOND;
    for (let next = performance.now(); performance.now() < end; next += interval) {
      const id = holders.shift();
      if (id !== undefined) void client.send({ kind: 'release', method: 'DELETE', path: `${path}/${id}` }).catch(() => undefined);
      await sleep(Math.max(0, next + interval - performance.now()));
    }
  })();

  /** One reservation, from its first request until it is admitted (its id) or the run ends. */
  const admitOne = async (): Promise<string | undefined> => {
    const wait = mode === 'wait';
    for (let attempt = 0; performance.now() < end; attempt++) {
      const answer = await send(reserveSpec(wait));
      if (answer?.status === 201) return idOf(answer);
      if (answer?.status === 202) return watch(idOf(answer));
      if (answer?.status === 403) {
        if (counting()) figures.denied++;
        await sleep(Math.random() * Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** attempt));
      } else {
        if (answer && counting()) figures.errors++;
        await sleep(100);
      }
    }
    return undefined;
  };
  const watch = async (id: string): Promise<string | undefined> => {
    while (performance.now() < end) {
      const timeoutSeconds = Math.min(10, Math.max(1, Math.ceil((end - performance.now()) / 1000)));
      const answer = await send({ kind: 'watch', method: 'GET', path: `${path}/${id}?watch=true&timeoutSeconds=${timeoutSeconds}` });
      const state = answer?.status === 200 ? (JSON.parse(answer.body) as { state?: string }).state : undefined;
      if (state !== undefined && state !== 'queued') return state === 'reserved' ? id : undefined;
    }
    // The run is over: give it up, so that the next mode starts from an empty queue.
    await client.send({ kind: 'cancel', method: 'DELETE', path: `${path}/${id}` }).catch(() => undefined);
    return undefined;
  };

  const clients = Array.from({ length: CLIENTS }, async () => {
    while (performance.now() < end) {
      const asked = performance.now();
      const id = await admitOne();
      if (id === undefined) continue;
      if (asked >= measureFrom && performance.now() <= end) {
        figures.admitted++;
        figures.timeToAdmitMs.push(performance.now() - asked);
      }
      holders.push(id);
    }
  });
  await Promise.all([releaser, ...clients]);
  return { ...figures, seconds: SECONDS };
}

const credentials = benchCredentials();
const db = await createDatabase('queue');
migrate(db.url);
// One token's CLIENTS watchers at once: more than QUEUE_WATCHES_PER_PRINCIPAL_MAX lets one principal hold.
const api = await startApi(db.url, credentials, { QUEUE_WATCHES_PER_PRINCIPAL_MAX: String(CLIENTS) });
const client = new HttpClient(api.base, credentials.token, CLIENTS + 16);
try {
  await client.must({
    kind: 'setup',
    method: 'PUT',
    path: `/v1/namespaces/${NAMESPACE}/resourcequotas/compute`,
    body: { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { cpu: String(HOLDERS) } } },
  });
  const holders: string[] = [];
  for (let i = 0; i < HOLDERS; i++) holders.push(idOf(await client.must(reserveSpec(false))));
  console.log(
    `[bench] ${NAMESPACE}: quota cpu=${HOLDERS}, full; ${RELEASES_PER_SECOND} releases/s; ${CLIENTS} clients asking for cpu=1 each; ${WARMUP_SECONDS} s warm-up + ${SECONDS} s per mode`,
  );
  const rows: Record<string, string | number>[] = [];
  for (const mode of ['wait', '403 + retry'] as const) {
    const cpu0 = api.cpuSeconds();
    const result = await runMode(client, mode, holders);
    const cpu = api.cpuSeconds() - cpu0;
    const latency = summarize(result.timeToAdmitMs);
    rows.push({
      mode,
      'admissions/s': Math.round(result.admitted / result.seconds),
      'time to admit mean ms': ms(result.timeToAdmitMs.reduce((sum, t) => sum + t, 0) / Math.max(1, result.timeToAdmitMs.length)),
      'p50 ms': ms(latency.p50),
      'p99 ms': ms(latency.p99),
      'max ms': ms(latency.max),
      'requests/admission': ms(result.requests / Math.max(1, result.admitted)),
      '403s/admission': ms(result.denied / Math.max(1, result.admitted)),
      errors: result.errors,
      'API CPU ms/admission': ms((cpu * 1000) / Math.max(1, result.admitted)),
    });
    await sleep(1000);
  }
  console.table(rows);
} finally {
  client.close();
  await api.stop();
  await db.drop();
  credentials.remove();
}
