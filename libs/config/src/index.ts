export * from './config.js';
export * from './cli-config.js';
