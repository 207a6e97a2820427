import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

/**
 * What the deployment artifacts' tests (test/architecture/deployment.test.ts, kubernetes-manifests.test.ts)
 * share: reading YAML as plain values, and what the code offers them (the variables the
 * configuration reads, the entry points the build produces, the routes the API serves).
 */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DEPLOY = join(ROOT, 'deploy');

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
export const asObject = (value: unknown): Json => (isObject(value) ? value : {});
export const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
export const asText = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
export const clone = <T>(value: T): T => structuredClone(value);

export function get(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (Array.isArray(current) && typeof key === 'number') current = current[key];
    else if (isObject(current) && typeof key === 'string') current = current[key];
    else return undefined;
  }
  return current;
}

export interface LoadedDocument {
  /** Relative to the repository (or the name given), with the document's index when there are several. */
  readonly where: string;
  readonly value: unknown;
}

export function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return yamlFilesUnder(path);
      return /\.ya?ml$/.test(name) ? [path] : [];
    })
    .sort();
}

/** The documents of a YAML stream as plain values; `where` names it in errors. */
export function parseYamlDocuments(text: string, where: string): LoadedDocument[] {
  // merge: compose files share settings through `<<:` merge keys, a YAML 1.1 feature.
  const documents = parseAllDocuments(text, { merge: true });
  const loaded: LoadedDocument[] = [];
  documents.forEach((document, index) => {
    const at = `${where}${documents.length > 1 ? `#${index}` : ''}`;
    if (document.errors.length > 0) throw new Error(`${at}: ${document.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = document.toJS();
    // A trailing `---` leaves an empty document, which kubectl skips too.
    if (value !== null && value !== undefined) loaded.push({ where: at, value });
  });
  return loaded;
}

export function loadYaml(file: string): LoadedDocument[] {
  return parseYamlDocuments(readFileSync(file, 'utf8'), relative(ROOT, file));
}

// ---------------------------------------------------------------------------------------------
// What the code offers: environment variables, entry points, routes.

/** Every variable the configuration reads (libs/config is the only reader of process.env). */
function variablesReadByConfig(): Set<string> {
  const dir = join(ROOT, 'libs/config/src');
  const names = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))) {
    for (const match of readFileSync(join(dir, file), 'utf8').matchAll(/\benv(?:\[\s*|,\s*)'([A-Z][A-Z0-9_]*)'/g)) {
      if (match[1]) names.add(match[1]);
    }
  }
  return names;
}

/** The variables the deployment relies on; each must be one the configuration really reads. */
export const DOCUMENTED_VARIABLES = [
  'DATABASE_URL',
  'REDIS_URL',
  'PORT',
  'HOST',
  'LOG_LEVEL',
  'TOKENS_FILE',
  'QUOTA_LEDGER_INSECURE_DEV',
  'TLS_CERT_FILE',
  'TLS_KEY_FILE',
  'TLS_CLIENT_CA_FILE',
  'METRICS_PORT',
  'INVENTORY_SOURCE',
  'INVENTORY_IN_CLUSTER',
] as const;
export const CONFIG_VARIABLES = variablesReadByConfig();
/** Read by the image's runtime, not by an app: glibc's malloc (the reconciler's arenas). */
const RUNTIME_VARIABLES = ['MALLOC_ARENA_MAX'] as const;
/** A manifest may set only what the apps (or their runtime) read: anything else is a typo that silently does nothing. */
export const ALLOWED_VARIABLES = new Set([...CONFIG_VARIABLES, ...DOCUMENTED_VARIABLES, ...RUNTIME_VARIABLES]);
/** Node's own, set by the image. */
export const IMAGE_VARIABLES = new Set([...ALLOWED_VARIABLES, 'NODE_ENV']);

export const API_MAIN = 'dist/apps/admission-api/src/main.js';
/** The heap the API runs with wherever it is started (bench/lib/service.ts API_NODE_ARGS: sized for its 512Mi container). */
export const API_HEAP = ['--max-old-space-size=256', '--max-semi-space-size=8'];
export const MIGRATE = 'dist/apps/admission-api/src/migrate.js';
export const PROJECTION_MAIN = 'dist/apps/projection-worker/src/main.js';
export const RECONCILER_MAIN = 'dist/apps/reconciler/src/main.js';

/** Problems with a command that should run a compiled entry point of this repository. */
export function commandProblems(where: string, command: readonly unknown[]): string[] {
  const script = command.find((part): part is string => typeof part === 'string' && part.endsWith('.js'));
  if (command[0] !== 'node' || script === undefined)
    return [`${where}: command ${JSON.stringify(command)} does not run "node <script>.js"`];
  const match = /^(?:\/app\/)?dist\/((?:apps|libs)\/.+)\.js$/.exec(script);
  if (!match?.[1]) return [`${where}: ${script} is not a build output under dist/apps or dist/libs`];
  const source = `${match[1]}.ts`;
  return existsSync(join(ROOT, source)) ? [] : [`${where}: ${script} has no source ${source}, so the build will not produce it`];
}

/** The routes a Nest controller declares, as `/prefix/route`. */
export function controllerRoutes(file: string, method: 'Get' | 'Post'): Set<string> {
  const source = readFileSync(join(ROOT, file), 'utf8');
  const prefix = /@Controller\(\s*(?:'([^']*)')?\s*\)/.exec(source)?.[1] ?? '';
  const routes = new Set<string>();
  for (const match of source.matchAll(new RegExp(`@${method}\\(\\s*'([^']*)'\\s*\\)`, 'g'))) {
    routes.add(posix.join('/', prefix, match[1] ?? ''));
  }
  return routes;
}

export const WEBHOOK_ROUTES = controllerRoutes('apps/admission-api/src/admission-review/admission-review.controller.ts', 'Post');
export const HEALTH_ROUTES = controllerRoutes('apps/admission-api/src/health/health.controller.ts', 'Get');
