/**
 * Where the API's CPU goes under the low-contention load: runs the API with --cpu-prof
 * (profile written to PROFILE_DIR, default /tmp/quota-ledger-profile, when the API exits)
 * and loads it for SECONDS (default 8) with the benchmark's AdmissionReview (lib/review.ts). For a person to
 * read (Chrome DevTools, or speedscope); prints only the load's figures.
 *
 *   npm run build && npx tsx --tsconfig tsconfig.json bench/profile-api.ts [SECONDS]
 */
import { mkdirSync } from 'node:fs';
import { closedLoop, HttpClient } from './lib/load.js';
import { createDatabase } from './lib/postgres.js';
import { podReview, quotaPut } from './lib/review.js';
import { benchCredentials, migrate, startApi } from './lib/service.js';
import { summarize } from './lib/stats.js';

const seconds = Number(process.argv[2] ?? 8);
const dir = process.env['PROFILE_DIR'] ?? '/tmp/quota-ledger-profile';
mkdirSync(dir, { recursive: true });
const credentials = benchCredentials();
const db = await createDatabase('prof');
try {
  migrate(db.url);
  const api = await startApi(db.url, credentials, {}, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  const client = new HttpClient(api.base, credentials.token, 64);
  const namespaces = Array.from({ length: 1000 }, (_, i) => `low-${i}`);
  for (let i = 0; i < namespaces.length; i += 32) {
    await Promise.all(
      namespaces.slice(i, i + 32).map((namespace) =>
        client.must(quotaPut(namespace, { pods: '1000000' })),
      ),
    );
  }
  const cpuBefore = api.cpuSeconds();
  const result = await closedLoop(client, {
    clients: 32,
    seconds,
    classify: (_spec, answer) => (answer.status === 200 ? 'ok' : 'error'),
    next: () => podReview(namespaces[Math.floor(Math.random() * namespaces.length)] ?? 'low-0'),
  });
  const figures = result.byKind['admission'];
  const latency = summarize(figures?.latenciesMs ?? []);
  const cpuMs = ((api.cpuSeconds() - cpuBefore) * 1000) / Math.max(1, figures?.count ?? 0);
  console.log(`${Math.round((figures?.ok ?? 0) / result.elapsedSeconds)} admissions/s, p50 ${latency.p50.toFixed(1)} ms, p99 ${latency.p99.toFixed(1)} ms, errors ${figures?.errors ?? 0}, API CPU ${cpuMs.toFixed(2)} ms per admission; profile in ${dir}`);
  client.close();
  await api.stop();
} finally {
  await db.drop();
  credentials.remove();
}
