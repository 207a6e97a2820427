export * from './logger.js';
export * from './ops-server.js';
export * from './shutdown.js';
export * from './metrics.js';
export * from './timeout.js';
export * from './supervisor-channel.js';
