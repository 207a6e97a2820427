import { ApiError, Unavailable } from '../client.js';
import { asList, enc, namespacePath, print, readInput, type Command, type Context } from '../context.js';
import { EXIT, UsageError, errorMessage, exitCodeOf, type ExitCode } from '../errors.js';
import { identity, parseObjects, targetNamespace, type KubeObject } from '../manifests.js';

interface Kind {
  readonly apiVersion: string;
  readonly resource: string;
  /** What kubectl prints before the name: the singular resource, `.group` outside the core group. */
  readonly singular: string;
  /** Cluster-scoped: no namespace in its path, and -n does not apply. */
  readonly cluster?: boolean;
}

/** The kinds apply manages (and delete -f removes). */
export const KINDS: Readonly<Record<string, Kind>> = {
  ResourceQuota: { apiVersion: 'v1', resource: 'resourcequotas', singular: 'resourcequota' },
  LimitRange: { apiVersion: 'v1', resource: 'limitranges', singular: 'limitrange' },
  Namespace: { apiVersion: 'v1', resource: 'namespaces', singular: 'namespace', cluster: true },
  ClusterResourceQuota: {
    apiVersion: 'quota.openshift.io/v1',
    resource: 'clusterresourcequotas',
    singular: 'clusterresourcequota.quota.openshift.io',
    cluster: true,
  },
  HierarchicalResourceQuota: {
    apiVersion: 'hnc.x-k8s.io/v1alpha2',
    resource: 'hierarchicalresourcequotas',
    singular: 'hierarchicalresourcequota.hnc.x-k8s.io',
  },
};

export interface Target {
  readonly object: KubeObject;
  readonly source: string;
  readonly singular: string;
  readonly path: string;
  readonly name: string;
  /** Where it goes (undefined for a cluster-scoped kind). */
  readonly namespace: string | undefined;
}

/**
 * Where an object of a file goes: its kind's path, in its own namespace, else -n (when given),
 * else the default namespace (the kubeconfig context's, else "default"). `verb` names the
 * command in the refusal of a kind it does not handle.
 */
export function target(object: KubeObject, source: string, ctx: Pick<Context, 'namespace' | 'namespaceGiven'>, verb = 'apply'): Target {
  const kind = typeof object.kind === 'string' ? object.kind : undefined;
  if (!kind) throw new UsageError(`error validating ${source}: kind not set`);
  const known = KINDS[kind];
  if (!known) throw new UsageError(`${source}: ${verb} handles ${Object.keys(KINDS).join(', ')} objects, not "${kind}"`);
  if (object.apiVersion !== undefined && object.apiVersion !== known.apiVersion)
    throw new UsageError(`${source}: a ${kind} is apiVersion ${known.apiVersion}, not ${JSON.stringify(object.apiVersion)}`);
  const { name } = identity(object);
  if (!name) throw new UsageError(`error validating ${source}: ${kind} has no metadata.name`);
  const namespace = known.cluster ? undefined : targetNamespace(object, ctx.namespaceGiven ? ctx.namespace : undefined, ctx.namespace);
  const path = namespace === undefined ? `/v1/${known.resource}/${enc(name)}` : namespacePath(namespace, known.resource, name);
  return { object, source, singular: known.singular, path, name, namespace };
}

/** Every object of every -f file, each checked and placed, before anything is sent. */
export async function targetsOf(ctx: Context, verb: string): Promise<Target[]> {
  const files = ctx.flags.filename ?? [];
  if (files.filter((f) => f === '-').length > 1) throw new UsageError('standard input (-f -) can be read only once');
  const targets: Target[] = [];
  for (const file of files) {
    const objects = parseObjects(await readInput(ctx.io, file), file === '-' ? 'standard input' : file);
    for (const { object, source } of objects) targets.push(target(object, source, ctx, verb));
  }
  if (targets.length === 0) throw new UsageError(`no objects passed to ${verb}`);
  return targets;
}

/**
 * Reads and checks every object of every file before the first request (a typo in the third
 * document must not leave the first two applied), then PUTs them in order. A refusal of one
 * object is reported and the others are still applied, as kubectl does; an unreachable
 * server stops at once.
 *
 * "unchanged" needs the object's resourceVersion from before the PUT: the server does not
 * bump it when the body equals what it stores, so a GET first tells configured from unchanged.
 */
async function apply(ctx: Context): Promise<ExitCode> {
  const files = ctx.flags.filename ?? [];
  if (files.length === 0) throw new UsageError('must specify -f FILE (-f - reads standard input)');
  if (ctx.args.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(ctx.args[0])}: apply takes its objects from -f`);
  const targets = await targetsOf(ctx, 'apply');

  const applied: unknown[] = [];
  let failure: unknown;
  for (const t of targets) {
    try {
      const stored = await storedIdentity(ctx, t.path);
      const before = stored?.resourceVersion;
      const { status, body } = await ctx.client.call<{ metadata?: { resourceVersion?: string } }>('PUT', t.path, asOurs(ctx, t, stored));
      applied.push(body);
      const after = body?.metadata?.resourceVersion;
      const word =
        status === 201 ? 'created' : before !== undefined && after !== undefined && before === after ? 'unchanged' : 'configured';
      if (ctx.output === 'table') ctx.io.stdout(`${t.singular}/${t.name} ${word}\n`);
      else if (ctx.output === 'name') ctx.io.stdout(`${t.singular}/${t.name}\n`);
    } catch (error) {
      if (error instanceof Unavailable || !(error instanceof ApiError)) throw error;
      ctx.io.stderr(`${errorMessage(error)}\n`);
      failure ??= error;
    }
  }
  if ((ctx.output === 'json' || ctx.output === 'yaml') && applied.length > 0)
    print(ctx, applied.length === 1 && targets.length === 1 ? applied[0] : asList(applied), () => '');
  return failure === undefined ? EXIT.ok : exitCodeOf(failure);
}

interface StoredIdentity {
  readonly resourceVersion?: string;
  readonly uid?: string;
}

/** The stored object's resourceVersion and uid, or undefined when there is none (404) or it cannot be read. */
async function storedIdentity(ctx: Context, path: string): Promise<StoredIdentity | undefined> {
  const answer = await ctx.client.send('GET', path);
  if (answer.status !== 200) return undefined;
  const metadata = (answer.body as { metadata?: { resourceVersion?: unknown; uid?: unknown } } | undefined)?.metadata;
  return {
    ...(typeof metadata?.resourceVersion === 'string' ? { resourceVersion: metadata.resourceVersion } : {}),
    ...(typeof metadata?.uid === 'string' ? { uid: metadata.uid } : {}),
  };
}

/**
 * An object read from another server (`kubectl get resourcequota -o yaml | quotactl apply -f -`)
 * carries that server's uid and resourceVersion: a precondition on a history we never had,
 * which would make every such move a 409. When its uid is not the one we store (or we store
 * none), the two are dropped with a warning and the object is applied as a new version of
 * ours. An object of ours (no uid, or our uid) keeps its resourceVersion as a precondition.
 */
function asOurs(ctx: Context, t: Target, stored: StoredIdentity | undefined): KubeObject {
  const metadata = (t.object.metadata ?? {}) as Record<string, unknown>;
  const uid = metadata['uid'];
  if (typeof uid !== 'string' || uid === '' || uid === stored?.uid) return t.object;
  const { uid: _uid, resourceVersion, ...rest } = metadata;
  if (resourceVersion !== undefined && resourceVersion !== '') {
    ctx.io.stderr(
      `Warning: ${t.singular}/${t.name}: metadata.uid ${uid} and resourceVersion ${String(resourceVersion)} are another server's; applied without that precondition\n`,
    );
  }
  return { ...t.object, metadata: rest };
}

export const applyCommand: Command = {
  name: 'apply',
  summary: 'create or replace quotas, limit ranges, namespaces and quotas over namespaces from files',
  synopsis: 'apply -f FILE [-f FILE …] [-n NS] [-o json|yaml|name]',
  description: [
    'PUTs every ResourceQuota, LimitRange, Namespace, ClusterResourceQuota (quota.openshift.io/v1)',
    'and HierarchicalResourceQuota (hnc.x-k8s.io/v1alpha2) of a YAML or JSON stream (several',
    'documents, or a `kind: List`). A namespaced object without metadata.namespace goes to -n',
    '(default: the kubeconfig context\'s namespace, else "default"); one whose namespace disagrees',
    'with -n is refused; Namespaces and ClusterResourceQuotas are cluster-scoped. Prints, per',
    'object, `resourcequota/NAME created`, `configured` (replaced) or `unchanged` (the server',
    'already held exactly this). Every file is read and checked before anything is sent;',
    'metadata.resourceVersion, when present, makes the write conditional (409 Conflict if the',
    'object changed since), except on an object read from another server (a metadata.uid that is',
    'not ours: `kubectl get resourcequota -o yaml | quotactl apply -f -` moves it), whose uid and',
    'resourceVersion are dropped with a warning. -o name prints only `resourcequota/NAME`, one',
    'line per object applied, as kubectl does.',
  ].join('\n'),
  flags: ['filename', 'namespace'],
  examples: ['quotactl apply -f quota.yaml', 'cat limits.json | quotactl apply -f - -n team-a'],
  needsServer: true,
  outputs: ['table', 'json', 'yaml', 'name'],
  run: apply,
};
