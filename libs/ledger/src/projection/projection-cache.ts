import type { NamespaceState } from '@quota/domain';

/** Live reservations the worker keeps in memory, over all the namespace states it remembers (StateCache). */
const CACHED_RESERVATIONS_MAX = 200_000;

/**
 * The complete states (every live reservation) of the namespaces a worker projected last, as its
 * committed steps left them, most recent last. A step whose namespace is still at the version it
 * left there starts from it instead of reading the reservations back and folding their events
 * again: a busy namespace costs its events, not its live reservations. A state is used only
 * while the projected version is the one it was cached at (another worker, or a reset, moves
 * it), and only states made with every reservation are kept, so a snapshot or a recount from
 * one is exact.
 */
export class StateCache {
  private readonly states = new Map<string, NamespaceState>();
  private reservations = 0;

  get(namespace: string, version: number): NamespaceState | undefined {
    const state = this.states.get(namespace);
    return state?.version === version ? state : undefined;
  }

  set(namespace: string, state: NamespaceState): void {
    this.delete(namespace);
    this.states.set(namespace, state);
    this.reservations += state.reservations.size;
    for (const [oldest, old] of this.states) {
      if (this.reservations <= CACHED_RESERVATIONS_MAX) break;
      this.states.delete(oldest);
      this.reservations -= old.reservations.size;
    }
  }

  delete(namespace: string): void {
    const state = this.states.get(namespace);
    if (!state) return;
    this.states.delete(namespace);
    this.reservations -= state.reservations.size;
  }

  clear(): void {
    this.states.clear();
    this.reservations = 0;
  }
}
