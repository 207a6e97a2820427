/**
 * The uids a watch-fed cache saw deleted lately, by namespace: a DELETED event, or an object a
 * relist no longer found. A uid is never reused, so an object of one can never exist again, and a
 * reservation still waiting for it can be released at once instead of after the grace period (a
 * create deleted before the reconciler committed it). An object re-created under the same name
 * has a new uid, and is not touched.
 *
 * Bounded: a uid is kept `keepMs` (longer than any grace period it shortens: past the grace the
 * reservation goes as stale anyway), and at most `max` uids in all, the oldest dropped first.
 * Forgetting one only costs the grace period the cache saved.
 */
export class Tombstones {
  /** Every kept uid, oldest first (a Map keeps insertion order). */
  private readonly byUid = new Map<string, { readonly namespace: string; readonly at: number }>();
  private readonly byNamespace = new Map<string, Set<string>>();

  constructor(
    private readonly options: { readonly keepMs: number; readonly max: number },
    private readonly clock: () => number = Date.now,
  ) {}

  get size(): number {
    return this.byUid.size;
  }

  add(namespace: string, uid: string): void {
    if (this.byUid.has(uid)) return;
    this.byUid.set(uid, { namespace, at: this.clock() });
    let uids = this.byNamespace.get(namespace);
    if (!uids) this.byNamespace.set(namespace, (uids = new Set()));
    uids.add(uid);
    this.prune();
  }

  /** The namespace's uids seen deleted within `keepMs`. */
  in(namespace: string): readonly string[] {
    this.prune();
    return [...(this.byNamespace.get(namespace) ?? [])];
  }

  private prune(): void {
    const oldest = this.clock() - this.options.keepMs;
    for (const [uid, { namespace, at }] of this.byUid) {
      if (at > oldest && this.byUid.size <= this.options.max) break;
      this.byUid.delete(uid);
      const uids = this.byNamespace.get(namespace);
      uids?.delete(uid);
      if (uids?.size === 0) this.byNamespace.delete(namespace);
    }
  }
}
