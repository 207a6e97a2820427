export type * from './evaluator.js';
