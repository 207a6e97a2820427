export * from './label-selector.js';
export * from './label-selector-text.js';
export * from './namespace-selection.js';
