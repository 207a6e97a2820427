/**
 * How long a watch event may take from the kube-apiserver's write to this process, at most as
 * assumed: a listing read from a watch-fed cache is timed this much before now. (A cache further
 * behind than this may, for as long as it is, take an object another replica committed for
 * deleted; that object is adopted back when its event arrives.)
 */
export const CACHE_DELIVERY_MARGIN_MS = 500;

/**
 * The ledger instant a listing is as of. A listing read from the cluster now is as of the
 * ledger's clock read just before it (`ledgerAt`, read at `localAt` on this process's clock).
 * One read from a watch-fed cache is as of its `asOf` (on this process's clock: now, while its
 * watches are open and not silent), less the delivery margin, carried over to the ledger's
 * clock: not later than what the cache has really heard, so a reservation is not released for
 * an object whose event is still on its way.
 */
export function listingTime(ledgerAt: number, localAt: number, asOf: number | undefined): number {
  if (asOf === undefined) return ledgerAt;
  return ledgerAt - Math.max(0, localAt - asOf) - CACHE_DELIVERY_MARGIN_MS;
}
