export * from './shared-quota.js';
