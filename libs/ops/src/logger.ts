import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

export interface LoggerOptions {
  /** Where the JSON lines go (default stdout); tests pass a stream to read them. */
  readonly destination?: NodeJS.WritableStream;
  /** Fields added to every line (the API adds the request id of the request in progress). */
  readonly mixin?: () => Record<string, unknown>;
}

/**
 * The one log format of every process: one JSON object per line (pino), ISO time, the level
 * as a word, the app's name. Secrets (tokens, passwords) are never passed to it.
 */
export function createLogger(level: string, app: string, options: LoggerOptions = {}): Logger {
  return pino(
    {
      level,
      base: { app },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      ...(options.mixin ? { mixin: options.mixin } : {}),
    },
    options.destination as pino.DestinationStream | undefined,
  );
}
