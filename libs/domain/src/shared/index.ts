export * from './shared-quota.js';
export {
  clusterNamespaceRecord,
  namespaceDefinitionOf,
  sameNamespaceMetadata,
  validateNamespace,
  type Namespace,
} from './namespace-validation.js';
export {
  validateClusterResourceQuota,
  validateHierarchicalResourceQuota,
  type ClusterResourceQuota,
  type HierarchicalResourceQuota,
} from './shared-quota-validation.js';
