export * from './reconcile-queue.js';
