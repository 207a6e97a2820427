import type { LoggerService } from '@nestjs/common';
import type { Logger } from './logger.js';

const BOOT_CHATTER = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/** Nest's own messages (startup, errors) through the same JSON logger. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    // Nest lists every module and route at boot: useful when debugging, noise otherwise.
    this.write(BOOT_CHATTER.has(rest[rest.length - 1] as string) ? 'debug' : 'info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal', message: unknown, rest: unknown[]): void {
    // Nest passes the context (a class name) last, and for errors a stack before it.
    const contextName = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    const stack = level === 'error' && typeof rest[0] === 'string' && rest.length > 1 ? rest[0] : undefined;
    const fields = { ...(contextName ? { context: contextName } : {}), ...(stack ? { stack } : {}) };
    if (typeof message === 'object' && message !== null) this.logger[level]({ ...fields, ...(message as object) });
    else this.logger[level](fields, String(message));
  }
}
