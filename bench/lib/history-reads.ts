import { createDatabase } from './postgres.js';
import { instantIn, LONG_NAMESPACE, rangeIn, spanIn, writeLongHistory, type History } from './history.js';
import { HttpClient } from './load.js';
import { migrate, startApi, type Credentials } from './service.js';
import { summarize, type Latency } from './stats.js';

/**
 * Reads over a long history (bench/run.ts): as-of usage at random instants, and the dashboard's
 * usage chart (the usage series) over random ranges, each against an API of its own on a database
 * written for it and dropped after.
 */

export interface HistoryReads {
  readonly history: History;
  readonly asOf: Latency;
  /** The span each usage-series request covers (see spanIn). */
  readonly seriesRangeMs: number;
  readonly series: { readonly points: number; readonly latency: Latency }[];
}

export async function measureHistoryReads(
  credentials: Credentials,
  plan: { readonly historyEvents: number; readonly asOfQueries: number; readonly seriesQueries: number },
  shape: { readonly rangeMs: number; readonly points: readonly number[] },
  log: (message: string) => void,
): Promise<HistoryReads> {
  log(`as-of: writing a ${plan.historyEvents.toLocaleString('en-US')}-event history and catching the projection up`);
  const historyDb = await createDatabase('asof');
  migrate(historyDb.url);
  const history = await writeLongHistory(historyDb.url, plan.historyEvents);
  const historyApi = await startApi(historyDb.url, credentials);
  const historyClient = new HttpClient(historyApi.base, credentials.token, 1);
  const asOfSamples: number[] = [];
  for (let i = 0; i < plan.asOfQueries; i++) {
    const t0 = performance.now();
    await historyClient.must({
      kind: 'asof',
      method: 'GET',
      path: `/v1/namespaces/${LONG_NAMESPACE}/usage?at=${encodeURIComponent(instantIn(history))}`,
    });
    asOfSamples.push(performance.now() - t0);
  }
  const asOf = summarize(asOfSamples);
  // The usage chart over the same history: each request samples a random range.
  const seriesRangeMs = spanIn(history, shape.rangeMs);
  const series: { readonly points: number; readonly latency: Latency }[] = [];
  for (const points of shape.points) {
    log(`usage series: ${plan.seriesQueries} requests of ${points} points over ${(seriesRangeMs / 3_600_000).toFixed(1)} h`);
    const samples: number[] = [];
    for (let i = 0; i < plan.seriesQueries; i++) {
      const range = rangeIn(history, shape.rangeMs);
      const t0 = performance.now();
      const answer = await historyClient.must({
        kind: 'series',
        method: 'GET',
        path: `/v1/namespaces/${LONG_NAMESPACE}/usage/series?since=${encodeURIComponent(range.since)}&until=${encodeURIComponent(range.until)}&points=${points}`,
      });
      samples.push(performance.now() - t0);
      const answered = (JSON.parse(answer.body) as { points: unknown[] }).points.length;
      if (answered !== points) throw new Error(`usage series: asked for ${points} points, got ${answered}`);
    }
    series.push({ points, latency: summarize(samples) });
  }
  historyClient.close();
  await historyApi.stop();
  await historyDb.drop();
  return { history, asOf, seriesRangeMs, series };
}
