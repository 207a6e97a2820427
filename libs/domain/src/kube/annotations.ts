/** Annotation keys that admission reads, here so that what it reads of each kind (fields-read.ts) needs no reader's module. */

/** LimitRanger's record of the defaults it set (limit-range/defaults.ts). */
export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';

/** A PersistentVolumeClaim's storage class before `spec.storageClassName` (usage/pvc.ts). */
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** Who last applied a LedgerQuota, LimitRange or shared quota (quota/managed-by.ts). */
export const LAST_APPLIED_BY_ANNOTATION = 'quota-ledger.io/last-applied-by';
