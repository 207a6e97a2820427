import { mergeKinds } from './discovery.js';
import { formatResource, type KnownKind } from './kinds.js';
import { sleepFor } from './watch.js';

/**
 * Which kinds are watched, kept up with discovery: the fixed kinds and what the API server's
 * discovery serves now, read again every `everyMs` (the discovery cache's TTL, 5 minutes), a
 * watch started for each kind that appeared (a CRD installed after the reconciler started) and
 * stopped for each that is gone (a CRD removed: its watch would otherwise fail and back off
 * forever). A kind whose preferred version changed is watched again in the new one. A failed
 * discovery keeps what is watched (the fixed kinds, if it never succeeded): it never watches
 * less because discovery failed, and the periodic pass covers what the watches miss.
 */
export interface KindWatchesOptions {
  /** Always watched (the known kinds and CUSTOM_RESOURCES). */
  readonly fixed: readonly KnownKind[];
  /** The served kinds now; without it, only the fixed kinds are watched. */
  readonly discover?: (signal: AbortSignal) => Promise<readonly KnownKind[]>;
  /** How often discovery is read again, in ms. */
  readonly everyMs: number;
  /** Watches one kind until its signal aborts. */
  readonly watch: (kind: KnownKind, signal: AbortSignal) => Promise<void>;
  /** How the loop waits (the tests give a fake clock). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Kinds started or stopped after the first set (a kind discovered since, one no longer served). */
  readonly onChange?: (change: { readonly started: readonly KnownKind[]; readonly stopped: readonly KnownKind[] }) => void;
  readonly onDiscoveryFailed?: (error: unknown) => void;
}

const keyOf = (kind: KnownKind): string => `${formatResource(kind.groupResource)}@${kind.apiVersion}`;

/** Runs until `signal` aborts, then stops every watch and waits for them. */
export async function watchDiscoveredKinds(signal: AbortSignal, options: KindWatchesOptions): Promise<void> {
  const sleep = options.sleep ?? sleepFor;
  const running = new Map<string, { readonly kind: KnownKind; readonly stop: AbortController; readonly done: Promise<void> }>();
  let first = true;
  const apply = (kinds: readonly KnownKind[]): void => {
    const wanted = new Map(kinds.map((kind) => [keyOf(kind), kind]));
    const stopped: KnownKind[] = [];
    for (const [key, watch] of running) {
      if (wanted.has(key)) continue;
      watch.stop.abort();
      running.delete(key);
      stopped.push(watch.kind);
    }
    const started: KnownKind[] = [];
    for (const [key, kind] of wanted) {
      if (running.has(key)) continue;
      const stop = new AbortController();
      running.set(key, { kind, stop, done: options.watch(kind, AbortSignal.any([signal, stop.signal])).catch(() => undefined) });
      started.push(kind);
    }
    if (!first && started.length + stopped.length > 0) options.onChange?.({ started, stopped });
    first = false;
  };
  try {
    while (!signal.aborted) {
      let discovered: readonly KnownKind[] | undefined;
      try {
        discovered = options.discover ? await options.discover(signal) : [];
      } catch (error) {
        if (signal.aborted) break;
        options.onDiscoveryFailed?.(error);
      }
      if (discovered !== undefined) apply(mergeKinds(options.fixed, discovered));
      else if (first) apply(options.fixed);
      if (!options.discover) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      else await sleep(options.everyMs, signal);
    }
  } finally {
    for (const watch of running.values()) watch.stop.abort();
    await Promise.all([...running.values()].map((watch) => watch.done));
  }
}
