import { closedLoop, HttpClient, type Classifier } from './load.js';
import { podReview } from './review.js';
import { startFloorServer } from './service.js';
import { summarize, type Latency } from './stats.js';

export interface FloorFigures {
  readonly perSecond: number;
  /** CPU of the floor server per answer (user + system), in ms. */
  readonly cpuMsPerRequest: number;
  readonly latency: Latency;
}

/**
 * The API's physical limit on this machine, as pgbench's (a) is the database's: the same
 * AdmissionReviews, from the same client, to a bare Node `http` server that parses each and
 * answers a precomputed response (bench/lib/floor-server.mjs). The API's CPU per admission
 * divided by this one's is how far above the floor the framework, auth and ledger put it.
 * With a framework (bench/frameworks.ts), the same answer served by it instead.
 */
export async function measureFloor(seconds: number, clients = 32, framework?: string): Promise<FloorFigures> {
  const server = await startFloorServer(framework);
  const client = new HttpClient(server.base, 'floor', 64);
  try {
    const classify: Classifier = (_spec, answer) => (answer.status === 200 ? 'ok' : 'error');
    await closedLoop(client, { clients, seconds: Math.min(1, seconds), classify, next: () => podReview('floor') }); // warm-up
    const cpuBefore = server.cpuSeconds();
    const result = await closedLoop(client, { clients, seconds, classify, next: () => podReview('floor') });
    const figures = result.byKind['admission'];
    const count = Math.max(1, figures?.count ?? 0);
    if ((figures?.errors ?? 0) > 0) throw new Error(`the ${framework ?? 'floor'} server answered ${figures?.errors} errors`);
    return {
      perSecond: (figures?.ok ?? 0) / result.elapsedSeconds,
      cpuMsPerRequest: ((server.cpuSeconds() - cpuBefore) * 1000) / count,
      latency: summarize(figures?.latenciesMs ?? []),
    };
  } finally {
    client.close();
    await server.stop();
  }
}
