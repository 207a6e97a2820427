export * from './policy.js';
export * from './wait-estimate.js';
