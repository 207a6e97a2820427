import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_BODY_LIMIT_BYTES, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('defaults to port 8080, no external database or Redis, a ~3 MiB body limit', () => {
    expect(loadConfig({})).toEqual({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: undefined,
      redisUrl: undefined,
      bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES,
      logLevel: 'info',
      databasePoolSize: 8,
      admissionBatchMax: 64,
      admissionRetryMax: 12,
      statementTimeoutMs: 5000,
      reservationTtlMaxSeconds: 604800,
    });
  });

  it('reads the documented variables', () => {
    const config = loadConfig({ PORT: '9000', DATABASE_URL: 'postgres://u@h/db', REDIS_URL: 'redis://127.0.0.1:6379', LOG_LEVEL: 'debug' });
    expect(config).toMatchObject({ port: 9000, databaseUrl: 'postgres://u@h/db', redisUrl: 'redis://127.0.0.1:6379', logLevel: 'debug' });
  });

  it.each([
    ['PORT', 'eighty', /PORT: must be a whole number/],
    ['PORT', '70000', /PORT: must be between 0 and 65535/],
    ['DATABASE_URL', 'mysql://h/db', /DATABASE_URL: must use postgres: or postgresql:/],
    ['DATABASE_URL', 'not a url', /DATABASE_URL: must be a URL/],
    ['REDIS_URL', 'http://h', /REDIS_URL: must use redis: or rediss:/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL: must be one of/],
    ['BODY_LIMIT_BYTES', '10', /BODY_LIMIT_BYTES: must be between/],
  ])('stops on a bad %s (%s), naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });
});
