import type { Page } from '../api-types.js';
import { ApiError } from '../client.js';
import { asList, enc, namespacePath, print, type Command, type Context } from '../context.js';
import { EXIT, UsageError, type ExitCode } from '../errors.js';
import {
  describeClusterQuota,
  describeLimitRange,
  describeQuota,
  joinDescriptions,
  type ClusterQuotaObject,
  type LimitRangeObject,
  type QuotaObject,
} from '../format/describe.js';
import { limitRangeTable, namespacesTable, quotaTable, type NamespaceSummaryRow, type TableOptions } from '../format/table.js';

export type Resource = 'resourcequotas' | 'limitranges' | 'clusterresourcequotas' | 'hierarchicalresourcequotas';

/** The names kubectl and oc accept for each kind (plural, singular, short name, with or without the group). */
const RESOURCES: Readonly<Record<string, Resource>> = {
  quota: 'resourcequotas',
  quotas: 'resourcequotas',
  resourcequota: 'resourcequotas',
  resourcequotas: 'resourcequotas',
  limitrange: 'limitranges',
  limitranges: 'limitranges',
  limits: 'limitranges',
  clusterquota: 'clusterresourcequotas',
  clusterresourcequota: 'clusterresourcequotas',
  clusterresourcequotas: 'clusterresourcequotas',
  'clusterresourcequota.quota.openshift.io': 'clusterresourcequotas',
  'clusterresourcequotas.quota.openshift.io': 'clusterresourcequotas',
  hrq: 'hierarchicalresourcequotas',
  hierarchicalresourcequota: 'hierarchicalresourcequotas',
  hierarchicalresourcequotas: 'hierarchicalresourcequotas',
  'hierarchicalresourcequota.hnc.x-k8s.io': 'hierarchicalresourcequotas',
  'hierarchicalresourcequotas.hnc.x-k8s.io': 'hierarchicalresourcequotas',
};

/** The names kubectl accepts for namespaces (`get namespaces`, `delete namespace NAME`). */
export const NAMESPACE_TYPES: ReadonlySet<string> = new Set(['ns', 'namespace', 'namespaces']);

/** What kubectl's `-o name` prints before the slash: the singular resource, `.group` outside the core group. */
export const NAME_PREFIX: Readonly<Record<Resource, string>> = {
  resourcequotas: 'resourcequota',
  limitranges: 'limitrange',
  clusterresourcequotas: 'clusterresourcequota.quota.openshift.io',
  hierarchicalresourcequotas: 'hierarchicalresourcequota.hnc.x-k8s.io',
};

/** ClusterResourceQuotas live outside every namespace: -n does not apply. */
export const CLUSTER_SCOPED: ReadonlySet<Resource> = new Set(['clusterresourcequotas']);

export function pathOf(ctx: Context, resource: Resource, name?: string, namespace = ctx.namespace): string {
  if (CLUSTER_SCOPED.has(resource)) return `/v1/${resource}${name === undefined ? '' : `/${enc(name)}`}`;
  return name === undefined ? namespacePath(namespace, resource) : namespacePath(namespace, resource, name);
}

/** A ClusterResourceQuota in the quota table's columns: its total over every namespace it covers. */
const asQuota = (o: ClusterQuotaObject): QuotaObject => ({
  ...(o.metadata ? { metadata: o.metadata } : {}),
  ...(o.status?.total ? { status: o.status.total } : {}),
});

/** `get quota NAME`, `get quota/NAME` or `get quota`: the resource and the optional name. */
export function resourceAndName(command: string, args: readonly string[]): { resource: Resource; name: string | undefined } {
  const [first, ...rest] = args;
  if (!first) throw new UsageError(`you must specify the type of resource to ${command}: quota (resourcequota) or limitrange (limits)`);
  const slash = first.indexOf('/');
  const type = (slash < 0 ? first : first.slice(0, slash)).toLowerCase();
  const resource = RESOURCES[type];
  if (!resource) {
    const known =
      command === 'get'
        ? 'quota, limitrange, clusterresourcequota, hierarchicalresourcequota and namespace'
        : 'quota, limitrange, clusterresourcequota and hierarchicalresourcequota';
    throw new UsageError(`the server doesn't have a resource type "${type}" (quotactl ${command} knows ${known})`);
  }
  const name = slash < 0 ? rest.shift() : first.slice(slash + 1);
  if (name === '') throw new UsageError(`${first}: the name after / is empty`);
  if (rest.length > 0) throw new UsageError(`one name at a time: unexpected ${JSON.stringify(rest[0])}`);
  return { resource, name };
}

async function fetchObjects(ctx: Context, resource: Resource, name: string | undefined, namespace = ctx.namespace): Promise<unknown[]> {
  if (name !== undefined) return [(await ctx.client.call('GET', pathOf(ctx, resource, name, namespace))).body];
  const { body } = await ctx.client.call<{ items?: unknown[] }>('GET', pathOf(ctx, resource, undefined, namespace));
  return Array.isArray(body?.items) ? body.items : [];
}

/** The server's largest page of namespaces. */
const NAMESPACE_PAGE = 1000;
/** Namespaces read at once by -A. */
const ACROSS_CONCURRENCY = 8;

/** Every namespace the ledger holds (`GET /v1/namespaces`, every page), in name order. */
export async function namespaceSummaries(ctx: Context): Promise<NamespaceSummaryRow[]> {
  const all: NamespaceSummaryRow[] = [];
  let after: string | undefined;
  do {
    const { body } = await ctx.client.call<Page<NamespaceSummaryRow>>('GET', '/v1/namespaces', undefined, {
      after,
      limit: String(NAMESPACE_PAGE),
    });
    all.push(...(body?.items ?? []));
    after = body?.next;
  } while (after !== undefined);
  return all;
}

/** `fn` over `items` with at most `limit` running at once; results in the items' order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * `-A`: the lists of every namespace the ledger holds, in namespace order. The API has no
 * cluster-wide list of these kinds, so the namespaces come from `GET /v1/namespaces` (admin or
 * auditor, not limited to namespaces) and each one's list is read (a few at a time); quotas only
 * where that list says there are some.
 */
async function fetchAcross(ctx: Context, resource: Resource): Promise<unknown[]> {
  const summaries = await namespaceSummaries(ctx);
  const namespaces = summaries.filter((s) => resource !== 'resourcequotas' || (s.quotas?.length ?? 0) > 0).map((s) => s.namespace);
  const lists = await mapLimit(namespaces, ACROSS_CONCURRENCY, (namespace) => fetchObjects(ctx, resource, undefined, namespace));
  return lists.flat();
}

function describeOne(resource: Resource, now: number): (o: unknown) => string {
  switch (resource) {
    case 'clusterresourcequotas':
      return (o) => describeClusterQuota(o as ClusterQuotaObject, now);
    case 'limitranges':
      return (o) => describeLimitRange(o as LimitRangeObject);
    default:
      // A HierarchicalResourceQuota has a ResourceQuota's spec.hard and status.hard/used.
      return (o) => describeQuota(o as QuotaObject);
  }
}

function tableOf(resource: Resource, items: unknown[], now: number, options: TableOptions): string {
  if (resource === 'limitranges') return limitRangeTable(items as LimitRangeObject[], options);
  if (resource === 'clusterresourcequotas') return quotaTable((items as ClusterQuotaObject[]).map(asQuota), now);
  return quotaTable(items as QuotaObject[], now, options);
}

/**
 * `get namespaces`: every namespace the ledger holds, with how many quotas it has and the
 * tightest of their resources; with a NAME, that one (NotFound, exit 4, when the ledger holds
 * nothing of it). Not the Namespace objects `apply` writes (their labels): those are read with
 * `-o yaml` of the API's GET /v1/namespaces/{name}.
 */
async function getNamespaces(ctx: Context): Promise<ExitCode> {
  const [first, ...rest] = ctx.args;
  const slash = first?.indexOf('/') ?? -1;
  const name = slash >= 0 ? first?.slice(slash + 1) : rest.shift();
  if (name === '') throw new UsageError(`${first ?? ''}: the name after / is empty`);
  if (rest.length > 0) throw new UsageError(`one name at a time: unexpected ${JSON.stringify(rest[0])}`);
  let items = await namespaceSummaries(ctx);
  if (name !== undefined) {
    items = items.filter((s) => s.namespace === name);
    if (items.length === 0) throw new ApiError(404, 'NotFound', `namespaces "${name}" not found`, undefined);
  }
  if (ctx.output === 'json' || ctx.output === 'yaml') {
    print(ctx, name !== undefined ? items[0] : asList(items), () => '');
    return EXIT.ok;
  }
  if (items.length === 0) {
    ctx.io.stderr('No resources found\n');
    return EXIT.ok;
  }
  if (ctx.output === 'name') ctx.io.stdout(items.map((s) => `namespace/${s.namespace}\n`).join(''));
  else ctx.io.stdout(namespacesTable(items));
  return EXIT.ok;
}

function show(command: 'get' | 'describe') {
  return async (ctx: Context): Promise<ExitCode> => {
    const type = (ctx.args[0] ?? '').split('/')[0]?.toLowerCase() ?? '';
    if (command === 'get' && NAMESPACE_TYPES.has(type)) return getNamespaces(ctx);
    const { resource, name } = resourceAndName(command, ctx.args);
    // -A means nothing for a cluster-scoped kind, as in kubectl.
    const across = ctx.flags['all-namespaces'] === true && !CLUSTER_SCOPED.has(resource);
    if (across && name !== undefined) throw new UsageError('a resource cannot be retrieved by name across all namespaces');
    const items = across ? await fetchAcross(ctx, resource) : await fetchObjects(ctx, resource, name);
    if (ctx.output === 'json' || ctx.output === 'yaml') {
      print(ctx, name !== undefined ? items[0] : asList(items), () => '');
      return EXIT.ok;
    }
    if (items.length === 0) {
      // kubectl says so on stderr: stdout stays a (empty) table for scripts.
      ctx.io.stderr(
        CLUSTER_SCOPED.has(resource) || across ? 'No resources found\n' : `No resources found in ${ctx.namespace} namespace.\n`,
      );
      return EXIT.ok;
    }
    if (ctx.output === 'name') {
      // By the resource asked for, not the items' kind: list items need not carry one.
      const names = items
        .map((o) => (o as { metadata?: { name?: unknown } } | undefined)?.metadata?.name)
        .filter((n): n is string => typeof n === 'string');
      ctx.io.stdout(names.map((n) => `${NAME_PREFIX[resource]}/${n}\n`).join(''));
      return EXIT.ok;
    }
    if (command === 'describe') {
      ctx.io.stdout(joinDescriptions(items.map(describeOne(resource, ctx.now()))));
      if (resource === 'resourcequotas' && !across) ctx.io.stdout(await unsettledLine(ctx));
    } else ctx.io.stdout(tableOf(resource, items, ctx.now(), { allNamespaces: across }));
    return EXIT.ok;
  };
}

/**
 * After a namespace's quotas, the webhook reservations no reconcile has settled: they
 * count in Used above although nothing shows their objects exist. Nothing when there are none,
 * or when the caller may not read them (a token without the auditor role).
 */
async function unsettledLine(ctx: Context): Promise<string> {
  const answer = await ctx.client
    .call<{ items?: { resource: string; count: number }[] }>('GET', namespacePath(ctx.namespace, 'usage', 'unsettled'))
    .catch(() => undefined);
  const items = answer?.body?.items ?? [];
  if (items.length === 0) return '';
  const parts = items.map((u) => `${u.resource} ${u.count}`).join(', ');
  return `\nUnsettled:    ${parts} (webhook reservations never committed nor released: no inventory lists the kind, or no reconciler runs; see CUSTOM_RESOURCES)\n`;
}

export const getCommand: Command = {
  name: 'get',
  summary: 'list quotas, limit ranges, quotas over several namespaces or namespaces, or show one',
  synopsis: 'get quota|limitrange|clusterresourcequota|hrq|namespace [NAME] [-n NS | -A] [-o table|json|yaml|name]',
  description: [
    "Prints kubectl's columns: for quotas NAME, AGE, REQUEST and LIMIT, where REQUEST lists every",
    'resource but limits.* and LIMIT the limits.* ones, each as `resource: used/hard`; for limit',
    'ranges NAME and CREATED AT. `quota` may also be spelled resourcequota(s), `limitrange` as',
    "limitranges or limits, and `quota/NAME` works too. With -o json or yaml it prints the server's",
    'object, or a List of them (status.used comes from the projection; its freshness is in the',
    'quota-ledger.io/ annotations). clusterresourcequota (clusterquota) is cluster-scoped, -n does',
    'not apply, and its REQUEST/LIMIT are status.total over every namespace it covers;',
    "hierarchicalresourcequota (hrq) is HNC's, in the namespace at the top of its subtree.",
    'With -o name: one line per object as kubectl prints them (resourcequota/compute,',
    'clusterresourcequota.quota.openshift.io/acme), for scripts.',
    '-A (--all-namespaces) lists quotas, limit ranges or hrqs of every namespace the ledger holds,',
    'NAMESPACE first; it reads the namespaces (admin or auditor token, not limited to namespaces)',
    "and then each one's list. namespace (ns, namespaces): every namespace the ledger holds, with",
    'QUOTAS (how many) and TIGHTEST (the resource closest to its hard limit, quota: resource',
    'used/hard); -o json or yaml prints those entries. -n defaults to the namespace of the',
    'kubeconfig context in use (--context, --kubeconfig), else "default", as in kubectl.',
  ].join('\n'),
  flags: ['namespace', 'all-namespaces'],
  examples: [
    'quotactl get quota -n team-a',
    'quotactl get quota compute -n team-a -o yaml',
    'quotactl get limitrange -n team-a',
    'quotactl get quota -A',
    'quotactl get namespaces',
    'quotactl get clusterresourcequota',
    'quotactl get quota -n team-a -o name',
  ],
  needsServer: true,
  outputs: ['table', 'json', 'yaml', 'name'],
  run: show('get'),
};

export const describeCommand: Command = {
  name: 'describe',
  summary: 'show quotas or limit ranges as kubectl describe does, cluster quotas as oc does',
  synopsis: 'describe quota|limitrange|clusterresourcequota|hrq [NAME] [-n NS]',
  description: [
    'For a quota: Name, Namespace, its Scopes with what each means, then the Resource / Used / Hard',
    'table, resources in name order. For a limit range: the Type / Resource / Min / Max / Default',
    'Request / Default Limit / Max Limit/Request Ratio table, `-` where an item sets nothing.',
    'Without NAME, every one in the namespace, separated as kubectl separates them. A',
    'ClusterResourceQuota reads as `oc describe` prints it: Name, Created, Labels, Annotations, the',
    'Namespace Selector (the namespaces it covers now), Label Selector, AnnotationSelector, then',
    "Resource / Used / Hard over all of them. -A describes every namespace's (without the",
    "Unsettled line that -n NS adds under a namespace's quotas).",
  ].join('\n'),
  flags: ['namespace', 'all-namespaces'],
  examples: [
    'quotactl describe quota -n team-a',
    'quotactl describe limitrange defaults -n team-a',
    'quotactl describe clusterresourcequota acme',
    'quotactl describe quota -A',
  ],
  needsServer: true,
  run: show('describe'),
};
