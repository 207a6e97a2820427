import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { CliDefaults } from '@quota/config';
import { parseAllDocuments, stringify } from 'yaml';
import { call, Unreachable, type Answer, type ClientOptions } from './client.js';
import { describeLimitRange, describeQuota, getQuotaRows, table, type LimitRangeObject, type QuotaObject } from './format.js';
import { type FailurePolicy, toYaml, webhookConfiguration } from './webhook-config.js';

/**
 * Exit codes scripts can rely on:
 * 0 done; 1 the server refused (other 4xx) or another failure; 2 usage error (nothing was
 * sent); 3 admission denied; 4 not found; 5 unauthorized or forbidden; 6 server unavailable
 * (unreachable, timeout, 5xx).
 */
export const EXIT = { ok: 0, refused: 1, usage: 2, denied: 3, notFound: 4, auth: 5, unavailable: 6 } as const;

export interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly readFile: (path: string) => string;
  readonly readStdin: () => string;
  /** The development token `npm start` wrote in this directory, if any. */
  readonly devToken: () => string | undefined;
  readonly now: () => number;
}

class UsageError extends Error {}
class ServerError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const USAGE = `quotactl: drive quota-ledger from a terminal, as kubectl drives Kubernetes.

Commands:
  apply -f FILE [-n NS]                   create or replace ResourceQuota / LimitRange objects (YAML or JSON; - for stdin)
  get quota|limitrange [NAME] -n NS       list them (kubectl's columns)
  describe quota|limitrange [NAME] -n NS  the Used/Hard table, the limit table
  usage -n NS [--at RFC3339]              usage per quota now, or as it was at an instant
  history -n NS [--after POS] [--limit N] the namespace's ledger events
  decisions -n NS [--denied|--allowed] [--since T] [--until T] [--limit N]
  reserve -n NS --kind KIND --name NAME (--resources k=v,... | -f OBJECT) [--request-id ID] [--dry-run] [--ttl SECONDS]
  commit -n NS ID | release -n NS ID      settle a reservation
  webhook-config --ca-file CA (--url URL | --service-namespace NS --service-name NAME [--service-port P])
                 [--failure-policy Fail|Ignore] [--timeout-seconds N]   print the webhook configurations
  version

Flags: --server URL (QUOTA_LEDGER_SERVER, default http://127.0.0.1:8080), --token T (QUOTA_LEDGER_TOKEN,
  else ./.quota-ledger/dev-token), --certificate-authority FILE (QUOTA_LEDGER_CA_FILE),
  --insecure-skip-tls-verify, --request-timeout SECONDS (30), -o json|yaml|table.
Exit codes: 0 ok, 1 refused, 2 usage error, 3 admission denied, 4 not found, 5 unauthorized/forbidden, 6 unavailable.
`;

const OPTIONS = {
  namespace: { type: 'string', short: 'n' },
  filename: { type: 'string', short: 'f' },
  output: { type: 'string', short: 'o' },
  server: { type: 'string' },
  token: { type: 'string' },
  'certificate-authority': { type: 'string' },
  'insecure-skip-tls-verify': { type: 'boolean' },
  'request-timeout': { type: 'string' },
  at: { type: 'string' },
  after: { type: 'string' },
  limit: { type: 'string' },
  denied: { type: 'boolean' },
  allowed: { type: 'boolean' },
  since: { type: 'string' },
  until: { type: 'string' },
  kind: { type: 'string' },
  name: { type: 'string' },
  resources: { type: 'string' },
  'request-id': { type: 'string' },
  'dry-run': { type: 'boolean' },
  ttl: { type: 'string' },
  'ca-file': { type: 'string' },
  url: { type: 'string' },
  'service-namespace': { type: 'string' },
  'service-name': { type: 'string' },
  'service-port': { type: 'string' },
  'failure-policy': { type: 'string' },
  'timeout-seconds': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} satisfies ParseArgsConfig['options'];

type Flags = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

const KINDS: Record<string, 'resourcequotas' | 'limitranges'> = {
  quota: 'resourcequotas',
  quotas: 'resourcequotas',
  resourcequota: 'resourcequotas',
  resourcequotas: 'resourcequotas',
  limitrange: 'limitranges',
  limitranges: 'limitranges',
  limits: 'limitranges',
};

const whole = (raw: string | undefined, flag: string, max: number): number | undefined => {
  if (raw === undefined) return undefined;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) throw new UsageError(`--${flag} must be a whole number from 1 to ${max}, got "${raw}"`);
  return Number(raw);
};

const enc = encodeURIComponent;

export async function run(argv: readonly string[], io: Io, defaults: CliDefaults): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    const flags = parsed.values as Flags;
    const [command, ...args] = parsed.positionals;
    if (!command || command === 'help' || flags.help) {
      io.stdout(USAGE);
      return command || flags.help ? EXIT.ok : EXIT.usage;
    }
    const output = flags.output ?? 'table';
    if (!['json', 'yaml', 'table'].includes(output)) throw new UsageError(`--output must be json, yaml or table, got "${output}"`);
    const print = (value: unknown, asTable: () => string): void => io.stdout(output === 'json' ? `${JSON.stringify(value, null, 2)}\n` : output === 'yaml' ? stringify(value) : asTable());
    const namespace = (): string => {
      if (!flags.namespace) throw new UsageError(`${command} needs -n NAMESPACE`);
      return flags.namespace;
    };
    const client = (): ClientOptions => {
      const caFile = flags['certificate-authority'] ?? defaults.caFile;
      const timeoutSeconds = whole(flags['request-timeout'], 'request-timeout', 3600) ?? 30;
      return {
        server: flags.server ?? defaults.server,
        token: flags.token ?? defaults.token ?? io.devToken(),
        ca: caFile ? Buffer.from(readInput(io, caFile)) : undefined,
        insecureSkipTlsVerify: flags['insecure-skip-tls-verify'] === true,
        timeoutMs: timeoutSeconds * 1000,
      };
    };
    const request = async (method: string, path: string, body?: unknown): Promise<Answer> => {
      const answer = await call(client(), method, path, body);
      if (answer.status >= 400) throw serverError(answer);
      return answer;
    };

    switch (command) {
      case 'version':
        io.stdout('quotactl 0.1.0\n');
        return EXIT.ok;
      case 'apply': {
        if (!flags.filename) throw new UsageError('apply needs -f FILE (or -f - for stdin)');
        const objects = readObjects(io, flags.filename);
        const targets = objects.map((object) => applyTarget(object, flags.namespace));
        for (const target of targets) {
          const answer = await request('PUT', `/v1/namespaces/${enc(target.namespace)}/${target.resource}/${enc(target.name)}`, target.object);
          const word = answer.status === 201 ? 'created' : 'configured';
          if (output === 'table') io.stdout(`${target.resource.replace(/s$/, '')}/${target.name} ${word}\n`);
          else print(answer.body, () => '');
        }
        return EXIT.ok;
      }
      case 'get':
      case 'describe': {
        const resource = KINDS[args[0] ?? ''];
        if (!resource) throw new UsageError(`${command} needs a kind: quota or limitrange`);
        const ns = namespace();
        const name = args[1];
        const base = `/v1/namespaces/${enc(ns)}/${resource}`;
        const items = name ? [(await request('GET', `${base}/${enc(name)}`)).body] : ((await request('GET', base)).body.items as unknown[]);
        if (output !== 'table') {
          print(name ? items[0] : { apiVersion: 'v1', kind: resource === 'resourcequotas' ? 'ResourceQuotaList' : 'LimitRangeList', items }, () => '');
          return EXIT.ok;
        }
        if (items.length === 0) {
          io.stderr(`No resources found in ${ns} namespace.\n`);
          return EXIT.ok;
        }
        if (command === 'describe') {
          const render = resource === 'resourcequotas' ? (o: unknown) => describeQuota(o as QuotaObject) : (o: unknown) => describeLimitRange(o as LimitRangeObject);
          io.stdout(items.map(render).join('\n\n'));
        } else if (resource === 'resourcequotas') {
          io.stdout(getQuotaRows(items as QuotaObject[], io.now()));
        } else {
          io.stdout(table(['NAME', 'CREATED AT'], (items as LimitRangeObject[]).map((r) => [r.metadata.name, r.metadata.creationTimestamp ?? '<unknown>'])));
        }
        return EXIT.ok;
      }
      case 'usage': {
        const ns = namespace();
        const { body } = await request('GET', `/v1/namespaces/${enc(ns)}/usage${flags.at ? `?at=${enc(flags.at)}` : ''}`);
        const quotas = body.quotas as Array<{ name: string; hard: Record<string, string>; used: Record<string, string> }>;
        print(body, () =>
          table(
            ['QUOTA', 'RESOURCE', 'USED', 'HARD'],
            quotas.flatMap((q) => Object.keys(q.hard).sort().map((r) => [q.name, r, q.used[r] ?? '0', q.hard[r] ?? ''])),
          ),
        );
        return EXIT.ok;
      }
      case 'history': {
        const ns = namespace();
        const query = new URLSearchParams();
        if (flags.after) query.set('after', flags.after);
        const limit = whole(flags.limit, 'limit', 1000);
        if (limit) query.set('limit', String(limit));
        const { body } = await request('GET', `/v1/namespaces/${enc(ns)}/events${query.size ? `?${query}` : ''}`);
        const items = body.items as Array<{ position: string; time: string; type: string; actor: string; data: Record<string, unknown> }>;
        print(body, () => table(['POSITION', 'TIME', 'TYPE', 'ACTOR', 'SUMMARY'], items.map((e) => [e.position, e.time, e.type, e.actor, summary(e.data)])));
        return EXIT.ok;
      }
      case 'decisions': {
        const ns = namespace();
        if (flags.denied && flags.allowed) throw new UsageError('give --denied or --allowed, not both');
        const query = new URLSearchParams();
        if (flags.denied) query.set('allowed', 'false');
        if (flags.allowed) query.set('allowed', 'true');
        if (flags.since) query.set('since', flags.since);
        if (flags.until) query.set('until', flags.until);
        const limit = whole(flags.limit, 'limit', 1000);
        if (limit) query.set('limit', String(limit));
        const { body } = await request('GET', `/v1/namespaces/${enc(ns)}/decisions${query.size ? `?${query}` : ''}`);
        const items = body.items as Array<{ time: string; allowed: boolean; kind?: string; resource: string; name?: string; operation: string; requester: string; result: { message?: string } }>;
        print(body, () =>
          table(
            ['TIME', 'ALLOWED', 'KIND', 'NAME', 'OPERATION', 'REQUESTER', 'MESSAGE'],
            items.map((d) => [d.time, String(d.allowed), d.kind ?? d.resource, d.name ?? '', d.operation, d.requester, d.result.message ?? '']),
          ),
        );
        return EXIT.ok;
      }
      case 'reserve': {
        const ns = namespace();
        if (!flags.kind) throw new UsageError('reserve needs --kind (Pod, PersistentVolumeClaim, …)');
        if ((flags.resources === undefined) === (flags.filename === undefined)) throw new UsageError('reserve needs exactly one of --resources k=v,… or -f OBJECT');
        const ttl = whole(flags.ttl, 'ttl', 365 * 24 * 3600);
        const body = {
          kind: flags.kind,
          ...(flags.name ? { name: flags.name } : {}),
          ...(flags['request-id'] ? { requestId: flags['request-id'] } : {}),
          ...(flags['dry-run'] ? { dryRun: true } : {}),
          ...(ttl ? { ttlSeconds: ttl } : {}),
          ...(flags.resources ? { resources: resourceList(flags.resources) } : { object: single(readObjects(io, flags.filename!)) }),
        };
        const answer = await call(client(), 'POST', `/v1/namespaces/${enc(ns)}/reservations`, body);
        if (answer.status === 403 && answer.body?.details?.denial !== undefined) {
          io.stderr(`Error from server (Forbidden): ${answer.body.message}\n`);
          if (output !== 'table') print(answer.body, () => '');
          return EXIT.denied;
        }
        if (answer.status >= 400) throw serverError(answer);
        print(answer.body, () => `${answer.body.id ?? '(dry run)'}\n`);
        return EXIT.ok;
      }
      case 'commit':
      case 'release': {
        const ns = namespace();
        const id = args[0];
        if (!id) throw new UsageError(`${command} needs a reservation id`);
        const path = `/v1/namespaces/${enc(ns)}/reservations/${enc(id)}`;
        const { body } = command === 'commit' ? await request('POST', `${path}/commit`) : await request('DELETE', path);
        print(body, () => `reservation/${id} ${body.state ?? command}\n`);
        return EXIT.ok;
      }
      case 'webhook-config': {
        if (!flags['ca-file']) throw new UsageError('webhook-config needs --ca-file (the CA that signed the API\'s serving certificate)');
        const caBundlePem = readInput(io, flags['ca-file']);
        const timeoutSeconds = whole(flags['timeout-seconds'], 'timeout-seconds', 30);
        const policy = flags['failure-policy'];
        if (policy !== undefined && policy !== 'Fail' && policy !== 'Ignore') throw new UsageError('--failure-policy must be Fail or Ignore');
        const common = { caBundlePem, ...(policy ? { failurePolicy: policy as FailurePolicy } : {}), ...(timeoutSeconds ? { timeoutSeconds } : {}) };
        let docs;
        try {
          if (flags.url) docs = webhookConfiguration({ ...common, url: flags.url });
          else if (flags['service-namespace'] && flags['service-name']) {
            const port = whole(flags['service-port'], 'service-port', 65535);
            docs = webhookConfiguration({ ...common, service: { namespace: flags['service-namespace'], name: flags['service-name'], ...(port ? { port } : {}) } });
          } else throw new UsageError('webhook-config needs --url, or --service-namespace and --service-name');
        } catch (error) {
          throw error instanceof UsageError ? error : new UsageError(error instanceof Error ? error.message : String(error));
        }
        io.stdout(output === 'json' ? `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: docs }, null, 2)}\n` : toYaml(docs));
        return EXIT.ok;
      }
      default:
        throw new UsageError(`unknown command "${command}"; see quotactl help`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`error: ${error.message}\n`);
      return EXIT.usage;
    }
    if (error instanceof ServerError) {
      io.stderr(`${error.message}\n`);
      return error.code;
    }
    if (error instanceof Unreachable) {
      io.stderr(`error: ${error.message}\n`);
      return EXIT.unavailable;
    }
    io.stderr(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.refused;
  }
}

/** `Error from server (Reason): message`, as kubectl words a Status, and the exit code for it. */
function serverError(answer: Answer): ServerError {
  const status = answer.body as { reason?: string; message?: string } | undefined;
  const reason = status?.reason ?? `HTTP ${answer.status}`;
  const message = status?.message ?? (typeof answer.body === 'string' ? answer.body : '');
  const code =
    answer.status === 404 ? EXIT.notFound : answer.status === 401 || answer.status === 403 ? EXIT.auth : answer.status >= 500 || answer.status === 429 ? EXIT.unavailable : EXIT.refused;
  return new ServerError(code, `Error from server (${reason}): ${message}`);
}

function readInput(io: Io, path: string): string {
  try {
    return path === '-' ? io.readStdin() : io.readFile(path);
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

type KubeObject = { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; namespace?: unknown }; items?: unknown[] };

/** Every object of a YAML stream (or JSON), with `kind: List` unwrapped. */
function readObjects(io: Io, path: string): KubeObject[] {
  const documents = parseAllDocuments(readInput(io, path));
  const objects: KubeObject[] = [];
  for (const document of Array.isArray(documents) ? documents : [documents]) {
    if (document.errors.length) throw new UsageError(`${path} is not valid YAML: ${document.errors[0]?.message}`);
    const value = document.toJS() as KubeObject | null;
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`${path}: every document must be an object`);
    if (value.kind === 'List' && Array.isArray(value.items)) objects.push(...(value.items as KubeObject[]));
    else objects.push(value);
  }
  if (objects.length === 0) throw new UsageError(`${path} holds no objects`);
  return objects;
}

function single(objects: KubeObject[]): KubeObject {
  if (objects.length !== 1) throw new UsageError(`-f must hold exactly one object for reserve, found ${objects.length}`);
  return objects[0]!;
}

function applyTarget(object: KubeObject, flagNamespace: string | undefined): { resource: 'resourcequotas' | 'limitranges'; namespace: string; name: string; object: KubeObject } {
  const resource = object.kind === 'ResourceQuota' ? 'resourcequotas' : object.kind === 'LimitRange' ? 'limitranges' : undefined;
  if (!resource) throw new UsageError(`apply takes ResourceQuota and LimitRange objects, not ${JSON.stringify(object.kind)}`);
  const name = object.metadata?.name;
  if (typeof name !== 'string' || !name) throw new UsageError(`a ${String(object.kind)} needs metadata.name`);
  const own = typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : undefined;
  if (own && flagNamespace && own !== flagNamespace) {
    throw new UsageError(`the namespace from the provided object "${own}" does not match the namespace "${flagNamespace}". You must pass '--namespace=${own}' to perform this operation.`);
  }
  const namespace = own ?? flagNamespace;
  if (!namespace) throw new UsageError(`${String(object.kind)} ${name} has no metadata.namespace: pass -n NAMESPACE`);
  return { resource, namespace, name, object };
}

function resourceList(raw: string): Record<string, string> {
  const list: Record<string, string> = {};
  for (const pair of raw.split(',').filter(Boolean)) {
    const [name, value, ...rest] = pair.split('=');
    if (!name || !value || rest.length) throw new UsageError(`--resources takes name=quantity pairs separated by commas, got "${pair}"`);
    list[name.trim()] = value.trim();
  }
  return list;
}

function summary(data: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const key of ['name', 'reservationId', 'kind', 'reason']) if (typeof data[key] === 'string') parts.push(`${key}=${data[key] as string}`);
  return parts.join(' ');
}
