import { lessQuantity } from './outcome.js';
import type { Disagreement } from './run.js';

/**
 * Disagreements that are deliberate: each is listed in the README's "Where we differ from
 * Kubernetes, on purpose", which `readme` quotes. A run that shows one is counted as `known`
 * (and stops, since the namespaces no longer hold the same objects); it fails nothing.
 */
export interface KnownDifference {
  readonly id: string;
  /** The README bullet that explains it (its first words). */
  readonly readme: string;
  matches(disagreement: Disagreement): boolean;
}

export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  {
    // kube-apiserver runs its own validating plugins (PersistentVolumeClaimResize, ...) before any
    // webhook, Kubernetes' LimitRanger among the first of them. A request that breaks a LimitRange
    // and such a plugin's rule is refused by LimitRanger in Kubernetes' namespace; in ours it is
    // refused by that plugin and never reaches our webhook. Both refuse; only the reason differs.
    id: 'built-in plugins before the webhook',
    readme: 'A request that a built-in admission plugin of kube-apiserver refuses',
    matches: (d) => {
      const { kubernetes, ledger } = d.decisions ?? {};
      return kubernetes?.kind === 'LimitRange' && ledger?.allowed === false && !/^admission webhook /.test(ledger.message ?? '');
    },
  },
  {
    // A kubelet's status write (pods/status: what it allocated and applied, a resize it found
    // Infeasible) is not reviewed by our webhook; the reconciler measures the pod again at its next
    // pass, never below its spec. Kubernetes' quota controller recounts from it at once, and counts
    // an infeasible resize at what the node holds. We charge what was admitted until then, and the
    // spec of an infeasible resize: as much or more.
    id: "a kubelet's status is measured at the next pass, never below the spec",
    readme: "What a kubelet writes to a pod's status",
    matches: (d) => d.what === 'usage' && d.op.op === 'kubelet' && (d.usage ?? []).every((u) => lessQuantity(u.kubernetes, u.ledger)),
  },
];

export function knownDifference(disagreement: Disagreement): KnownDifference | undefined {
  return KNOWN_DIFFERENCES.find((known) => known.matches(disagreement));
}
