export * from './config.js';
export * from './custom-resources.js';
export * from './admission-config.js';
export * from './cli-config.js';
export * from './variables.js';
