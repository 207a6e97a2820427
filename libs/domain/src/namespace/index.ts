export * from './answers.js';
export * from './commands.js';
export * from './facts.js';
export * from './decide.js';
export * from './needs.js';
export * from './shared-quotas.js';
