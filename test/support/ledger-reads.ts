import type { LedgerStack } from './ledger-stack.js';

/**
 * What the end-to-end tests read back from our API (as its admin) and what they create with
 * kubectl: the ledger's events and usage, polled with a deadline (never a fixed sleep: the
 * machine is shared, and a reconcile takes what it takes).
 */

export interface LedgerEventView {
  readonly type: string;
  readonly position: string;
  readonly version: number;
  /** When it was recorded (RFC 3339). */
  readonly time: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each event type has its own payload
  readonly data: any;
}

/** Every event of the namespace's stream, in order. */
export async function ledgerEvents(stack: LedgerStack, namespace: string): Promise<LedgerEventView[]> {
  const events: LedgerEventView[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await stack.request('GET', `/v1/namespaces/${namespace}/events?limit=1000${after ? `&after=${after}` : ''}`);
    if (page.status !== 200) throw new Error(`events of ${namespace}: ${page.status} ${JSON.stringify(page.body)}`);
    events.push(...(page.body.items as LedgerEventView[]));
    if (!page.body.next) return events;
    after = page.body.next as string;
  }
}

/** Each quota's used, by quota name (the head: exact now). */
export async function usedOf(stack: LedgerStack, namespace: string): Promise<Record<string, Record<string, string>>> {
  const usage = await stack.request('GET', `/v1/namespaces/${namespace}/usage`);
  if (usage.status !== 200) throw new Error(`usage of ${namespace}: ${usage.status} ${JSON.stringify(usage.body)}`);
  return Object.fromEntries((usage.body.quotas as { name: string; used: Record<string, string> }[]).map((q) => [q.name, q.used]));
}

/** Polls `probe` until it answers something other than undefined (every 150 ms), or fails naming `what`. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/** Polls until `namespace`'s quota `quota` shows `expected` (each listed resource), and returns its used. */
export function untilUsed(
  stack: LedgerStack,
  namespace: string,
  quota: string,
  expected: Record<string, string>,
  timeoutMs?: number,
): Promise<Record<string, string>> {
  return eventually(
    `${namespace}/${quota} to use ${JSON.stringify(expected)}`,
    async () => {
      const used = (await usedOf(stack, namespace))[quota] ?? {};
      return Object.entries(expected).every(([resource, value]) => used[resource] === value) ? used : undefined;
    },
    timeoutMs,
  );
}

/** Defines a ResourceQuota in the ledger (the admin API), as `kubectl apply` would in a cluster. */
export async function defineQuota(stack: LedgerStack, namespace: string, name: string, hard: Record<string, string>): Promise<void> {
  const answer = await stack.request('PUT', `/v1/namespaces/${namespace}/resourcequotas/${name}`, {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name },
    spec: { hard },
  });
  if (answer.status !== 200 && answer.status !== 201)
    throw new Error(`quota ${namespace}/${name}: ${answer.status} ${JSON.stringify(answer.body)}`);
}

/** Waits for the namespace's first count (Counted after CountAwaited), so that its quotas enforce. */
export function untilCounted(stack: LedgerStack, namespace: string): Promise<true> {
  return eventually(`the first count of ${namespace}`, async () => {
    const events = await ledgerEvents(stack, namespace);
    const awaited = events.findLastIndex((e) => e.type === 'CountAwaited');
    return awaited === -1 || events.slice(awaited).some((e) => e.type === 'Counted') ? true : undefined;
  });
}

/** Waits until the reconciler has settled every reservation of the namespace (each committed or released). */
export function untilSettled(stack: LedgerStack, namespace: string, timeoutMs?: number): Promise<LedgerEventView[]> {
  return eventually(
    `every reservation of ${namespace} settled`,
    async () => {
      const events = await ledgerEvents(stack, namespace);
      const settled = new Set(
        events.filter((e) => e.type === 'Committed' || e.type === 'Released').map((e) => e.data.reservationId as string),
      );
      return events.every((e) => e.type !== 'Reserved' || settled.has(e.data.reservationId as string)) ? events : undefined;
    },
    timeoutMs,
  );
}

/** The events of one object (by uid) whose reservations they name: Reserved, then what settled each. */
export function eventsOfObject(events: readonly LedgerEventView[], uid: string): LedgerEventView[] {
  const reservations = new Set(
    events
      .filter((e) => (e.type === 'Reserved' || e.type === 'Adopted') && e.data.object?.uid === uid)
      .map((e) => e.data.reservationId as string),
  );
  return events.filter(
    (e) =>
      ((e.type === 'Reserved' || e.type === 'Adopted') && e.data.object?.uid === uid) || reservations.has(e.data?.reservationId as string),
  );
}

export interface PodOptions {
  readonly cpu?: string;
  readonly memory?: string;
  readonly labels?: Record<string, string>;
  readonly nodeName?: string;
  readonly generateName?: boolean;
}

/** A one-container Pod (the image is never pulled: there is no kubelet). */
export function pod(name: string, namespace: string, options: PodOptions = {}): string {
  const requests = { ...(options.cpu ? { cpu: options.cpu } : {}), ...(options.memory ? { memory: options.memory } : {}) };
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...(options.generateName ? { generateName: name } : { name }),
      namespace,
      ...(options.labels ? { labels: options.labels } : {}),
    },
    spec: {
      ...(options.nodeName ? { nodeName: options.nodeName } : {}),
      containers: [
        {
          name: 'app',
          image: 'registry.invalid/app:1',
          ...(Object.keys(requests).length ? { resources: { requests, limits: requests } } : {}),
        },
      ],
    },
  });
}

/** The uid kube-apiserver gave a stored object, or undefined when it has none by that name. */
export async function uidOf(stack: LedgerStack, kind: string, name: string, namespace: string): Promise<string | undefined> {
  const got = await stack.plane.tryKubectl(['get', kind, name, '-n', namespace, '-o', 'jsonpath={.metadata.uid}']);
  return got.code === 0 && got.stdout ? got.stdout : undefined;
}
