/**
 * Where the API's CPU goes under the low-contention load: runs the API with --cpu-prof
 * (profile written to PROFILE_DIR, default /tmp/quota-ledger-profile, when the API exits)
 * and loads it for SECONDS (default 8) with the benchmark's AdmissionReview (lib/review.ts).
 * Prints the load's figures and, from the profile's samples taken during the load only (not
 * the boot, not the setup), the TOP (default 30) functions and files by self and inclusive
 * time, as shares of the busy (non-idle) time. The profile itself is for Chrome DevTools or
 * speedscope. With PROFILE=0 the API runs without the profiler (which costs CPU of its own):
 * the CPU per admission to compare before and after a change. BENCH_NODE=path/to/node runs the
 * API and the floor on another Node.js (the image's 24 beside the machine's 20). Then the same load against the
 * floor (bench/lib/floor.ts: a bare Node http server), and the API's CPU as a multiple of it.
 * REVIEW=apiserver sends the pod as the kube-apiserver sends it (~5 KB: managedFields,
 * environment, probes, volumes), of which admission reads a few fields.
 *
 *   npm run build && npx tsx --tsconfig tsconfig.json bench/profile-api.ts [SECONDS] [TOP]
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { measureFloor } from './lib/floor.js';
import { partOfSample } from './lib/profile-parts.js';
import { closedLoop, HttpClient, openLoop, type Classifier, type RequestSpec } from './lib/load.js';
import { createDatabase } from './lib/postgres.js';
import { apiserverPodReview, podReview, quotaPut } from './lib/review.js';
import { benchCredentials, migrate, serviceNodeVersion, startApi } from './lib/service.js';
import { summarize } from './lib/stats.js';

const seconds = Number(process.argv[2] ?? 8);
const top = Number(process.argv[3] ?? 30);
const dir = process.env['PROFILE_DIR'] ?? '/tmp/quota-ledger-profile';
mkdirSync(dir, { recursive: true });
const credentials = benchCredentials();
const db = await createDatabase('prof');
try {
  migrate(db.url);
  // PROFILE=0: the same load without the profiler, whose sampling costs CPU of its own.
  const profiling = process.env['PROFILE'] !== '0';
  const api = await startApi(db.url, credentials, {}, profiling ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []);
  const client = new HttpClient(api.base, credentials.token, 64);
  const namespaces = Array.from({ length: 1000 }, (_, i) => `low-${i}`);
  for (let i = 0; i < namespaces.length; i += 32) {
    await Promise.all(namespaces.slice(i, i + 32).map((namespace) => client.must(quotaPut(namespace, { pods: '1000000' }))));
  }
  const cpuBefore = api.cpuSeconds();
  const splitBefore = userSystemSeconds(api.pid);
  // V8's sample clock and process.hrtime are both CLOCK_MONOTONIC, in µs here as in the profile.
  const windowStart = Number(process.hrtime.bigint() / 1000n);
  const classify: Classifier = (_spec, answer) => (answer.status === 200 ? 'ok' : 'error');
  // REVIEW=apiserver: the pod as the kube-apiserver really sends it (lib/review.ts), not the bare one.
  const review = process.env['REVIEW'] === 'apiserver' ? apiserverPodReview : podReview;
  const next = (): RequestSpec => review(namespaces[Math.floor(Math.random() * namespaces.length)] ?? 'low-0');
  // RATE=n: an open loop at n admissions a second (small groups), instead of 32 clients as fast as they go.
  const rate = Number(process.env['RATE'] ?? 0);
  const result =
    rate > 0
      ? await openLoop(client, { perSecond: rate, seconds, maxInFlight: 256, classify, next })
      : await closedLoop(client, { clients: 32, seconds, classify, next });
  const windowEnd = Number(process.hrtime.bigint() / 1000n);
  const figures = result.byKind['admission'];
  const latency = summarize(figures?.latenciesMs ?? []);
  const cpuMs = ((api.cpuSeconds() - cpuBefore) * 1000) / Math.max(1, figures?.count ?? 0);
  const splitAfter = userSystemSeconds(api.pid);
  const perAdmission = (seconds: number): string => ((seconds * 1000) / Math.max(1, figures?.count ?? 0)).toFixed(2);
  console.log(
    `${Math.round((figures?.ok ?? 0) / result.elapsedSeconds)} admissions/s, p50 ${latency.p50.toFixed(1)} ms, p99 ${latency.p99.toFixed(1)} ms, errors ${figures?.errors ?? 0}, API CPU ${cpuMs.toFixed(2)} ms per admission ` +
      `(user ${perAdmission(splitAfter.user - splitBefore.user)}, system ${perAdmission(splitAfter.system - splitBefore.system)}) on Node ${serviceNodeVersion()}; profile in ${dir}`,
  );
  client.close();
  await api.stop();
  const floor = await measureFloor(seconds);
  console.log(
    `floor (bare Node http, one JSON.parse, precomputed answer; same load): ${Math.round(floor.perSecond)} answers/s, p99 ${floor.latency.p99.toFixed(1)} ms, CPU ${floor.cpuMsPerRequest.toFixed(3)} ms per answer; ` +
      `the API's CPU per admission is ${(cpuMs / floor.cpuMsPerRequest).toFixed(1)} × the floor`,
  );
  const profile = !profiling
    ? undefined
    : readdirSync(dir).find((name) => name.endsWith('.cpuprofile') && name.split('.').includes(String(api.pid)));
  if (profile) {
    // The load's window, for other readings of the same profile.
    writeFileSync(
      join(dir, `${profile}.window.json`),
      JSON.stringify({ fromUs: windowStart, toUs: windowEnd, admissions: figures?.count ?? 0, cpuMsPerAdmission: cpuMs }),
    );
    console.log(summarizeProfile(join(dir, profile), windowStart, windowEnd, top, cpuMs));
  }
} finally {
  await db.drop();
  credentials.remove();
}

/** User and system CPU seconds of a process so far (/proc/PID/stat fields 14 and 15, in ticks of 1/100 s). */
function userSystemSeconds(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

/** How a profile's frames are named: by function (with its place), by file or package. Declarations: the script's top level calls them before it reaches here. */
function place(url: string): string {
  return url
    .replace(/^file:\/\//, '')
    .replace(/.*\/node_modules\//, '')
    .replace(/.*\/dist\//, '');
}
function byFunction(node: ProfileNode): string {
  return `${node.callFrame.functionName || '(anonymous)'} ${place(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
}
function byFile(node: ProfileNode): string {
  const url = node.callFrame.url;
  if (!url) return node.callFrame.functionName.startsWith('(') ? node.callFrame.functionName : '(native)';
  return /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? place(url);
}

/**
 * Of the samples in [from, to] µs: the time by part of the API (lib/profile-parts.ts), as a share
 * of the busy time and in ms per admission (the share of `cpuMs`), then self and inclusive time
 * by function and by file (a package counts as one).
 */
function summarizeProfile(file: string, from: number, to: number, count: number, cpuMs: number): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    startTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  // A sample's time is the interval until the next one.
  const selfUs = new Map<number, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (at < from || at > to) continue;
    const id = profile.samples[i] as number;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  let busy = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    if (nodes.get(id)?.callFrame.functionName === '(idle)') idle += us;
    else busy += us;
  }
  const lines = [
    `profile ${file}: ${(busy / 1000).toFixed(0)} ms busy, ${(idle / 1000).toFixed(0)} ms idle during the load; shares of busy time`,
  ];
  const byPart = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = nodes.get(id) as ProfileNode;
    if (node.callFrame.functionName === '(idle)') continue;
    const part = partOfSample(node, (frame) => nodes.get(parents.get(frame.id) ?? -1));
    byPart.set(part, (byPart.get(part) ?? 0) + us);
  }
  lines.push(`\nby part (nearest frame that names one), of ${cpuMs.toFixed(2)} ms per admission:`);
  for (const [part, us] of [...byPart].sort((a, b) => b[1] - a[1])) {
    lines.push(`${((100 * us) / busy).toFixed(1).padStart(5)}%  ${((cpuMs * us) / busy).toFixed(3)} ms  ${part}`);
  }
  for (const [title, key] of [
    ['function', byFunction],
    ['file or package', byFile],
  ] as const) {
    const self = new Map<string, number>();
    const inclusive = new Map<string, number>();
    for (const [id, us] of selfUs) {
      const node = nodes.get(id) as ProfileNode;
      if (node.callFrame.functionName === '(idle)') continue;
      self.set(key(node), (self.get(key(node)) ?? 0) + us);
      const seen = new Set<string>();
      for (let cursor: number | undefined = id; cursor !== undefined; cursor = parents.get(cursor)) {
        const name = key(nodes.get(cursor) as ProfileNode);
        if (seen.has(name)) continue;
        seen.add(name);
        inclusive.set(name, (inclusive.get(name) ?? 0) + us);
      }
    }
    for (const [kind, totals] of [
      ['self', self],
      ['inclusive', inclusive],
    ] as const) {
      lines.push(`\n${kind} time by ${title}:`);
      for (const [name, us] of [...totals]
        .filter(([name]) => name !== '(root)' && !name.startsWith('(root) '))
        .sort((a, b) => b[1] - a[1])
        .slice(0, count)) {
        lines.push(`${((100 * us) / busy).toFixed(1).padStart(5)}%  ${name}`);
      }
    }
  }
  return lines.join('\n');
}
