export * from './errors.js';
export * from './assert.js';
export * from './quantity/quantity.js';
export * as Resources from './resources/resource-list.js';
export type { ResourceList, RawResourceList } from './resources/resource-list.js';
export type * from './kube/types.js';
