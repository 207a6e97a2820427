import type { GroupResource } from '@quota/domain';
import {
  InventoryError,
  type CacheState,
  type ClusterNamespace,
  type Inventory,
  type InventorySource,
  type NamespaceListing,
} from './inventory.js';
import { KindCaches } from './kube-cache.js';
import { discoverKinds, mergeKinds } from './discovery.js';
import { watchKind } from './kube-watch.js';
import { watchDiscoveredKinds } from './watch-kinds.js';
import { checkResources, formatResource, kindsWith, type KnownKind } from './kinds.js';
import { callDeadline, DEFAULT_MAX_BYTES, DEFAULT_MAX_OBJECTS, DEFAULT_TIMEOUT_MS, messageOf, positiveInteger } from './limits.js';
import { isRecord, toInventoryObjects } from './objects.js';
import { describeStatus, jsonOf, loadKubeConfig, send, serverOf, type Listing } from './kube-requests.js';
import { ContinueExpired, Forbidden, metadataOnly, NAMESPACE_KIND, page } from './kube-list-page.js';

export { METADATA_ACCEPT } from './kube-list-page.js';

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
  /**
   * List from watch-fed caches, one per kind across the cluster (kube-cache.ts): one LIST per kind
   * at start, then WATCH; no request per namespace listing. Default true; false lists every kind
   * of the namespace per listing (and watches only for the settle signals).
   */
  readonly cache?: boolean;
  /** Objects one kind's cache may hold (default 500,000); past it the cache is emptied and fails closed. */
  readonly cacheMaxObjects?: number;
  /** Bytes (of the kept facts) one kind's cache may hold (default 256 MiB). */
  readonly cacheMaxBytes?: number;
  /** How long a listing waits for a cache being filled, in ms (default 60 s). */
  readonly cacheSyncWaitMs?: number;
  /** Each kind cache's state changes (for the log). */
  readonly onCacheState?: (state: CacheState) => void;
}

export const DEFAULT_CACHE_MAX_OBJECTS = 500_000;
export const DEFAULT_CACHE_MAX_BYTES = 256 * 1024 * 1024;
export const DEFAULT_CACHE_SYNC_WAIT_MS = 60_000;

export const DEFAULT_PAGE_SIZE = 500;
export const DEFAULT_DISCOVERY_TTL_MS = 5 * 60_000;

const SOURCE = 'kubernetes';

/** The list path of a kind in a namespace: `/api/v1/namespaces/ns/pods`, `/apis/apps/v1/namespaces/ns/deployments`. */
export function listPath(known: KnownKind, namespace: string): string {
  const root = known.groupResource.group === '' ? `/api/${known.apiVersion}` : `/apis/${known.apiVersion}`;
  return `${root}/namespaces/${encodeURIComponent(namespace)}/${known.groupResource.resource}`;
}

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

const UNREADABLE = Symbol('unreadable');

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
  const cached = options.cache === false ? undefined : kindCaches(ctx, options, kinds, all, discovery, discoveryTtlMs);

  const source: InventorySource = {
    kind: SOURCE,
    covers,
    list: (namespace: string, signal?: AbortSignal) =>
      listNamespace({ ctx, kinds, all, discovery, forbidden, discoveryTtlMs }, namespace, signal),
    async namespaces(signal?: AbortSignal): Promise<NamespaceListing> {
      const versions: string[] = [];
      // Each page's Namespaces are cut to what the ledger records as they come (their name, labels,
      // annotations and version), never held whole: 10,000 of them with their managedFields were most
      // of a periodic pass's heap.
      const keep = (item: unknown): ClusterNamespace => {
        const namespace = clusterNamespaceOf(item);
        if (typeof namespace === 'string') throw new InventoryError(`kubernetes: namespaces: ${namespace}`, SOURCE);
        return namespace;
      };
      const namespaces = await listResource(
        ctx,
        NAMESPACES_PATH,
        'namespaces',
        NAMESPACE_KIND,
        signal ?? new AbortController().signal,
        { objects: 0 },
        versions,
        false,
        keep,
      );
      if (namespaces === UNREADABLE) throw new InventoryError('kubernetes: namespaces: forbidden', SOURCE);
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
  return cached
    ? {
        ...source,
        list: (namespace) => cached.list(namespace),
        watchSettlements: (onSignal, signal, onState) => cached.watch(onSignal, signal, onState),
        cacheStates: () => cached.states(),
        close: () => cached.close(),
      }
    : source;
}

/** The watch-fed caches of the covered and discovered kinds, with their ceilings. */
function kindCaches(
  ctx: Listing,
  options: KubernetesInventoryOptions,
  fixed: readonly KnownKind[],
  all: readonly KnownKind[],
  discover: ((signal: AbortSignal) => Promise<readonly KnownKind[]>) | undefined,
  discoveryTtlMs: number,
): KindCaches {
  return new KindCaches(ctx, {
    fixed,
    all,
    ...(discover ? { discover } : {}),
    discoveryTtlMs,
    maxObjects: positiveInteger(SOURCE, 'cacheMaxObjects', options.cacheMaxObjects, DEFAULT_CACHE_MAX_OBJECTS),
    maxBytes: positiveInteger(SOURCE, 'cacheMaxBytes', options.cacheMaxBytes, DEFAULT_CACHE_MAX_BYTES),
    syncWaitMs: positiveInteger(SOURCE, 'cacheSyncWaitMs', options.cacheSyncWaitMs, DEFAULT_CACHE_SYNC_WAIT_MS),
    ...(options.onCacheState ? { onState: options.onCacheState } : {}),
  });
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

/**
 * Every object of one resource, page after page; `counted` holds the listing's running total.
 * `versions` gets each page's list resourceVersion (all pages of one list share the first's
 * snapshot). A list whose continue token expired (410: etcd compacted its snapshot while the
 * pages were read) is read again whole, in one answer, as client-go's pager does.
 */
async function listResource<T = unknown>(
  ctx: Listing,
  path: string,
  scope: string,
  known: KnownKind,
  signal: AbortSignal,
  counted: { objects: number },
  versions: string[] = [],
  optional = false,
  keep: (object: unknown) => T = (object) => object as T,
): Promise<T[] | typeof UNREADABLE> {
  const before = { objects: counted.objects, versions: versions.length };
  try {
    return await listPages(ctx, path, scope, known, signal, counted, versions, ctx.pageSize, optional, keep);
  } catch (error) {
    if (error instanceof Forbidden) return UNREADABLE;
    if (!(error instanceof ContinueExpired)) throw error;
    counted.objects = before.objects;
    versions.length = before.versions;
    return listPages(ctx, path, scope, known, signal, counted, versions, undefined, false, keep);
  }
}

/** One list from its first page (of `limit` objects, or all of them) to its last: what `keep` makes of each object. */
async function listPages<T>(
  ctx: Listing,
  path: string,
  scope: string,
  known: KnownKind,
  signal: AbortSignal,
  counted: { objects: number },
  versions: string[],
  limit: number | undefined,
  optional: boolean,
  keep: (object: unknown) => T,
): Promise<T[]> {
  const objects: T[] = [];
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
        objects.push(keep(isRecord(item) ? { apiVersion: known.apiVersion, kind: known.kind, metadata: item['metadata'] } : item));
    } else {
      const apiVersion = typeof list.apiVersion === 'string' ? list.apiVersion : known.apiVersion;
      for (const item of list.items) objects.push(keep(isRecord(item) ? { apiVersion, kind: known.kind, ...item } : item));
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
