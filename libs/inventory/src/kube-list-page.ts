import { InventoryError } from './inventory.js';
import { needsWholeObject, type KnownKind } from './kinds.js';
import { callDeadline } from './limits.js';
import { isRecord } from './objects.js';
import { describeStatus, jsonOf, send, type Listing } from './kube-requests.js';

/**
 * One page of a Kubernetes list, checked: what the per-namespace listings (kubernetes.ts) and
 * the cluster-wide caches (kube-cache.ts) read, page after page, following `continue`.
 */

const SOURCE = 'kubernetes';

/** The metadata-only form of a list (and of a watch): items carry apiVersion, kind and metadata, nothing else. */
export const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

/** The Namespace kind: always read whole (its labels and annotations are what the ledger records). */
export const NAMESPACE_KIND: KnownKind = { kind: 'Namespace', apiVersion: 'v1', groupResource: { group: '', resource: 'namespaces' } };

/** A paged list outlived its snapshot: the continue token's resourceVersion was compacted (410). */
export class ContinueExpired extends InventoryError {}

/** A discovered kind this source is forbidden to list (403): left out of the listing's covers. */
export class Forbidden extends InventoryError {}
/** Whether a kind is read metadata-only: every charged kind whose charge is one per object (kinds.ts). */
export const metadataOnly = (known: KnownKind): boolean => known !== NAMESPACE_KIND && !needsWholeObject(known.groupResource);

/** One page as read: its items (without apiVersion and kind, as lists give them), where the list goes on, and its snapshot. */
export interface ListedPage {
  readonly apiVersion?: unknown;
  readonly items: unknown[];
  readonly next?: string;
  readonly resourceVersion?: string;
  /** The server does not serve the resource at all (404 on the first page). */
  readonly notServed?: true;
}

/** One page: the raw list, or an InventoryError saying why not. */
export async function page(
  ctx: Listing,
  path: string,
  scope: string,
  known: KnownKind,
  token: string | undefined,
  signal: AbortSignal,
  limit: number | undefined,
  optional = false,
): Promise<ListedPage> {
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
  if (response.status === 404 && token === undefined && known !== NAMESPACE_KIND) return { items: [], notServed: true };
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
