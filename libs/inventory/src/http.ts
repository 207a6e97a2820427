import type { GroupResource } from '@quota/domain';
import { InventoryError, type Inventory, type InventorySource } from './inventory.js';
import { DEFAULT_RESOURCES } from './kinds.js';
import { toInventoryObjects } from './objects.js';

export interface HttpInventoryOptions {
  /** Base URL: the source GETs `{url}/namespaces/{namespace}/objects`. */
  readonly url: string;
  readonly token?: string;
  readonly resources?: readonly GroupResource[];
  readonly timeoutMs?: number;
  /** Largest response accepted, in bytes. */
  readonly maxBytes?: number;
}

/**
 * Lists objects from a platform endpoint: `GET {url}/namespaces/{ns}/objects` answers a
 * Kubernetes-style `{"kind":"List","items":[…]}` of every object in the namespace, each with
 * apiVersion, kind and metadata (uid, name).
 */
export function createHttpInventory(options: HttpInventoryOptions): InventorySource {
  const covers = options.resources ?? DEFAULT_RESOURCES;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  const base = options.url.replace(/\/+$/, '');
  return {
    kind: 'http',
    covers,
    async list(namespace: string, signal?: AbortSignal): Promise<Inventory> {
      const url = `${base}/namespaces/${encodeURIComponent(namespace)}/objects`;
      const fail = (why: string, cause?: unknown): InventoryError => new InventoryError(`http: GET ${url}: ${why}`, 'http', cause === undefined ? undefined : { cause });
      const timeout = AbortSignal.timeout(timeoutMs);
      let text: string;
      try {
        const response = await fetch(url, {
          headers: { accept: 'application/json', ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
        if (response.status !== 200) throw fail(`answered ${response.status}`);
        const length = Number(response.headers.get('content-length') ?? 0);
        if (length > maxBytes) throw fail(`answer of ${length} bytes is over the ${maxBytes}-byte limit`);
        text = await readLimited(response, maxBytes, () => fail(`answer is over the ${maxBytes}-byte limit`));
      } catch (error) {
        if (error instanceof InventoryError) throw error;
        throw fail(timeout.aborted ? `no answer within ${timeoutMs} ms` : (error as Error).message, error);
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (error) {
        throw fail('answer is not JSON', error);
      }
      const items = (body as { items?: unknown } | null)?.items;
      if (!Array.isArray(items)) throw fail('answer has no "items" array');
      return { namespace, covers, objects: toInventoryObjects('http', namespace, items, covers) };
    },
    close: async () => undefined,
  };
}

async function readLimited(response: Response, maxBytes: number, tooLarge: () => Error): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
