import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Registry } from 'prom-client';
import type * as ApiDocs from '../../apps/admission-api/src/docs.js';
import type * as ApiMetrics from '../../apps/admission-api/src/observability/metrics.js';
import type * as ApiModule from '../../apps/admission-api/src/admission-api.module.js';
import type * as ApiApp from '../../apps/admission-api/src/app.js';
import type * as ProjectionMetrics from '../../apps/projection-worker/src/metrics.js';
import type * as QuotactlCli from '../../apps/quotactl/src/cli.js';
import type * as ReconcilerMetrics from '../../apps/reconciler/src/metrics.js';
import type * as Config from '@quota/config';

/**
 * What the generated reference pages are made from, read from the build (`dist/`, what the
 * processes run): the configuration's table of variables, each process's prom-client registry,
 * the OpenAPI document the API serves at /docs, and quotactl's own help. Nothing here needs a
 * database or a network: the registries are built without starting their processes, and the API
 * in Nest's preview mode (its modules and routes, no provider instantiated).
 */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function fromBuild<T>(path: string): Promise<T> {
  const file = join(ROOT, 'dist', path);
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`);
  return (await import(pathToFileURL(file).href)) as T;
}

export const PROCESSES = ['api', 'projection-worker', 'reconciler'] as const;
export type ProcessName = (typeof PROCESSES)[number];

export interface MetricInfo {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly labels: readonly string[];
}

/** Each process's series, as its registry declares them (no collect runs: nothing is read). */
export async function metricsByProcess(): Promise<Record<ProcessName, MetricInfo[]>> {
  const api = await fromBuild<typeof ApiMetrics>('apps/admission-api/src/observability/metrics.js');
  const reconciler = await fromBuild<typeof ReconcilerMetrics>('apps/reconciler/src/metrics.js');
  const projection = await fromBuild<typeof ProjectionMetrics>('apps/projection-worker/src/metrics.js');
  const registries: Record<ProcessName, Registry> = {
    api: new api.Metrics().registry,
    'projection-worker': projection.projectionMetrics(
      () => Promise.reject(new Error('not read')),
      () => undefined,
    ).registry,
    // The registry's collect callbacks read the reconciler; declaring the series reads nothing.
    reconciler: reconciler.reconcilerMetrics({} as Parameters<typeof reconciler.reconcilerMetrics>[0]),
  };
  const byProcess = {} as Record<ProcessName, MetricInfo[]>;
  for (const process of PROCESSES) {
    byProcess[process] = registries[process].getMetricsAsArray().map((metric) => {
      const m = metric as unknown as { name: string; help: string; type: string; labelNames?: readonly string[] };
      return { name: m.name, type: String(m.type), help: m.help, labels: [...(m.labelNames ?? [])] };
    });
    registries[process].clear();
  }
  return byProcess;
}

/** The OpenAPI document as the API builds it for /docs/openapi.json. */
export async function openApiDocument(): Promise<ReturnType<typeof ApiDocs.openApiDocument>> {
  await import('reflect-metadata');
  const { NestFactory } = await import('@nestjs/core');
  const { loadConfig } = await fromBuild<typeof Config>('libs/config/src/index.js');
  const { AdmissionApiModule } = await fromBuild<typeof ApiModule>('apps/admission-api/src/admission-api.module.js');
  const { API_VERSION } = await fromBuild<typeof ApiApp>('apps/admission-api/src/app.js');
  const docs = await fromBuild<typeof ApiDocs>('apps/admission-api/src/docs.js');
  // Never connected to: preview mode instantiates no provider.
  const config = loadConfig({ QUOTA_LEDGER_INSECURE_DEV: 'true', DATABASE_URL: 'postgres://preview@127.0.0.1:1/preview' });
  const app = await NestFactory.create(AdmissionApiModule.forRoot(config), {
    preview: true,
    logger: false,
    bodyParser: false,
    abortOnError: false,
  });
  try {
    return docs.openApiDocument(app, API_VERSION);
  } finally {
    await app.close();
  }
}

export interface CommandHelp {
  readonly name: string;
  readonly summary: string;
  readonly help: string;
}

/** `quotactl --help`, then `quotactl COMMAND --help` for every command, as quotactl prints them. */
export async function quotactlHelp(): Promise<{ overview: string; commands: CommandHelp[] }> {
  const cli = await fromBuild<typeof QuotactlCli>('apps/quotactl/src/cli.js');
  const say = async (argv: string[]): Promise<string> => {
    let out = '';
    const io = {
      stdout: (t: string) => void (out += t),
      stderr: (t: string) => void (out += t),
      readFile: () => Promise.reject(new Error('no files')),
      readStdin: () => Promise.resolve(''),
      cwd: ROOT,
      env: {},
    };
    const code = await cli.run(argv, io);
    if (code !== 0) throw new Error(`quotactl ${argv.join(' ')} exited ${code}: ${out}`);
    return out;
  };
  const commands: CommandHelp[] = [];
  for (const command of cli.COMMANDS)
    commands.push({ name: command.name, summary: command.summary, help: await say([command.name, '--help']) });
  return { overview: await say(['--help']), commands };
}

export async function configuration(): Promise<Pick<typeof Config, 'VARIABLES' | 'VARIABLE_GROUPS'>> {
  const { VARIABLES, VARIABLE_GROUPS } = await fromBuild<typeof Config>('libs/config/src/index.js');
  return { VARIABLES, VARIABLE_GROUPS };
}
