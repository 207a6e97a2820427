import { homedir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { parse } from 'yaml';
import type { Flags } from './args.js';
import type { Io } from './context.js';
import { UsageError } from './errors.js';

/**
 * The default namespace as kubectl finds it: the namespace of the kubeconfig context in use
 * (`--context`, else the current-context), from `--kubeconfig`, else the files of $KUBECONFIG
 * (merged as kubectl merges them: the first file to set current-context, or to define a context
 * of a name, wins), else ~/.kube/config. quotactl reads only the namespace: the ledger's API is
 * not the cluster's, so its server and credentials stay quotactl's own (--server, --token).
 *
 * What was asked for by flag must exist (a missing --kubeconfig file, an unknown --context is a
 * usage error, as in kubectl); what is only found by default must never break a command that
 * worked without it, so an unreadable or unparsable default file, or a current-context that
 * names no context, is passed over.
 */

/** The files kubectl reads when no --kubeconfig is given (main gives them to `run` as Io.kubeconfigFiles). */
export function defaultKubeconfigFiles(env: Readonly<Record<string, string | undefined>>, home = homedir()): string[] {
  const list = env['KUBECONFIG'];
  if (list) return list.split(delimiter).filter((path) => path !== '');
  return [join(home, '.kube', 'config')];
}

interface Kubeconfig {
  readonly currentContext?: string;
  readonly contexts: ReadonlyMap<string, { readonly namespace?: string }>;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** One file's current-context and contexts; undefined when it is not a kubeconfig at all. */
function parseKubeconfig(text: string): Kubeconfig | undefined {
  let document: unknown;
  try {
    document = parse(text);
  } catch {
    return undefined;
  }
  if (document === null || document === undefined) return { contexts: new Map() };
  if (!isRecord(document)) return undefined;
  const contexts = new Map<string, { namespace?: string }>();
  for (const entry of Array.isArray(document['contexts']) ? document['contexts'] : []) {
    if (!isRecord(entry) || typeof entry['name'] !== 'string' || contexts.has(entry['name'])) continue;
    const context = isRecord(entry['context']) ? entry['context'] : {};
    contexts.set(
      entry['name'],
      typeof context['namespace'] === 'string' && context['namespace'] !== '' ? { namespace: context['namespace'] } : {},
    );
  }
  const current = document['current-context'];
  return { ...(typeof current === 'string' && current !== '' ? { currentContext: current } : {}), contexts };
}

/** Several files as kubectl merges them: the first to set a value keeps it. */
function merge(configs: readonly Kubeconfig[]): Kubeconfig {
  const contexts = new Map<string, { namespace?: string }>();
  let currentContext: string | undefined;
  for (const config of configs) {
    currentContext ??= config.currentContext;
    for (const [name, context] of config.contexts) if (!contexts.has(name)) contexts.set(name, context);
  }
  return { ...(currentContext ? { currentContext } : {}), contexts };
}

async function readKubeconfig(io: Io, path: string, explicit: boolean): Promise<Kubeconfig | undefined> {
  const absolute = isAbsolute(path) ? path : resolve(io.cwd, path);
  let text: string;
  try {
    text = await io.readFile(absolute);
  } catch (error) {
    if (!explicit) return undefined;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot read --kubeconfig ${path}: ${code === 'ENOENT' ? 'no such file' : error instanceof Error ? error.message : String(error)}`,
    );
  }
  const config = parseKubeconfig(text);
  if (!config && explicit) throw new UsageError(`--kubeconfig ${path} is not a kubeconfig (YAML with contexts)`);
  return config;
}

/** Where the default namespace came from, to say so when it is not a valid one. */
export interface ContextNamespace {
  readonly namespace: string;
  readonly context: string;
}

/** The namespace of the context in use, or undefined (no kubeconfig, no context, or a context without one). */
export async function contextNamespace(io: Io, flags: Flags): Promise<ContextNamespace | undefined> {
  const explicit = flags.kubeconfig !== undefined;
  const files = explicit ? [flags.kubeconfig as string] : (io.kubeconfigFiles ?? []);
  const configs: Kubeconfig[] = [];
  const read: string[] = [];
  for (const file of files) {
    const config = await readKubeconfig(io, file, explicit);
    if (config) {
      configs.push(config);
      read.push(file);
    }
  }
  const merged = merge(configs);
  const name = flags.context ?? merged.currentContext;
  if (name === undefined) return undefined;
  const context = merged.contexts.get(name);
  if (!context) {
    if (flags.context !== undefined)
      throw new UsageError(
        `context "${flags.context}" does not exist${read.length > 0 ? ` in ${read.join(delimiter)}` : ' (no kubeconfig was found)'}`,
      );
    return undefined;
  }
  return context.namespace === undefined ? undefined : { namespace: context.namespace, context: name };
}
