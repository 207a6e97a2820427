export * from './label-selector.js';
export * from './namespace-selection.js';
