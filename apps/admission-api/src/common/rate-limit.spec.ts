import type { NextFunction, Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { rateLimit } from './rate-limit.js';

function harness(perSecond: number, burst: number) {
  let now = 0;
  const limit = rateLimit({ perSecond, burst, now: () => now, clientsMax: 2 });
  const send = (token: string, path = '/v1/x'): number => {
    let status = 0;
    const response = {
      setHeader: () => response,
      status: (code: number) => ((status = code), response),
      json: () => response,
    } as unknown as Response;
    const request = { path, headers: { authorization: `Bearer ${token}` }, socket: { remoteAddress: '10.0.0.1' } } as unknown as Request;
    limit(request, response, (() => (status = 200)) as NextFunction);
    return status;
  };
  return { send, advance: (ms: number) => (now += ms) };
}

describe('rate limit', () => {
  it('lets a burst through, then refills at the rate', () => {
    const { send, advance } = harness(2, 3);
    expect([send('a'), send('a'), send('a'), send('a')]).toEqual([200, 200, 200, 429]);
    advance(500);
    expect([send('a'), send('a')]).toEqual([200, 429]);
    advance(10_000);
    expect([send('a'), send('a'), send('a'), send('a')]).toEqual([200, 200, 200, 429]);
  });

  it('keeps one bucket per token and never limits probes', () => {
    const { send } = harness(1, 1);
    expect([send('a'), send('a'), send('b')]).toEqual([200, 429, 200]);
    expect(send('a', '/healthz')).toBe(200);
  });
});
