export * from './decide.js';
export * from './lifecycle.js';
export * from './plugins.js';
export * from './rest.js';
export * from './reconcile.js';
export * from './stored.js';
