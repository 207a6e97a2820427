import type { NextFunction, Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../auth/tokens.js';
import { clientAddress, isExempt, rateLimit } from './rate-limit.js';

const principal = (
  name: string,
  via: Principal['via'] = 'token',
  trustUserInfo = false,
  roles: Principal['roles'] = new Set(['admission']),
): Principal => ({
  name,
  roles,
  namespaces: 'all',
  via,
  trustUserInfo,
});

interface Sent {
  /** The authenticated principal's name; absent: the request authenticated as nobody. */
  readonly as?: string;
  readonly from?: string;
  readonly path?: string;
  readonly method?: string;
  /** The principal itself, when the test needs one other than a plain admission token named `as`. */
  readonly who?: Principal;
}

function harness(
  perSecond: number,
  burst: number,
  tables = { principalsMax: 10, addressesMax: 2 },
  unauthenticatedWebhook = { perSecond: 0, burst: 1 },
) {
  let now = 0;
  const limit = rateLimit({
    perSecond,
    burst,
    now: () => now,
    ...tables,
    unauthenticatedWebhook,
    principalOf: (request) => (request as Request & { who?: Principal }).who,
  });
  const send = ({ as, from = '10.0.0.1', path = '/v1/x', method = 'GET', who }: Sent): number => {
    let status = 0;
    const response = {
      setHeader: () => response,
      status: (code: number) => ((status = code), response),
      json: () => response,
    } as unknown as Response;
    const request = {
      method,
      path,
      headers: {},
      socket: { remoteAddress: from },
      ...(who ? { who } : as ? { who: principal(as) } : {}),
    } as unknown as Request;
    limit(request, response, (() => (status = 200)) as NextFunction);
    return status;
  };
  return { send, advance: (ms: number) => (now += ms) };
}

describe('rate limit', () => {
  it('lets a burst through, then refills at the rate', () => {
    const { send, advance } = harness(2, 3);
    const a = { as: 'a' };
    expect([send(a), send(a), send(a), send(a)]).toEqual([200, 200, 200, 429]);
    advance(500);
    expect([send(a), send(a)]).toEqual([200, 429]);
    advance(10_000);
    expect([send(a), send(a), send(a), send(a)]).toEqual([200, 200, 200, 429]);
  });

  it('keeps one bucket per principal, whatever address or connection it comes from', () => {
    const { send } = harness(1, 1);
    expect([send({ as: 'a', from: '10.0.0.1' }), send({ as: 'a', from: '10.0.0.2' }), send({ as: 'b', from: '10.0.0.1' })]).toEqual([
      200, 429, 200,
    ]);
  });

  it('limits callers without a valid token by address, apart from the principals sending from there', () => {
    const { send } = harness(1, 1);
    expect([send({ from: '10.0.0.9' }), send({ from: '10.0.0.9' }), send({ as: 'a', from: '10.0.0.9' })]).toEqual([200, 429, 200]);
  });

  it("never lets strangers cycling addresses evict an authenticated client's spent bucket", () => {
    const { send } = harness(1, 1, { principalsMax: 10, addressesMax: 2 });
    expect(send({ as: 'a' })).toBe(200);
    for (let i = 0; i < 1000; i++) send({ from: `10.1.${i >> 8}.${i & 255}` });
    expect(send({ as: 'a' })).toBe(429);
  });

  it('counts one IPv6 /64 as one client', () => {
    const { send } = harness(1, 1);
    expect([send({ from: '2001:db8:1:2::1' }), send({ from: '2001:db8:1:2:ffff::7' }), send({ from: '2001:db8:1:3::1' })]).toEqual([
      200, 429, 200,
    ]);
  });

  it.each(['/healthz', '/readyz', '/metrics', '/HEALTHZ', '/healthz/', '/ReadyZ/', '/METRICS'])(
    'never limits the probe or scrape %s',
    (path) => {
      const { send } = harness(1, 1);
      expect([send({ as: 'a', path }), send({ as: 'a', path }), send({ path }), send({ path })]).toEqual([200, 200, 200, 200]);
      expect(isExempt(path)).toBe(true);
    },
  );

  it.each(['/healthz//', '/healthzx', '/v1/healthz'])('limits %s, which is not a probe', (path) => {
    expect(isExempt(path)).toBe(false);
  });

  describe('the kube-apiserver reviewing cluster writes', () => {
    const apiServer = principal('kube-apiserver', 'token', true, new Set(['webhook']));
    const certificate = principal('kube-apiserver', 'client-certificate', true, new Set(['webhook']));

    it.each(['/v1/admission/validate', '/v1/admission/mutate', '/V1/Admission/Validate', '/v1/admission/mutate/'])(
      'never limits its reviews at %s: a 429 under failurePolicy Fail would deny the write',
      (path) => {
        const { send } = harness(1, 1);
        for (const who of [apiServer, certificate])
          expect(Array.from({ length: 5 }, () => send({ who, path, method: 'POST' }))).toEqual([200, 200, 200, 200, 200]);
      },
    );

    it('limits it on every other route, with one bucket whatever it reviewed', () => {
      const { send } = harness(1, 1);
      for (let i = 0; i < 5; i++) send({ who: apiServer, path: '/v1/admission/validate', method: 'POST' });
      expect([send({ who: apiServer, path: '/v1/namespaces/a/reservations', method: 'POST' }), send({ who: apiServer })]).toEqual([
        200, 429,
      ]);
    });

    it.each<[string, Sent]>([
      [
        "a tenant's admission token (its reviews are refused 403)",
        { who: principal('team-a-ci'), path: '/v1/admission/validate', method: 'POST' },
      ],
      [
        "a tenant's admission token with trustUserInfo but without the webhook role",
        { who: principal('relay', 'token', true), path: '/v1/admission/validate', method: 'POST' },
      ],
      [
        'anybody in development mode (limited by address)',
        { who: principal('anonymous', 'insecure-development', true, new Set(['webhook'])), path: '/v1/admission/validate', method: 'POST' },
      ],
      ['nobody (no valid token)', { path: '/v1/admission/validate', method: 'POST' }],
      ['a GET of the webhook path', { who: apiServer, path: '/v1/admission/validate', method: 'GET' }],
      ['a path that only starts like the webhook', { who: apiServer, path: '/v1/admission/validate/x', method: 'POST' }],
    ])('limits %s', (_what, sent) => {
      const { send } = harness(1, 1);
      expect([send(sent), send(sent)]).toEqual([200, 429]);
    });
  });

  describe('the unauthenticated webhook listener', () => {
    const stranger = principal('unauthenticated:kube-apiserver', 'unauthenticated-webhook', false, new Set(['webhook']));
    const review = { who: stranger, path: '/v1/admission/validate', method: 'POST' };

    it('limits its reviews by address at its own rate, even with every other limit off', () => {
      const { send, advance } = harness(0, 1, undefined, { perSecond: 2, burst: 3 });
      expect(Array.from({ length: 4 }, () => send(review))).toEqual([200, 200, 200, 429]);
      expect(send({ ...review, from: '10.0.0.2' })).toBe(200);
      advance(500);
      expect([send(review), send(review)]).toEqual([200, 429]);
    });

    it('is limited as any stranger when its own limit is off', () => {
      const { send } = harness(1, 1, undefined, { perSecond: 0, burst: 1 });
      expect([send(review), send(review)]).toEqual([200, 429]);
    });
  });

  it.each([
    ['10.0.0.1', '10.0.0.1'],
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8:aa:bb:cc:dd:ee:ff', '2001:db8:aa:bb::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('names the client at %s as %s', (remoteAddress, client) => {
    expect(clientAddress({ socket: { remoteAddress } } as unknown as Request)).toBe(client);
  });
});
