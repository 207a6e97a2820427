import type { GroupResource } from '@quota/domain';
import { InventoryError, type Inventory, type InventorySource } from './inventory.js';
import { checkResources, kindsWith, type KnownKind } from './kinds.js';
import { callDeadline, DEFAULT_MAX_BYTES, DEFAULT_MAX_OBJECTS, DEFAULT_TIMEOUT_MS, messageOf, positiveInteger } from './limits.js';
import { isRecord, toInventoryObjects } from './objects.js';

export interface HttpInventoryOptions {
  /** Base URL (http or https); the source GETs `{url}/namespaces/{namespace}/objects`. */
  readonly url: string;
  /** Sent as `Authorization: Bearer <token>` when set. */
  readonly token?: string;
  /** What the endpoint lists completely; default every well-known kind (DEFAULT_RESOURCES). */
  readonly resources?: readonly GroupResource[];
  /** Custom resources to map besides the known kinds (CUSTOM_RESOURCES); with no `resources`, they are covered too. */
  readonly customKinds?: readonly KnownKind[];
  /** The whole request, body included, in milliseconds. Default 10 s. */
  readonly timeoutMs?: number;
  /** Largest body accepted, in bytes. Default 64 MiB. */
  readonly maxBytes?: number;
  /** Objects in one answer. Default 50,000. */
  readonly maxObjects?: number;
}

const SOURCE = 'http';

/**
 * Lists objects from a platform endpoint. The contract:
 *
 *     GET {url}/namespaces/{encodeURIComponent(namespace)}/objects
 *     Accept: application/json
 *     Authorization: Bearer {token}                      (when a token is configured)
 *
 *     200 {"apiVersion":"v1","kind":"List","items":[…]}
 *
 * `items` holds every object of the namespace whole, each with apiVersion, kind and metadata
 * (name, namespace, uid); objects of kinds the source does not cover may be present and are
 * skipped. The answer is one page: a list with `metadata.continue` is incomplete and refused,
 * as is any other status (redirects are not followed), a body that is not such a list, or an
 * object without a uid.
 */
export function createHttpInventory(options: HttpInventoryOptions): InventorySource {
  const all = kindsWith(options.customKinds);
  const covers = checkResources(SOURCE, options.resources ?? all.map((k) => k.groupResource), all).map((k) => k.groupResource);
  const timeoutMs = positiveInteger(SOURCE, 'timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS);
  const maxBytes = positiveInteger(SOURCE, 'maxBytes', options.maxBytes, DEFAULT_MAX_BYTES);
  const maxObjects = positiveInteger(SOURCE, 'maxObjects', options.maxObjects, DEFAULT_MAX_OBJECTS);
  const base = baseUrl(options.url);
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
  };

  return {
    kind: SOURCE,
    covers,
    async list(namespace: string, signal?: AbortSignal): Promise<Inventory> {
      const url = `${base}/namespaces/${encodeURIComponent(namespace)}/objects`;
      // The token never goes into a message; the URL carries none.
      const fail = (message: string, cause?: unknown) =>
        new InventoryError(`http: namespace ${namespace}: GET ${url}: ${message}`, SOURCE, cause === undefined ? undefined : { cause });
      const call = callDeadline(timeoutMs, signal);
      let text: string;
      try {
        // A redirect would carry the listing somewhere the configuration never named.
        const response = await fetch(url, { headers, redirect: 'manual', signal: call.signal });
        if (response.status !== 200) {
          await response.body?.cancel();
          throw fail(`answered HTTP ${response.status}`);
        }
        text = await readText(response, maxBytes, fail);
      } catch (error) {
        if (error instanceof InventoryError) throw error;
        throw fail(call.why() ?? messageOf(error), error);
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (error) {
        throw fail('the answer is not JSON', error);
      }
      if (!isRecord(body) || !Array.isArray(body['items'])) throw fail('the answer is not a list with an "items" array');
      const metadata = isRecord(body['metadata']) ? body['metadata'] : {};
      if (typeof metadata['continue'] === 'string' && metadata['continue'] !== '')
        throw fail('the answer is one page of several (metadata.continue is set); the endpoint must answer the whole namespace');
      return { namespace, covers, objects: toInventoryObjects(SOURCE, namespace, body['items'], covers, maxObjects, all) };
    },
    close: async () => undefined,
  };
}

function baseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`http inventory: url ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new Error(`http inventory: url must use http: or https:, got ${parsed.protocol}`);
  if (parsed.search || parsed.hash)
    throw new Error('http inventory: url must not carry a query or fragment: the source appends /namespaces/{namespace}/objects');
  return parsed.toString().replace(/\/+$/, '');
}

/** The body as text, refused as soon as it passes `maxBytes` (declared or streamed). */
async function readText(response: Response, maxBytes: number, fail: (message: string) => InventoryError): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw fail(`the answer of ${declared} bytes is over the ${maxBytes}-byte limit`);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw fail(`the answer is over the ${maxBytes}-byte limit`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
