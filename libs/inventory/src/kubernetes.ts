import type { GroupResource } from '@quota/domain';
import { InventoryError, type ClusterNamespace, type Inventory, type InventorySource, type NamespaceListing } from './inventory.js';
import { discoverKinds, mergeKinds } from './discovery.js';
import { watchKind } from './kube-watch.js';
import { watchDiscoveredKinds } from './watch-kinds.js';
import { checkResources, formatResource, kindsWith, needsWholeObject, type KnownKind } from './kinds.js';
import { callDeadline, DEFAULT_MAX_BYTES, DEFAULT_MAX_OBJECTS, DEFAULT_TIMEOUT_MS, messageOf, positiveInteger } from './limits.js';
import { isRecord, toInventoryObjects } from './objects.js';
import { describeStatus, jsonOf, loadKubeConfig, send, serverOf, type Listing } from './kube-requests.js';

export interface KubernetesInventoryOptions {
  /** A kubeconfig file. Without it and without `inCluster`: $KUBECONFIG, then ~/.kube/config. */
  readonly kubeconfigPath?: string;
  /** Use the pod's service account (running inside the cluster). */
  readonly inCluster?: boolean;
  /**
   * What to list. Default: every well-known kind (DEFAULT_RESOURCES), the custom resources, and
   * every other namespaced resource the API server's discovery says it serves and can list and
   * watch (discovery.ts), so that any `count/<resource>.<group>` is settled.
   */
  readonly resources?: readonly GroupResource[];
  /** How long one discovery of the served resources is reused, in milliseconds. Default 5 minutes. */
  readonly discoveryTtlMs?: number;
  /** Custom resources to map besides the known kinds (CUSTOM_RESOURCES); with no `resources`, they are covered too. */
  readonly customKinds?: readonly KnownKind[];
  /** Objects per page (`limit`); each list follows `continue` to the end. Default 500. */
  readonly pageSize?: number;
  /** Per request (one page), in milliseconds. Default 10 s. */
  readonly timeoutMs?: number;
  /** Objects in one listing, all resources together. Default 50,000. */
  readonly maxObjects?: number;
  /** Body of one page, in bytes. Default 64 MiB. */
  readonly maxBytes?: number;
}

export const DEFAULT_PAGE_SIZE = 500;
export const DEFAULT_DISCOVERY_TTL_MS = 5 * 60_000;

/** The metadata-only form of a list (and of a watch): items carry apiVersion, kind and metadata, nothing else. */
export const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

const SOURCE = 'kubernetes';

/** The list path of a kind in a namespace: `/api/v1/namespaces/ns/pods`, `/apis/apps/v1/namespaces/ns/deployments`. */
export function listPath(known: KnownKind, namespace: string): string {
  const root = known.groupResource.group === '' ? `/api/${known.apiVersion}` : `/apis/${known.apiVersion}`;
  return `${root}/namespaces/${encodeURIComponent(namespace)}/${known.groupResource.resource}`;
}

const NAMESPACE_KIND: KnownKind = { kind: 'Namespace', apiVersion: 'v1', groupResource: { group: '', resource: 'namespaces' } };
const NAMESPACES_PATH = '/api/v1/namespaces';

/** A listed Namespace's name, labels and annotations, or why it cannot be read. */
function clusterNamespaceOf(item: unknown): ClusterNamespace | string {
  const metadata = isRecord(item) && isRecord(item['metadata']) ? item['metadata'] : undefined;
  const name = metadata?.['name'];
  if (typeof name !== 'string' || name === '') return 'a Namespace without metadata.name';
  const stringMap = (value: unknown): Record<string, string> | undefined =>
    isRecord(value) && Object.values(value).every((v) => typeof v === 'string') ? (value as Record<string, string>) : undefined;
  const labels = stringMap(metadata?.['labels']);
  const annotations = stringMap(metadata?.['annotations']);
  if (metadata?.['labels'] !== undefined && !labels) return `Namespace ${name}: metadata.labels is not a map of strings`;
  if (metadata?.['annotations'] !== undefined && !annotations) return `Namespace ${name}: metadata.annotations is not a map of strings`;
  const resourceVersion =
    typeof metadata?.['resourceVersion'] === 'string' && metadata['resourceVersion'] !== '' ? metadata['resourceVersion'] : undefined;
  return { name, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}), ...(resourceVersion ? { resourceVersion } : {}) };
}

/** A paged list outlived its snapshot: the continue token's resourceVersion was compacted (410). */
class ContinueExpired extends InventoryError {}

/** A discovered kind this source is forbidden to list (403): left out of the listing's covers. */
class Forbidden extends InventoryError {}
const UNREADABLE = Symbol('unreadable');

/** Whether a kind is read metadata-only: every charged kind whose charge is one per object (kinds.ts). */
const metadataOnly = (known: KnownKind): boolean => known !== NAMESPACE_KIND && !needsWholeObject(known.groupResource);

/** The served kinds, discovered at most once per `ttlMs` (concurrent listings share one discovery; a failed one is not kept). */
function discoveryCache(ctx: Listing, ttlMs: number): (signal: AbortSignal) => Promise<readonly KnownKind[]> {
  let kept: { at: number; kinds: Promise<readonly KnownKind[]> } | undefined;
  return (signal) => {
    if (kept && Date.now() - kept.at < ttlMs) return kept.kinds;
    const kinds = discoverKinds((path) => getDocument(ctx, path, signal));
    const entry = { at: Date.now(), kinds };
    kept = entry;
    kinds.catch(() => {
      if (kept === entry) kept = undefined;
    });
    return kinds;
  };
}

/** One discovery document (`/api/v1`, `/apis`, `/apis/GROUP/VERSION`), or null when the server answers 404. */
async function getDocument(ctx: Listing, path: string, signal: AbortSignal): Promise<unknown> {
  const url = new URL(`${ctx.server}${path}`);
  const fail = (message: string, cause?: unknown) =>
    new InventoryError(`kubernetes: discovery: GET ${url.pathname}: ${message}`, SOURCE, cause === undefined ? undefined : { cause });
  const response = await send(ctx, url, callDeadline(ctx.timeoutMs, signal), fail);
  if (response.status === 404) return null;
  if (response.status !== 200) throw fail(describeStatus(response));
  return jsonOf(response, fail);
}

/**
 * Lists objects through the Kubernetes API: one paged list per covered resource, following
 * `continue` to the end (a 410 on a continue token fails the listing; the next reconcile
 * starts over). Needs RBAC `list` on those resources in the namespaces it reconciles.
 *
 * client-node's KubeConfig supplies the server, TLS material, proxy and credentials (token,
 * exec plugin, OIDC, the in-cluster token file). The request itself is plain node:http(s)
 * on the raw JSON: client-node's typed models drop every field they do not know and turn
 * timestamps into Dates, and adoption must charge the object as the API server stored it.
 * Going raw also gives each request a real abort and a byte limit.
 */
export function createKubernetesInventory(options: KubernetesInventoryOptions = {}): InventorySource {
  const all = kindsWith(options.customKinds);
  const kinds = checkResources(SOURCE, options.resources ?? all.map((k) => k.groupResource), all);
  const covers = kinds.map((k) => k.groupResource);
  const pageSize = positiveInteger(SOURCE, 'pageSize', options.pageSize, DEFAULT_PAGE_SIZE);
  const timeoutMs = positiveInteger(SOURCE, 'timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS);
  const maxObjects = positiveInteger(SOURCE, 'maxObjects', options.maxObjects, DEFAULT_MAX_OBJECTS);
  const maxBytes = positiveInteger(SOURCE, 'maxBytes', options.maxBytes, DEFAULT_MAX_BYTES);
  const config = loadKubeConfig(options);
  const ctx: Listing = { server: serverOf(config), config, pageSize, timeoutMs, maxObjects, maxBytes };
  const discoveryTtlMs = positiveInteger(SOURCE, 'discoveryTtlMs', options.discoveryTtlMs, DEFAULT_DISCOVERY_TTL_MS);
  const discovery = options.resources === undefined ? discoveryCache(ctx, discoveryTtlMs) : undefined;
  // Discovered kinds answered 403, by resource: not asked again (in any namespace) for a discovery TTL; they stay uncovered.
  const forbidden = new Map<string, number>();

  return {
    kind: SOURCE,
    covers,
    list: (namespace: string, signal?: AbortSignal) =>
      listNamespace({ ctx, kinds, all, discovery, forbidden, discoveryTtlMs }, namespace, signal),
    async namespaces(signal?: AbortSignal): Promise<NamespaceListing> {
      const versions: string[] = [];
      const items = await listResource(
        ctx,
        NAMESPACES_PATH,
        'namespaces',
        NAMESPACE_KIND,
        signal ?? new AbortController().signal,
        { objects: 0 },
        versions,
      );
      if (items === UNREADABLE) throw new InventoryError('kubernetes: namespaces: forbidden', SOURCE);
      const namespaces = items.map((item) => {
        const namespace = clusterNamespaceOf(item);
        if (typeof namespace === 'string') throw new InventoryError(`kubernetes: namespaces: ${namespace}`, SOURCE);
        return namespace;
      });
      return { items: namespaces, ...(versions[0] ? { resourceVersion: versions[0] } : {}) };
    },
    namespace: (name: string, signal?: AbortSignal) => getNamespace(ctx, name, signal),
    async watchSettlements(onSignal, signal, onState) {
      // The kinds as discovered now, and again every discovery TTL (a CRD installed later is watched, one removed is not);
      // while discovery fails, what is watched stays (at first, the fixed kinds: the periodic pass covers the rest).
      await watchDiscoveredKinds(signal, {
        fixed: kinds,
        ...(discovery ? { discover: discovery } : {}),
        everyMs: discoveryTtlMs,
        watch: (kind, stop) => watchKind(ctx, kind, stop, onSignal, onState),
        onChange: ({ started, stopped }) => {
          for (const kind of started) onState?.({ resource: formatResource(kind.groupResource), state: 'started' });
          for (const kind of stopped) onState?.({ resource: formatResource(kind.groupResource), state: 'stopped' });
        },
        onDiscoveryFailed: (error) => onState?.({ resource: 'discovery', state: 'failed', error: messageOf(error) }),
      });
    },
    close: async () => undefined,
  };
}

/** One namespace's listing: what createKubernetesInventory's sources share between listings. */
interface NamespaceListingState {
  readonly ctx: Listing;
  readonly kinds: readonly KnownKind[];
  readonly all: readonly KnownKind[];
  readonly discovery: ((signal: AbortSignal) => Promise<readonly KnownKind[]>) | undefined;
  /** Discovered kinds answered 403, by resource, until when they are not asked again. */
  readonly forbidden: Map<string, number>;
  readonly discoveryTtlMs: number;
}

/** Every covered and discovered kind of one namespace, listed at once; a forbidden discovered kind is left uncovered. */
async function listNamespace(state: NamespaceListingState, namespace: string, signal?: AbortSignal): Promise<Inventory> {
  const { ctx, kinds, all, discovery, forbidden, discoveryTtlMs } = state;
  const isForbidden = (known: KnownKind): boolean => (forbidden.get(formatResource(known.groupResource)) ?? 0) > Date.now();
  // The first failure stops the other resources' requests: the listing is lost anyway.
  const listing = new AbortController();
  const both = signal ? AbortSignal.any([signal, listing.signal]) : listing.signal;
  const counted = { objects: 0 };
  let first: unknown;
  try {
    const discovered = discovery ? await discovery(both) : [];
    const listed = mergeKinds(kinds, discovered).filter((known) => kinds.includes(known) || !isForbidden(known));
    const mapped = mergeKinds(all, discovered);
    const lists = await Promise.all(
      listed.map((known) => {
        // A discovered kind this source may not read (RBAC) is left uncovered, and reported as such, not failed.
        const optional = !kinds.includes(known);
        return listResource(ctx, listPath(known, namespace), `namespace ${namespace}`, known, both, counted, [], optional).catch(
          (error: unknown) => {
            first ??= error;
            listing.abort();
            throw error;
          },
        );
      }),
    );
    listed.forEach(
      (known, index) => lists[index] === UNREADABLE && forbidden.set(formatResource(known.groupResource), Date.now() + discoveryTtlMs),
    );
    const listedCovers = listed.filter((_, index) => lists[index] !== UNREADABLE).map((k) => k.groupResource);
    const objects = lists.flatMap((list) => (list === UNREADABLE ? [] : list));
    return {
      namespace,
      covers: listedCovers,
      objects: toInventoryObjects(SOURCE, namespace, objects, listedCovers, ctx.maxObjects, mapped),
    };
  } catch (error) {
    const reported = first ?? error;
    if (reported instanceof InventoryError) throw reported;
    throw new InventoryError(`kubernetes: namespace ${namespace}: ${messageOf(reported)}`, SOURCE, { cause: reported });
  } finally {
    listing.abort();
  }
}

/** One page: the raw list, or an InventoryError saying why not. */
async function page(
  ctx: Listing,
  path: string,
  scope: string,
  known: KnownKind,
  token: string | undefined,
  signal: AbortSignal,
  limit: number | undefined,
  optional = false,
): Promise<{ apiVersion?: unknown; items: unknown[]; next?: string; resourceVersion?: string }> {
  const url = new URL(`${ctx.server}${path}`);
  if (limit !== undefined) url.searchParams.set('limit', String(limit));
  if (token !== undefined) url.searchParams.set('continue', token);
  const what = `GET ${url.pathname}${token === undefined ? '' : ' (continued)'}`;
  const fail = (message: string, cause?: unknown) =>
    new InventoryError(`kubernetes: ${scope}: ${what}: ${message}`, SOURCE, cause === undefined ? undefined : { cause });
  const call = callDeadline(ctx.timeoutMs, signal);
  const response = await send(ctx, url, call, fail, metadataOnly(known) ? METADATA_ACCEPT : 'application/json');
  if (response.status === 403 && optional && token === undefined) throw new Forbidden(fail(describeStatus(response)).message, SOURCE);
  // A namespaced list answers 404 only when the cluster does not serve the resource at all
  // (an API group it lacks, e.g. resource.k8s.io/v1 before Kubernetes 1.34): no such object
  // can exist, and so none can be missing from the listing.
  if (response.status === 404 && token === undefined && known !== NAMESPACE_KIND) return { items: [] };
  if (response.status !== 200) {
    const status = describeStatus(response);
    if (response.status === 410 && token !== undefined)
      throw new ContinueExpired(fail(`the continue token expired before the list was read to its end (${status})`).message, SOURCE);
    throw fail(status);
  }
  const body = jsonOf(response, fail);
  if (!isRecord(body)) throw fail('the answer is not a list');
  // An empty list may come back as `"items": null`.
  const items = body['items'] ?? [];
  if (!Array.isArray(items)) throw fail('the answer has no "items" array');
  // A server that ignored the metadata-only Accept answers the kind's own list: its items are cut down to their metadata below.
  const listKinds = metadataOnly(known) ? ['PartialObjectMetadataList', `${known.kind}List`] : [`${known.kind}List`];
  if (body['kind'] !== undefined && !listKinds.includes(String(body['kind'])))
    throw fail(`expected a ${listKinds.join(' or ')}, got ${String(body['kind'])}`);
  const metadata = isRecord(body['metadata']) ? body['metadata'] : {};
  const next = typeof metadata['continue'] === 'string' && metadata['continue'] !== '' ? metadata['continue'] : undefined;
  if (next !== undefined && next === token) throw fail('the server answered the same continue token again');
  const resourceVersion =
    typeof metadata['resourceVersion'] === 'string' && metadata['resourceVersion'] !== '' ? metadata['resourceVersion'] : undefined;
  return {
    apiVersion: body['apiVersion'],
    items,
    ...(next === undefined ? {} : { next }),
    ...(resourceVersion ? { resourceVersion } : {}),
  };
}

/**
 * Every object of one resource, page after page; `counted` holds the listing's running total.
 * `versions` gets each page's list resourceVersion (all pages of one list share the first's
 * snapshot). A list whose continue token expired (410: etcd compacted its snapshot while the
 * pages were read) is read again whole, in one answer, as client-go's pager does.
 */
async function listResource(
  ctx: Listing,
  path: string,
  scope: string,
  known: KnownKind,
  signal: AbortSignal,
  counted: { objects: number },
  versions: string[] = [],
  optional = false,
): Promise<unknown[] | typeof UNREADABLE> {
  const before = { objects: counted.objects, versions: versions.length };
  try {
    return await listPages(ctx, path, scope, known, signal, counted, versions, ctx.pageSize, optional);
  } catch (error) {
    if (error instanceof Forbidden) return UNREADABLE;
    if (!(error instanceof ContinueExpired)) throw error;
    counted.objects = before.objects;
    versions.length = before.versions;
    return listPages(ctx, path, scope, known, signal, counted, versions, undefined);
  }
}

/** One list from its first page (of `limit` objects, or all of them) to its last. */
async function listPages(
  ctx: Listing,
  path: string,
  scope: string,
  known: KnownKind,
  signal: AbortSignal,
  counted: { objects: number },
  versions: string[],
  limit: number | undefined,
  optional = false,
): Promise<unknown[]> {
  const objects: unknown[] = [];
  let token: string | undefined;
  do {
    const list = await page(ctx, path, scope, known, token, signal, limit, optional);
    if (list.resourceVersion) versions.push(list.resourceVersion);
    counted.objects += list.items.length;
    if (counted.objects > ctx.maxObjects) {
      throw new InventoryError(`kubernetes: ${scope}: more than the ${ctx.maxObjects} objects a listing may hold`, SOURCE);
    }
    // List items carry no apiVersion or kind: the list says which they are. A metadata-only
    // list is a meta.k8s.io list of PartialObjectMetadata: its items are the kind asked for.
    if (metadataOnly(known)) {
      for (const item of list.items)
        objects.push(isRecord(item) ? { apiVersion: known.apiVersion, kind: known.kind, metadata: item['metadata'] } : item);
    } else {
      const apiVersion = typeof list.apiVersion === 'string' ? list.apiVersion : known.apiVersion;
      for (const item of list.items) objects.push(isRecord(item) ? { apiVersion, kind: known.kind, ...item } : item);
    }
    token = list.next;
  } while (token !== undefined);
  return objects;
}

/** The Namespace object by name (null when there is none). */
async function getNamespace(ctx: Listing, name: string, signal?: AbortSignal): Promise<ClusterNamespace | null> {
  const url = new URL(`${ctx.server}${NAMESPACES_PATH}/${encodeURIComponent(name)}`);
  const call = callDeadline(ctx.timeoutMs, signal ?? new AbortController().signal);
  const fail = (message: string, cause?: unknown) =>
    new InventoryError(`kubernetes: GET ${url.pathname}: ${message}`, SOURCE, cause === undefined ? undefined : { cause });
  const response = await send(ctx, url, call, fail);
  if (response.status === 404) return null;
  if (response.status !== 200) throw fail(describeStatus(response));
  const body = jsonOf(response, fail);
  const namespace = clusterNamespaceOf(body);
  if (typeof namespace === 'string') throw fail(namespace);
  return namespace;
}
