export * from './answers.js';
export * from './commands.js';
export * from './facts.js';
export * from './decide.js';
export * from './needs.js';
export * from './shared-quotas.js';
export { drainQueue, nextSharedAdmission, sharedChargesOf } from './reservation-queue.js';
export { decideFairDrain, FAIR_DRAIN_ADMISSIONS_MAX, freedSharedKeys, type FairDrainDecision } from './fair-drain.js';
// The namespace decider's parts are reached through `decide` alone; what else the other layers
// need of them is named here.
export type { AdmissionRequest } from './admission-decision.js';
export type { ExistingObject, OverHard, ReconcileAction, Uncovered, Unreadable } from './reconcile.js';
export { measureListing, type Listed } from './settle-listed.js';
export {
  ADMISSION_PLUGINS,
  alwaysDenyRefusal,
  DEFAULT_ADMISSION_PLUGINS,
  IMMORTAL_NAMESPACES,
  namespaceDeletionRefusal,
  pluginEnabled,
  type AdmissionPlugin,
} from './plugins.js';
export { defaultPodForAdmission, groupResourceForKind } from './rest.js';
export { LIVE_PER_OBJECT_MAX, originOf, type ReservationOrigin } from './stored.js';
