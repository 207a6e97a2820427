/**
 * The HTTP contract (docs/api.md) as types, declared once: the shapes the admission API answers
 * with, which libs/ledger's views build and the controllers, quotactl and the dashboard read, and
 * the table of Kubernetes status reasons. It imports nothing, so every one of them may import it
 * (the dashboard's bundle and quotactl's included); what the domain decides (an AdmissionResult,
 * a DenialJson) stays the domain's, and the shapes here take it as a type parameter.
 */
export * from './audit.js';
export * from './decisions.js';
export * from './series.js';
export * from './status.js';
export * from './queue.js';
