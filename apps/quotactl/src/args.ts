import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';

/**
 * Every flag any command takes. One parse for all of them (so a value is never mistaken for a
 * command), then each command accepts only its own and the global ones: `get --kind Pod` is a
 * usage error, as kubectl's `unknown flag` is.
 */
export const OPTIONS = {
  // Global: how to reach the server, how to print.
  server: { type: 'string' },
  token: { type: 'string' },
  'certificate-authority': { type: 'string' },
  'insecure-skip-tls-verify': { type: 'boolean' },
  'request-timeout': { type: 'string' },
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  // Per command.
  namespace: { type: 'string', short: 'n' },
  'all-namespaces': { type: 'boolean', short: 'A' },
  'ignore-not-found': { type: 'boolean' },
  order: { type: 'string' },
  filename: { type: 'string', short: 'f', multiple: true },
  at: { type: 'string' },
  after: { type: 'string' },
  limit: { type: 'string' },
  denied: { type: 'boolean' },
  allowed: { type: 'boolean' },
  since: { type: 'string' },
  until: { type: 'string' },
  requester: { type: 'string' },
  kind: { type: 'string' },
  name: { type: 'string' },
  resource: { type: 'string' },
  resources: { type: 'string' },
  'request-id': { type: 'string' },
  'dry-run': { type: 'boolean' },
  ttl: { type: 'string' },
  wait: { type: 'string' },
  priority: { type: 'string' },
  'no-follow': { type: 'boolean' },
  'ca-file': { type: 'string' },
  url: { type: 'string' },
  'service-namespace': { type: 'string' },
  'service-name': { type: 'string' },
  'service-port': { type: 'string' },
  'failure-policy': { type: 'string' },
  'count-failure-policy': { type: 'string' },
  'timeout-seconds': { type: 'string' },
  'namespace-selector': { type: 'string' },
  namespaces: { type: 'string' },
  'object-selector': { type: 'string' },
  'custom-resource': { type: 'string', multiple: true },
} as const satisfies ParseArgsConfig['options'];

export type FlagName = keyof typeof OPTIONS;

export type Flags = {
  readonly [K in FlagName]?: (typeof OPTIONS)[K] extends { multiple: true }
    ? string[]
    : (typeof OPTIONS)[K]['type'] extends 'boolean'
      ? boolean
      : string;
};

export const GLOBAL_FLAGS: readonly FlagName[] = [
  'server',
  'token',
  'certificate-authority',
  'insecure-skip-tls-verify',
  'request-timeout',
  'kubeconfig',
  'context',
  'output',
  'help',
];

/** One line of help per flag: the spelling with its value, then what it does. */
export const FLAG_HELP: Readonly<Record<FlagName, readonly [string, string]>> = {
  server: ['--server URL', 'the API (QUOTA_LEDGER_SERVER; default http://127.0.0.1:8080)'],
  token: ['--token TOKEN', 'bearer token (QUOTA_LEDGER_TOKEN; else ./.quota-ledger/dev-token, which `npm start` writes)'],
  'certificate-authority': ['--certificate-authority FILE', 'PEM CA that signed the server certificate (QUOTA_LEDGER_CA_FILE)'],
  'insecure-skip-tls-verify': ['--insecure-skip-tls-verify', 'do not verify the server certificate (insecure: testing only)'],
  'request-timeout': [
    '--request-timeout DURATION',
    'give up on a request after this long: seconds or 500ms/30s/2m; 0 waits forever (QUOTA_LEDGER_REQUEST_TIMEOUT; default 30)',
  ],
  output: [
    '-o, --output FORMAT',
    'table (default), json or yaml; name (kind/name lines, as kubectl -o name) where a command prints objects',
  ],
  help: ['-h, --help', 'this help'],
  kubeconfig: [
    '--kubeconfig FILE',
    'the kubeconfig whose context gives the default namespace (else $KUBECONFIG, else ~/.kube/config); quotactl reads nothing else from it',
  ],
  context: ['--context NAME', 'the kubeconfig context whose namespace is the default -n (else its current-context)'],
  namespace: ['-n, --namespace NS', 'the namespace (default: the kubeconfig context\'s namespace, else "default")'],
  'all-namespaces': ['-A, --all-namespaces', 'list across every namespace the ledger holds (NAMESPACE column first); -n is ignored'],
  'ignore-not-found': ['--ignore-not-found', 'treat "not found" as deleted: exit 0 and say nothing'],
  order: ['--order newest|oldest', 'newest first (the default: the first page is the latest) or oldest first'],
  filename: ['-f, --filename FILE', 'YAML or JSON file; - reads standard input'],
  at: ['--at TIME', 'usage as it was at this instant (RFC 3339 with a zone, e.g. 2026-11-23T14:03:00Z)'],
  after: ['--after POSITION', 'start after this position (the `next` a previous page printed)'],
  limit: ['--limit N', 'at most N items (1-1000; the server pages at 100 by default)'],
  denied: ['--denied', 'only denials'],
  allowed: ['--allowed', 'only allowances'],
  since: ['--since TIME', 'from this instant on (RFC 3339, inclusive)'],
  until: ['--until TIME', 'before this instant (RFC 3339, exclusive)'],
  requester: ['--requester USER', 'only what this caller asked'],
  kind: ['--kind KIND', "the object's kind (Pod, PersistentVolumeClaim, Deployment, …)"],
  name: ['--name NAME', "the object's name"],
  resource: ['--resource PLURAL[.GROUP]', 'the resource, for kinds the service does not know (widgets.example.com)'],
  resources: ['--resources LIST', 'what to charge, instead of -f: name=quantity,… (requests.cpu=500m,pods=1)'],
  'request-id': ['--request-id ID', 'idempotency key: repeating it returns the first answer'],
  'dry-run': ['--dry-run', 'decide without reserving'],
  ttl: ['--ttl SECONDS', 'release the reservation unless committed within this many seconds'],
  wait: ['--wait DURATION', 'when it does not fit, wait in the queue this long (600, 90s, 10m, 1h) instead of a 403; --resources only'],
  priority: [
    '--priority N',
    'its place in the queue with --wait: higher first, -1000 to 1000 (default 0; a negative one as --priority=-5)',
  ],
  'no-follow': [
    '--no-follow',
    'with --wait: print that it is queued and return, instead of watching until it is admitted, expires or is cancelled',
  ],
  'ca-file': ['--ca-file FILE', "PEM CA that signed the API's serving certificate (becomes caBundle)"],
  url: ['--url URL', "the API's https:// URL, for a webhook outside the cluster"],
  'service-namespace': ['--service-namespace NS', "namespace of the API's Service"],
  'service-name': ['--service-name NAME', "name of the API's Service"],
  'service-port': ['--service-port PORT', 'port of the Service (default 443)'],
  'failure-policy': [
    '--failure-policy POLICY',
    'Fail (default) or Ignore: mutate, and validate for pods, claims, services, resource claims, namespaces',
  ],
  'count-failure-policy': [
    '--count-failure-policy POLICY',
    'Ignore (default) or Fail: validate for the kinds quota only counts (configmaps, secrets, workloads, custom resources)',
  ],
  'timeout-seconds': ['--timeout-seconds N', 'webhook timeout, 1-30 (default 10)'],
  namespaces: [
    '--namespaces managed|all',
    'managed (default): only namespaces labelled quota-ledger.io/managed by the reconciler; all: every namespace, as before the label',
  ],
  'namespace-selector': [
    '--namespace-selector SELECTOR',
    "only namespaces with these labels, as kubectl -l takes them (env=prod,team in (a,b),!legacy); kube-system and the service's namespace stay excluded",
  ],
  'custom-resource': [
    '--custom-resource R.GROUP/VERSION=Kind',
    'a custom resource quota charges (repeatable), as CUSTOM_RESOURCES names it: validating rules, and RBAC for the reconciler',
  ],
  'object-selector': [
    '--object-selector SELECTOR',
    "only objects with these labels (same syntax); whoever sets an object's labels can then skip quota",
  ],
};

export interface Parsed {
  readonly positionals: readonly string[];
  readonly flags: Flags;
  /** The flags as typed, in order (`-n`, `--namespace`), to name them in errors. */
  readonly given: ReadonlyArray<{ readonly name: FlagName; readonly rawName: string }>;
}

const isBooleanFlag = (name: string): name is FlagName => Object.hasOwn(OPTIONS, name) && OPTIONS[name as FlagName].type === 'boolean';

/**
 * kubectl's boolean flags also take `--flag=true` and `--flag=false` (`decisions --dry-run=false`);
 * parseArgs takes only `--flag`. Those two spellings become `--flag`, and the false ones are set
 * back to false after the parse. Anything after `--` is left alone.
 */
function booleanValues(argv: readonly string[]): { args: string[]; falses: FlagName[] } {
  const falses: FlagName[] = [];
  const end = argv.indexOf('--');
  const args = argv.map((arg, i) => {
    const match = /^--([a-z-]+)=(.*)$/s.exec(arg);
    if (!match || (end >= 0 && i > end) || !isBooleanFlag(match[1]!)) return arg;
    const [, name, value] = match as unknown as [string, FlagName, string];
    if (value !== 'true' && value !== 'false') throw new UsageError(`flag --${name} takes true or false, got ${JSON.stringify(value)}`);
    if (value === 'false') falses.push(name);
    return `--${name}`;
  });
  return { args, falses };
}

/** parseArgs, with its errors reworded the way kubectl words them. */
export function parse(argv: readonly string[]): Parsed {
  const { args, falses } = booleanValues(argv);
  let result;
  try {
    result = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
  } catch (error) {
    throw new UsageError(parseErrorMessage(error));
  }
  const values = result.values as Record<string, unknown>;
  for (const name of falses) values[name] = false;
  const given = (result.tokens ?? []).flatMap((token) =>
    token.kind === 'option' ? [{ name: token.name as FlagName, rawName: token.rawName }] : [],
  );
  return { positionals: result.positionals, flags: values as Flags, given };
}

function parseErrorMessage(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  const flag = /'([^']+)'/.exec(message)?.[1] ?? '';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown flag: ${flag}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      // Both "argument missing" and "does not take an argument" land here.
      if (/argument missing/.test(message)) return `flag needs an argument: ${flag.replace(/ <value>$/, '')}`;
      if (/does not take an argument/.test(message)) return `flag ${flag} does not take a value`;
      return message;
    default:
      return message;
  }
}

/** The value of a flag that must be a whole number in a range. */
export function wholeNumber(raw: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[0-9]{1,10}$/.test(raw) || Number(raw) < min || Number(raw) > max)
    throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** An RFC 3339 instant with a zone, as the server takes it (a zone-less time would be read in the server's zone). */
export function instant(raw: string | undefined, flag: string): string | undefined {
  if (raw === undefined) return undefined;
  if (!RFC3339.test(raw) || Number.isNaN(Date.parse(raw)))
    throw new UsageError(`--${flag} must be an RFC 3339 time with a zone, e.g. 2026-11-23T14:03:00Z, got ${JSON.stringify(raw)}`);
  return raw;
}

/** A ledger position: the server's decimal bigint. */
export function position(raw: string | undefined, flag: string): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^[0-9]{1,19}$/.test(raw))
    throw new UsageError(
      `--${flag} must be a position (a whole number, as printed in POSITION or by the previous page), got ${JSON.stringify(raw)}`,
    );
  return raw;
}

const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600 };

/** Whole seconds from `600`, `90s`, `10m` or `1h` (the units kubectl's durations use), at most `max`. */
export function seconds(raw: string | undefined, flag: string, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const match = /^([0-9]{1,7})(s|m|h)?$/.exec(raw);
  const value = match ? Number(match[1]) * (DURATION_UNITS[match[2] ?? 's'] ?? 1) : Number.NaN;
  if (!(value >= 1 && value <= max))
    throw new UsageError(
      `--${flag} must be a duration from 1s to ${max}s: seconds (600) or a number with a unit (90s, 10m, 1h), got ${JSON.stringify(raw)}`,
    );
  return value;
}

/** A whole number that may be negative, in a range. */
export function integer(raw: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^-?[0-9]{1,10}$/.test(raw) || Number(raw) < min || Number(raw) > max)
    throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** What the server takes as a reservation id. */
export const RESERVATION_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The one reservation id a command takes (`ID` or `reservation/ID`, what reserve -o name printed). */
export function reservationId(args: readonly string[], command: string): string {
  const [given, ...rest] = args;
  const id = given?.replace(/^reservations?\//, '');
  if (!id) throw new UsageError(`${command} needs the reservation id (what reserve printed)`);
  if (rest.length > 0) throw new UsageError(`${command} takes one reservation id, got ${args.length}`);
  if (!RESERVATION_ID.test(id))
    throw new UsageError(`${JSON.stringify(id)} is not a reservation id (1-128 letters, digits, '.', '_' or '-')`);
  return id;
}
