export * from './logger.js';
export * from './ops-server.js';
export * from './shutdown.js';
export * from './metrics.js';
export * from './timeout.js';
export * from './supervisor-channel.js';
export * from './config.module.js';
export * from './nest-logger.js';
