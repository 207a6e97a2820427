export * from './decide.js';
export * from './lifecycle.js';
