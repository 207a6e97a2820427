/**
 * The scan threads' entry point, CommonJS on purpose. piscina loads a worker with require()
 * first, and on Node 20 require() of an ES module (scan-worker.ts) runs V8's synchronous module
 * instantiation, which aborts the whole process ("IsGraphAsync must be used on an instantiated
 * module") when the thread is stopped in the middle of it. This file is loaded as CommonJS, and
 * the scanner is imported on the first task, asynchronously, where a stop is only a stop.
 */
type Scan = (task: unknown) => unknown;

let scanner: Promise<Scan> | undefined;

export = function scan(task: unknown): Promise<unknown> {
  scanner ??= import('./scan-worker.js').then((module) => module.default as Scan);
  return scanner.then((run) => run(task));
};
