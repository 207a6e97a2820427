import type { RawQuantities } from '@quota/domain';
import { headRestOf, type HeadJson } from '../head.js';

/**
 * The usage projection's rows as it reads them back (projection.ts): a namespace's projected row
 * and the head it describes (a live reservation's keys and horizon states: projection-horizon.ts).
 */

/** A namespace as projected_namespaces and projected_definitions hold it (migrations/1795900000500). */
export interface NamespaceRow {
  namespace: string;
  version: string;
  /** Usage per quota (canonical), as of `version`. */
  used: Record<string, RawQuantities>;
  released_count: string;
  snapshot_version: string;
  /** The rest of the head (HeadRest), or null when it has none. */
  head_rest: HeadRest | null;
  /** The definitions (quotas without usage, limit ranges); written only when they change. */
  definitions: Definitions | null;
  /** When its last projected event was recorded, epoch ms (null before the first). */
  last_at_ms: number | null;
}

export type Definitions = Pick<HeadJson, 'limitRanges'> & { readonly quotas: readonly Omit<HeadJson['quotas'][number], 'used'>[] };

/**
 * What of the head the other columns do not hold (head.ts headRestOf): the fold needs the
 * Namespace object to take the namespace up again (a Namespace change needs the object it
 * changes), and usage at every version records the shared-quota contributions.
 */
export type HeadRest = ReturnType<typeof headRestOf>;

/** The head a namespace's projected rows describe (its lastEventAt is not kept: the next event folded sets it). */
export function headJsonOf(head: NamespaceRow | undefined): HeadJson {
  const definitions = head?.definitions ?? { quotas: [], limitRanges: [] };
  return {
    quotas: definitions.quotas.map((q) => ({ ...q, used: head?.used[q.definition.name] ?? {} })),
    limitRanges: definitions.limitRanges,
    releasedCount: Number(head?.released_count ?? 0),
    ...head?.head_rest,
  };
}
