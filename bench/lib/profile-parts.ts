/**
 * The parts of the API a CPU profile's samples are charged to (bench/profile-api.ts): each
 * sample goes to the nearest frame, from the leaf up, whose file names a part. Node's own
 * modules and native frames name none, so a socket `writev` is charged to whoever wrote (the
 * PostgreSQL client for its round trips, the HTTP glue for an answer); a sample with no part
 * above it at all is Node's (its HTTP server, sockets and timers, called from the event loop) or
 * V8's own (the compiler: `(program)`).
 */
export const PARTS = {
  ledger: 'ledger and domain (ours)',
  glue: 'HTTP glue: Express, Nest and ours',
  bodies: 'reading and parsing bodies',
  postgres: 'PostgreSQL client and TypeORM',
  telemetry: 'logs and metrics',
  packages: 'other packages',
  gc: 'garbage collection',
  node: 'Node and V8: the HTTP server, sockets, timers, the compiler',
} as const;
export type Part = (typeof PARTS)[keyof typeof PARTS];

const BY_PACKAGE: ReadonlyArray<readonly [RegExp, Part]> = [
  [/^(pg|pg-protocol|pg-pool|pg-types|pg-connection-string|typeorm)$/, PARTS.postgres],
  [
    /^(express|router|@nestjs\/.*|finalhandler|send|serve-static|path-to-regexp|parseurl|qs|type-is|content-type|on-finished|rxjs|reflect-metadata)$/,
    PARTS.glue,
  ],
  [/^(body-parser|raw-body|iconv-lite|bytes)$/, PARTS.bodies],
  [/^(pino|pino-std-serializers|sonic-boom|thread-stream|prom-client)$/, PARTS.telemetry],
];
const BODIES = /\/common\/(json-body|json-scan|body-guard)\.js$/;
const GLUE = /\/apps\/admission-api\/src\/(common|auth|errors|health|observability)\//;
const TELEMETRY = /\/apps\/admission-api\/src\/observability\/(logger|metrics)\.js$/;

/** The part a frame's file names, if any: undefined for Node's own modules and native code. */
export function partOfUrl(url: string): Part | undefined {
  if (!url || url.startsWith('node:')) return undefined;
  const name = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
  if (name !== undefined) return BY_PACKAGE.find(([pattern]) => pattern.test(name))?.[1] ?? PARTS.packages;
  if (BODIES.test(url)) return PARTS.bodies;
  if (TELEMETRY.test(url)) return PARTS.telemetry;
  if (GLUE.test(url)) return PARTS.glue;
  if (/\/dist\/(libs|apps)\//.test(url)) return PARTS.ledger;
  return undefined;
}

interface Frame {
  readonly callFrame: { readonly functionName: string; readonly url: string };
}

/** The part a sample whose leaf is `leaf` is charged to; `up` walks from a frame to its caller. */
export function partOfSample<F extends Frame>(leaf: F, up: (frame: F) => F | undefined): Part {
  if (leaf.callFrame.functionName === '(garbage collector)') return PARTS.gc;
  for (let frame: F | undefined = leaf; frame; frame = up(frame)) {
    const part = partOfUrl(frame.callFrame.url);
    if (part) return part;
  }
  return PARTS.node;
}
