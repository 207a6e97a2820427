import { isAbsolute, resolve } from 'node:path';
import { stringify } from 'yaml';
import type { FlagName, Flags } from './args.js';
import type { ApiClient } from './client.js';
import { UsageError, type ExitCode } from './errors.js';

/** Everything quotactl does to the world outside the server, so that the specs can play it. */
export interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** The text of a file; `path` is absolute. */
  readonly readFile: (path: string) => Promise<string>;
  readonly readStdin: () => Promise<string>;
  /** Relative paths (`-f quota.yaml`, the development token) are read from here. */
  readonly cwd: string;
  /** The QUOTA_LEDGER_* variables (main passes @quota/config's `cliEnvironment()`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Epoch milliseconds, for AGE. */
  readonly now?: () => number;
  /** quotactl's own version, for `quotactl version` and the User-Agent. */
  readonly version?: string;
  /**
   * The kubeconfig files read for the default namespace when no --kubeconfig is given, as kubectl
   * finds them ($KUBECONFIG, else ~/.kube/config: kubeconfig.ts `defaultKubeconfigFiles`);
   * absent, none is read.
   */
  readonly kubeconfigFiles?: readonly string[];
}

/** `name` is kubectl's `-o name`: one `kind/name` per object (resourcequota/compute), for scripts. */
export type OutputFormat = 'table' | 'json' | 'yaml' | 'name';

/** What a command prints unless it says otherwise: `-o name` only where the output is objects with names. */
export const DEFAULT_OUTPUTS: readonly OutputFormat[] = ['table', 'json', 'yaml'];

export interface Context {
  readonly io: Io;
  /** The arguments after the command's name. */
  readonly args: readonly string[];
  readonly flags: Flags;
  readonly output: OutputFormat;
  /** `-n`, else the kubeconfig context's namespace, else "default", as kubectl defaults it. */
  readonly namespace: string;
  /** Whether `-n` was given (apply must tell "not given", where an object's own namespace wins, from given). */
  readonly namespaceGiven: boolean;
  /** Present for the commands that talk to the server; configured before the command runs. */
  readonly client: ApiClient;
  readonly now: () => number;
}

export interface Command {
  readonly name: string;
  readonly aliases?: readonly string[];
  /** One line for the command list. */
  readonly summary: string;
  /** The synopsis, without the leading `quotactl `. */
  readonly synopsis: string;
  /** More about what it does and prints (help). */
  readonly description?: string;
  /** The flags it accepts beyond the global ones. */
  readonly flags: readonly FlagName[];
  /** What a shared flag means for this command, when it differs from the general help. */
  readonly flagHelp?: Partial<Record<FlagName, string>>;
  readonly examples?: readonly string[];
  /** False for the commands that never call the server (their context has no client). */
  readonly needsServer: boolean;
  /** The `-o` formats it can print (DEFAULT_OUTPUTS when not given); any other is a usage error. */
  readonly outputs?: readonly OutputFormat[];
  run(ctx: Context): Promise<ExitCode>;
}

/** A file's text (`-` is standard input), a usage error when it cannot be read. */
export async function readInput(io: Io, path: string): Promise<string> {
  try {
    return path === '-' ? await io.readStdin() : await io.readFile(isAbsolute(path) ? path : resolve(io.cwd, path));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : error instanceof Error
              ? error.message
              : String(error);
    throw new UsageError(path === '-' ? `cannot read standard input: ${why}` : `cannot read ${path}: ${why}`);
  }
}

/** JSON (two-space indent, as kubectl) or YAML of an answer. */
export function serialize(value: unknown, format: 'json' | 'yaml'): string {
  // lineWidth 0: a denial's message folded over three lines is hard to grep.
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value, { lineWidth: 0 });
}

/**
 * Prints the server's answer as asked: its JSON or YAML, the command's table, or for `-o name`
 * the `kind/name` lines `names` gives (only commands that list 'name' in their outputs get here
 * with it).
 */
export function print(ctx: Context, value: unknown, table: () => string, names: () => readonly string[] = () => objectNames(value)): void {
  if (ctx.output === 'table') ctx.io.stdout(table());
  else if (ctx.output === 'name')
    ctx.io.stdout(
      names()
        .map((name) => `${name}\n`)
        .join(''),
    );
  else ctx.io.stdout(serialize(value, ctx.output));
}

/**
 * kubectl's `-o name` of an object: its kind in lower case, `.group` outside the core group,
 * `/`, its name (`resourcequota/compute`, `validatingwebhookconfiguration.admissionregistration.k8s.io/quota-ledger`).
 */
export function objectName(object: unknown): string | undefined {
  const { apiVersion, kind, metadata } = (object ?? {}) as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } };
  if (typeof kind !== 'string' || typeof metadata?.name !== 'string') return undefined;
  const slash = typeof apiVersion === 'string' ? apiVersion.indexOf('/') : -1;
  const group = slash < 0 ? '' : `.${(apiVersion as string).slice(0, slash)}`;
  return `${kind.toLowerCase()}${group}/${metadata.name}`;
}

/** The `-o name` lines of one object or of a List's items (those without a kind or a name have none). */
export function objectNames(value: unknown): string[] {
  const items = (value as { items?: unknown } | undefined)?.items;
  return (Array.isArray(items) ? items : [value]).map(objectName).filter((name): name is string => name !== undefined);
}

/** Several objects as one document, the way kubectl prints a list it assembled. */
export function asList(items: readonly unknown[]): { apiVersion: 'v1'; kind: 'List'; metadata: { resourceVersion: '' }; items: unknown[] } {
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [...items] };
}

export const enc = encodeURIComponent;

/** /v1/namespaces/{ns}/…, each segment escaped. */
export function namespacePath(namespace: string, ...segments: string[]): string {
  return `/v1/namespaces/${enc(namespace)}${segments.map((s) => `/${enc(s)}`).join('')}`;
}
