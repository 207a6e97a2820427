/**
 * What a web framework costs per admission on this machine (`@nestjs/platform-fastify` measured
 * beside Express: how much of the API's CPU per admission is its framework's). The floor's
 * answer (bench/lib/floor-server.mjs: parse the AdmissionReview, answer "allowed" with its uid)
 * served by bare Node `http`, then by Express 5, a Nest controller on Express, the same
 * controller on Fastify (Nest's own adapter) and Fastify alone (bench/lib/framework-server.mjs), each under the same closed loop (32 clients, keep-alive)
 * for SECONDS (default 6), ROUNDS times (default 2) in turn, so that a change in the machine's
 * load moves every variant alike. Prints each one's CPU per answer and its multiple of the floor:
 * the difference between nest-express and nest-fastify is what the adapter could save on a route
 * that goes through Nest's router, as every route of the API does, the webhook's included.
 * BENCH_NODE=path/to/node runs the servers on another Node.js; FRAMEWORKS=a,b measures only those.
 *
 *   npx tsx --tsconfig tsconfig.json bench/frameworks.ts [SECONDS] [ROUNDS]
 */
import { measureFloor, type FloorFigures } from './lib/floor.js';
import { serviceNodeVersion } from './lib/service.js';

const seconds = Number(process.argv[2] ?? 6);
const rounds = Number(process.argv[3] ?? 2);
// FRAMEWORKS=express,fastify: only these (the floor is always measured: it is the unit).
const VARIANTS = [
  'floor',
  ...(process.env['FRAMEWORKS']?.split(',').filter(Boolean) ?? ['express', 'nest-express', 'nest-fastify', 'fastify']),
];
const runs = new Map<string, FloorFigures[]>(VARIANTS.map((variant) => [variant, []]));
for (let round = 0; round < rounds; round += 1) {
  for (const variant of VARIANTS) {
    runs.get(variant)?.push(await measureFloor(seconds, 32, variant === 'floor' ? undefined : variant));
  }
}
const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
const floorCpu = mean((runs.get('floor') ?? []).map((figures) => figures.cpuMsPerRequest));
console.log(
  `Node ${serviceNodeVersion()}, ${rounds} rounds of ${seconds} s each, 32 clients; CPU per answer (user + system) of the server only`,
);
for (const [variant, figures] of runs) {
  const cpu = figures.map((one) => one.cpuMsPerRequest);
  console.log(
    `${variant.padEnd(13)} ${cpu.map((value) => value.toFixed(3)).join(' / ')} ms per answer (${(mean(cpu) / floorCpu).toFixed(2)} × the floor), ` +
      `${figures.map((one) => Math.round(one.perSecond)).join(' / ')} answers/s, p99 ${figures.map((one) => one.latency.p99.toFixed(1)).join(' / ')} ms`,
  );
}
