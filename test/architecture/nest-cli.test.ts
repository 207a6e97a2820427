import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { API_MAIN, PROJECTION_MAIN, RECONCILER_MAIN, ROOT } from '../support/deploy.js';
import { ensureBuilt, freePort } from '../support/processes.js';

/**
 * nest-cli.json is the monorepo's description for the Nest CLI (`nest start admission-api
 * --watch` in development): every app and lib is a project, each entry file exists, and the
 * path the CLI runs (outDir + sourceRoot + entryFile) is the build's entry point that the
 * Dockerfile, the manifests and the tests run. Then `nest start admission-api` itself, compiled
 * into a directory of its own under dist/ (so that the files other tests run are never
 * rewritten under them), must start an API that answers /readyz.
 */

interface Project {
  readonly type: 'application' | 'library';
  readonly root: string;
  readonly sourceRoot: string;
  readonly entryFile: string;
  readonly compilerOptions?: { readonly tsConfigPath?: string };
}
interface NestCli {
  readonly monorepo: boolean;
  readonly root: string;
  readonly sourceRoot: string;
  readonly compilerOptions: { readonly builder: string; readonly tsConfigPath: string };
  readonly projects: Readonly<Record<string, Project>>;
}

const cli = JSON.parse(readFileSync(join(ROOT, 'nest-cli.json'), 'utf8')) as NestCli;
const directories = (parent: string): string[] =>
  readdirSync(join(ROOT, parent), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
const outDir = (JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: { outDir: string } }).compilerOptions
  .outDir;
/** Where `nest start NAME` runs the compiled entry file from. */
const outputOf = (project: Project): string => join(outDir, project.sourceRoot, `${project.entryFile}.js`);

describe('nest-cli.json', () => {
  it('is a monorepo whose projects are every app but the Vite dashboard and every lib', () => {
    expect(cli.monorepo).toBe(true);
    const applications = Object.keys(cli.projects).filter((name) => cli.projects[name]?.type === 'application');
    const libraries = Object.keys(cli.projects).filter((name) => cli.projects[name]?.type === 'library');
    expect(applications.sort()).toEqual(
      directories('apps')
        .filter((name) => name !== 'dashboard')
        .sort(),
    );
    expect(libraries.sort()).toEqual(directories('libs').sort());
    expect(cli.projects['admission-api']?.root).toBe(cli.root);
  });

  it('names entry files that exist, compiled with the build tsconfig by tsc', () => {
    expect(cli.compilerOptions.builder).toBe('tsc');
    expect(existsSync(join(ROOT, cli.compilerOptions.tsConfigPath))).toBe(true);
    for (const [name, project] of Object.entries(cli.projects)) {
      expect(existsSync(join(ROOT, project.sourceRoot, `${project.entryFile}.ts`)), name).toBe(true);
      expect(project.sourceRoot.startsWith(`${project.root}/`), name).toBe(true);
      expect(project.compilerOptions?.tsConfigPath ?? cli.compilerOptions.tsConfigPath, name).toBe('tsconfig.build.json');
    }
  });

  it('makes the CLI run the entry points the image, the manifests and the tests run', () => {
    expect(outputOf(cli.projects['admission-api']!)).toBe(API_MAIN);
    expect(outputOf(cli.projects['projection-worker']!)).toBe(PROJECTION_MAIN);
    expect(outputOf(cli.projects['reconciler']!)).toBe(RECONCILER_MAIN);
  });

  it('names a CLI that is installed: @nestjs/cli is a devDependency', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    expect(pkg.devDependencies['@nestjs/cli']).toMatch(/^\^?12\./);
    expect(existsSync(join(ROOT, 'node_modules/.bin/nest'))).toBe(true);
  });
});

let db: TestDatabase | undefined;
let out: string | undefined;
afterAll(async () => {
  await db?.drop();
  if (out) rmSync(out, { recursive: true, force: true });
});

describe('nest start admission-api', () => {
  it('compiles the monorepo and starts the API, which answers /readyz', async () => {
    db = await createMigratedDatabase('qlnest');
    // Under dist/ (git-ignored, and where node_modules is found), beside the build, never in it.
    ensureBuilt();
    out = mkdtempSync(join(ROOT, 'dist', 'nest-start-'));
    // (The CLI takes --path relative to the working directory.) The build tsconfig with the output (and its incremental state) in the temporary directory.
    const tsconfig = join(out, 'tsconfig.json');
    writeFileSync(
      tsconfig,
      JSON.stringify({
        extends: join(ROOT, 'tsconfig.build.json'),
        compilerOptions: {
          outDir: join(out, 'dist'),
          tsBuildInfoFile: join(out, 'tsbuildinfo'),
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
      }),
    );
    const port = await freePort();
    const child = spawn(join(ROOT, 'node_modules/.bin/nest'), ['start', 'admission-api', '--path', relative(ROOT, tsconfig)], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        QUOTA_LEDGER_INSECURE_DEV: 'true',
        HOST: '127.0.0.1',
        PORT: String(port),
        SHUTDOWN_DRAIN_SECONDS: '0',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const deadline = Date.now() + 240_000;
      let ready = '';
      while (!ready.includes('readyz check passed')) {
        if (child.exitCode !== null) throw new Error(`nest start exited with ${child.exitCode}: ${output}`);
        if (Date.now() > deadline) throw new Error(`the API did not answer /readyz within 240 s: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
        ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.text(),
          () => '',
        );
      }
      expect(existsSync(join(out, 'dist', 'apps/admission-api/src/main.js'))).toBe(true);
    } finally {
      // The CLI runs the API under a shell: end the whole group it leads.
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
    }
  }, 300_000);
});
