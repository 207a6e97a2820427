import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_DOCS } from '../../apps/admission-api/src/openapi/routes.js';
import { httpApiPage } from '../../scripts/docs/http-api-page.js';
import { startApi, type RunningApi } from '../support/api.js';
import { admissionReview } from '../support/review.js';
import { bearer, writeTokensFile, type TestToken } from '../support/tokens.js';

/**
 * The OpenAPI document served at /docs/openapi.json against the service itself:
 * every route the router serves is in it, every operation has a schema for each answer, and a
 * walk over every route validates each real answer (status, media type, body) against the
 * schema the document gives for that route and status. An answer the document does not
 * describe, or a body that does not match, fails here.
 */

const TOKENS = {
  // One identity with every role, unscoped, for the walk; the others to be refused.
  operator: { name: 'operator', token: 'operator-0123456789abcdef0123456789abcde', roles: ['admin', 'auditor', 'admission', 'webhook'] },
  auditor: { name: 'audit-bot', token: 'auditor-0123456789abcdef0123456789abcd', roles: ['auditor'] },
} satisfies Record<string, TestToken>;

type Method = 'get' | 'put' | 'post' | 'delete';
interface Operation {
  operationId?: string;
  requestBody?: { content: Record<string, { schema?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  'x-quota-ledger-roles'?: string[];
}
interface OpenApi {
  paths: Record<string, Partial<Record<Method, Operation>>>;
  components: { schemas: Record<string, unknown> };
}

let api: RunningApi;
let document: OpenApi;
const ajv = new Ajv({ strict: true, allErrors: true });
// OpenAPI's own keyword in a schema (an annotation), and the formats the document uses.
ajv.addKeyword({ keyword: 'example' });
ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
ajv.addFormat('byte', /^[A-Za-z0-9+/]*={0,2}$/);

/** A JSON pointer into the document, as a URI fragment ajv resolves. */
const pointer = (...tokens: string[]): string =>
  `openapi.json#/${tokens.map((t) => encodeURIComponent(t.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;

const validators = new Map<string, ValidateFunction>();
function validatorAt(...tokens: string[]): ValidateFunction {
  const at = pointer(...tokens);
  let validate = validators.get(at);
  if (!validate) {
    validate = ajv.compile({ $ref: at });
    validators.set(at, validate);
  }
  return validate;
}

/** The operation a concrete path answers with: the template matching it with the most literal segments. */
function templateOf(method: Method, path: string): string | undefined {
  const segments = path.split('/');
  const candidates = Object.keys(document.paths).filter((template) => {
    const parts = template.split('/');
    return (
      document.paths[template]?.[method] &&
      parts.length === segments.length &&
      parts.every((part, i) => /^\{.+\}$/.test(part) || part === segments[i])
    );
  });
  const literals = (template: string): number => template.split('/').filter((part) => !part.startsWith('{')).length;
  return candidates.sort((a, b) => literals(b) - literals(a))[0];
}

/** (operation, status) pairs the walk has validated. */
const answered = new Map<string, Set<string>>();

interface Answer {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read as JSON after validation
  readonly body: any;
  readonly headers: Headers;
}

/**
 * One request, its answer checked against the document: the route is documented, the status is
 * one of the operation's responses (exactly, or its `NXX` range), the media type one it lists,
 * and the body (each line, for NDJSON) valid against that response's schema.
 */
async function call(
  method: Method,
  path: string,
  options: { body?: unknown; raw?: string; token?: string | null; headers?: Record<string, string>; base?: string } = {},
): Promise<Answer> {
  const token = options.token === undefined ? TOKENS.operator.token : options.token;
  const payload = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const response = await fetch(`${options.base ?? api.base}${path}`, {
    method: method.toUpperCase(),
    headers: {
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? bearer(token) : {}),
      ...options.headers,
    },
    ...(payload === undefined ? {} : { body: payload }),
  });
  const text = await response.text();
  const pathname = new URL(path, api.base).pathname;
  const template = templateOf(method, pathname);
  expect(template, `${method.toUpperCase()} ${pathname} is not in the document`).toBeDefined();
  const operation = document.paths[template as string]?.[method] as Operation;
  const status = String(response.status);
  const range = `${status[0]}XX`;
  const key = status in operation.responses ? status : range in operation.responses ? range : undefined;
  expect(
    key,
    `${method.toUpperCase()} ${template} answered ${status}, which the document does not list (${Object.keys(operation.responses).join(', ')}): ${text.slice(0, 300)}`,
  ).toBeDefined();
  const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
  const content = operation.responses[key as string]?.content ?? {};
  expect(Object.keys(content), `${method.toUpperCase()} ${template} ${status}: media type ${mediaType}`).toContain(mediaType);
  const validate = validatorAt('paths', template as string, method, 'responses', key as string, 'content', mediaType, 'schema');
  const documents: unknown[] =
    mediaType === 'application/json'
      ? [JSON.parse(text)]
      : mediaType === 'application/x-ndjson'
        ? text
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as unknown)
        : [text];
  for (const value of documents) {
    const valid = validate(value);
    expect(
      valid ? [] : ajv.errorsText(validate.errors, { separator: '\n' }).split('\n'),
      `${method.toUpperCase()} ${path} → ${status}: ${JSON.stringify(value).slice(0, 600)}`,
    ).toEqual([]);
  }
  const seen = answered.get(`${method} ${template}`) ?? new Set<string>();
  answered.set(`${method} ${template}`, seen.add(status));
  return { status: response.status, body: mediaType === 'application/json' ? JSON.parse(text) : text, headers: response.headers };
}

/** `call`, and the status it must answer (a walk that silently took another branch would validate less). */
async function expectStatus(status: number, method: Method, path: string, options?: Parameters<typeof call>[2]): Promise<Answer> {
  const answer = await call(method, path, options);
  expect(answer.status, `${method.toUpperCase()} ${path}: ${JSON.stringify(answer.body).slice(0, 400)}`).toBe(status);
  return answer;
}

const operations = (): Array<[string, Method, Operation]> =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    (Object.entries(item) as Array<[Method, Operation]>).map(([method, operation]): [string, Method, Operation] => [
      path,
      method,
      operation,
    ]),
  );

beforeAll(async () => {
  api = await startApi({ insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)) }, 'qlopenapi');
  document = (await (await fetch(`${api.base}/docs/openapi.json`)).json()) as OpenApi;
  // The document is added whole so that its #/components/... references resolve; its top-level
  // fields are not schema keywords (ajv compiles only the schemas the validators point at).
  for (const field of Object.keys(document)) ajv.addKeyword({ keyword: field });
  ajv.addSchema(document as object, 'openapi.json');
});
afterAll(async () => {
  await api?.close();
});

describe('the OpenAPI document', () => {
  it('lists every route the router serves (the docs UI and the dashboard, with the root that sends a browser to it, are served beside it)', () => {
    const router = (
      api.app.getHttpAdapter().getInstance() as { router: { stack: Array<{ route?: { path: string; methods: Record<string, boolean> } }> } }
    ).router;
    const served = router.stack
      .flatMap((layer) =>
        layer.route ? Object.keys(layer.route.methods).map((method) => `${method} ${layer.route?.path.replace(/:(\w+)/g, '{$1}')}`) : [],
      )
      .filter((route) => !/ \/(docs|ui)(\/|$)/.test(route) && route !== 'get /');
    const documented = operations().map(([path, method]) => `${method} ${path}`);
    expect(served.length).toBeGreaterThan(40);
    expect(served.filter((route) => !documented.includes(route)).sort(), 'served but not documented').toEqual([]);
    expect(documented.filter((route) => !served.includes(route)).sort(), 'documented but not served').toEqual([]);
  });

  it('describes every operation from the route table, and every table entry is an operation', () => {
    const ids = operations().map(([, , operation]) => operation.operationId);
    expect(ids.filter((id) => !id || !ROUTE_DOCS.has(id)).sort(), 'operations missing from openapi/routes.ts').toEqual([]);
    expect([...ROUTE_DOCS.keys()].filter((id) => !ids.includes(id)).sort(), 'entries of openapi/routes.ts with no operation').toEqual([]);
  });

  it('gives every answer of every operation a schema, every 4xx the Status, and every body a schema', () => {
    const problems: string[] = [];
    for (const [path, method, operation] of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(operation.responses);
      if (!statuses.some((s) => s.startsWith('2'))) problems.push(`${where}: no success answer`);
      if (!statuses.includes('5XX')) problems.push(`${where}: no 5XX`);
      for (const [status, response] of Object.entries(operation.responses)) {
        const media = Object.entries(response.content ?? {});
        if (media.length === 0 || media.some(([, m]) => m.schema === undefined)) problems.push(`${where} ${status}: no schema`);
        if (
          status.startsWith('4') &&
          JSON.stringify(response.content) !== JSON.stringify({ 'application/json': { schema: { $ref: '#/components/schemas/Status' } } })
        ) {
          problems.push(`${where} ${status}: not the Status`);
        }
      }
      if (operation['x-quota-ledger-roles'] && !['401', '403', '429'].every((s) => statuses.includes(s)))
        problems.push(`${where}: has roles but not 401/403/429`);
      if (operation.requestBody && !['400', '413', '415'].every((s) => statuses.includes(s)))
        problems.push(`${where}: takes a body but not 400/413/415`);
      if (operation.requestBody && Object.values(operation.requestBody.content).some((m) => m.schema === undefined))
        problems.push(`${where}: body without a schema`);
      if (['put', 'post'].includes(method) && !operation.requestBody && !path.endsWith('/commit'))
        problems.push(`${where}: no request body`);
    }
    expect(problems).toEqual([]);
  });

  it('has schemas that compile: every $ref resolves, no keyword is unknown', () => {
    for (const [path, method, operation] of operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const mediaType of Object.keys(response.content ?? {}))
          expect(
            () => validatorAt('paths', path, method, 'responses', status, 'content', mediaType, 'schema'),
            `${method} ${path} ${status}`,
          ).not.toThrow();
      }
      for (const mediaType of Object.keys(operation.requestBody?.content ?? {}))
        expect(
          () => validatorAt('paths', path, method, 'requestBody', 'content', mediaType, 'schema'),
          `${method} ${path} body`,
        ).not.toThrow();
    }
    for (const name of Object.keys(document.components.schemas))
      expect(() => validatorAt('components', 'schemas', name), name).not.toThrow();
  });

  it('derives query parameters and DTO bodies from their validation', () => {
    const decisions = document.paths['/v1/namespaces/{namespace}/decisions']?.get as unknown as {
      parameters: Array<{ name: string; in: string; schema: Record<string, unknown> }>;
    };
    const parameter = (name: string) => decisions.parameters.find((p) => p.name === name);
    expect(parameter('limit')).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000 } });
    expect(parameter('order')).toMatchObject({ schema: { type: 'string', enum: ['oldest', 'newest'] } });
    expect(parameter('since')).toMatchObject({ schema: { type: 'string', format: 'date-time' } });
    expect(parameter('namespace')).toMatchObject({ in: 'path', schema: { pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 } });
    expect(document.components.schemas['ReserveDto']).toMatchObject({
      required: ['kind'],
      additionalProperties: false,
      properties: { ttlSeconds: { type: 'integer', minimum: 1 }, dryRun: { type: 'boolean' } },
    });
    expect(Object.keys((document.components.schemas['WhatIfDto'] as { properties: object }).properties)).not.toContain('requestId');
  });

  it('is the document docs/reference/http-api.md is generated from (npm run docs:generate builds it without a database)', () => {
    const page = readFileSync(new URL('../../docs/reference/http-api.md', import.meta.url), 'utf8');
    expect(httpApiPage(document as unknown as Parameters<typeof httpApiPage>[0])).toBe(page);
  });
});

describe('every route, its answers validated against the document', () => {
  const ns = 'oa';
  const quota = (hard: Record<string, string>, metadata: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata,
    spec: { hard },
  });
  const pod = (name: string, requests?: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, uid: `uid-${name}` },
    spec: { containers: [{ name: 'app', image: 'nginx', ...(requests ? { resources: { requests } } : {}) }] },
  });
  const review = (uid: string, object: Record<string, unknown>, resource = 'pods', namespace: string | undefined = ns) =>
    admissionReview({
      uid,
      kind: { group: '', version: 'v1', kind: object['kind'] },
      resource: { group: '', version: 'v1', resource },
      ...(namespace ? { namespace } : {}),
      name: (object['metadata'] as { name: string }).name,
      operation: 'CREATE',
      object,
    });

  it('quotas and limit ranges: create, replace, read, list, history, and their refusals', async () => {
    await expectStatus(201, 'put', `/v1/namespaces/${ns}/resourcequotas/compute`, {
      body: quota({ pods: '10', 'requests.cpu': '2', 'requests.memory': '2Gi' }),
    });
    const replaced = await expectStatus(200, 'put', `/v1/namespaces/${ns}/resourcequotas/compute`, {
      body: quota({ pods: '10', 'requests.cpu': '2', 'requests.memory': '2Gi' }, { labels: { team: 'red' } }),
    });
    await expectStatus(409, 'put', `/v1/namespaces/${ns}/resourcequotas/compute`, {
      body: quota({ pods: '9' }, { resourceVersion: '99' }),
    });
    await expectStatus(422, 'put', `/v1/namespaces/${ns}/resourcequotas/compute`, { body: quota({ pods: '-1' }) });
    await expectStatus(400, 'put', `/v1/namespaces/${ns}/resourcequotas/compute`, { raw: '[]' });
    await expectStatus(400, 'put', `/v1/namespaces/${ns}/resourcequotas/compute`, { raw: '{"apiVersion":' });
    await expectStatus(413, 'put', `/v1/namespaces/${ns}/resourcequotas/compute`, {
      body: quota({ pods: '1' }, { annotations: { big: 'x'.repeat(600 * 1024) } }),
    });
    await expectStatus(415, 'put', `/v1/namespaces/${ns}/resourcequotas/compute`, {
      body: quota({ pods: '1' }),
      headers: { 'content-type': 'application/json; charset=iso-8859-1' },
    });
    await expectStatus(400, 'put', `/v1/namespaces/Not_A_Namespace/resourcequotas/compute`, { body: quota({ pods: '1' }) });
    await expectStatus(401, 'put', `/v1/namespaces/${ns}/resourcequotas/compute`, { body: quota({ pods: '1' }), token: null });
    await expectStatus(403, 'put', `/v1/namespaces/${ns}/resourcequotas/compute`, {
      body: quota({ pods: '1' }),
      token: TOKENS.auditor.token,
    });
    await expectStatus(201, 'put', `/v1/namespaces/${ns}/resourcequotas/spare`, { body: quota({ 'requests.storage': '1Ti' }) });
    expect(replaced.body.metadata.labels).toEqual({ team: 'red' });

    await expectStatus(200, 'get', `/v1/namespaces/${ns}/resourcequotas/compute`);
    await expectStatus(404, 'get', `/v1/namespaces/${ns}/resourcequotas/missing`);
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/resourcequotas`);
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/resourcequotas/compute/history`);
    await expectStatus(404, 'get', `/v1/namespaces/${ns}/resourcequotas/missing/history`);

    const limitRange = {
      apiVersion: 'v1',
      kind: 'LimitRange',
      spec: { limits: [{ type: 'Container', defaultRequest: { cpu: '100m', memory: '64Mi' }, max: { cpu: '1' } }] },
    };
    await expectStatus(201, 'put', `/v1/namespaces/${ns}/limitranges/defaults`, { body: limitRange });
    await expectStatus(200, 'put', `/v1/namespaces/${ns}/limitranges/defaults`, { body: limitRange });
    await expectStatus(422, 'put', `/v1/namespaces/${ns}/limitranges/defaults`, {
      body: { ...limitRange, spec: { limits: [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }] } },
    });
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/limitranges/defaults`);
    await expectStatus(404, 'get', `/v1/namespaces/${ns}/limitranges/missing`);
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/limitranges`);
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/limitranges/defaults/history`);
  });

  it('admission: the webhook, reservations and what-if', async () => {
    const mutated = await expectStatus(200, 'post', '/v1/admission/mutate', { body: review('oa-mutate', pod('web-0')) });
    expect(mutated.body.response.patchType).toBe('JSONPatch');
    const allowed = await expectStatus(200, 'post', '/v1/admission/validate', {
      body: review('oa-validate', pod('web-1', { cpu: '100m', memory: '64Mi' })),
    });
    expect(allowed.body.response.allowed).toBe(true);
    const denied = await expectStatus(200, 'post', '/v1/admission/validate', {
      body: review('oa-deny', pod('web-2', { cpu: '5', memory: '64Mi' })),
    });
    expect(denied.body.response).toMatchObject({ allowed: false, status: { code: 403 } });
    await expectStatus(200, 'post', '/v1/admission/validate', {
      body: review(
        'oa-namespace',
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'oa-reviewed', labels: { team: 'blue' } } },
        'namespaces',
        undefined,
      ),
    });
    await expectStatus(400, 'post', '/v1/admission/validate', {
      body: { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: {} },
    });
    await expectStatus(400, 'post', '/v1/admission/mutate', { body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' } });

    const base = `/v1/namespaces/${ns}/reservations`;
    // An update that adds nothing charges nothing: allowed, with no reservation.
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', uid: 'uid-settings' }, data: { a: 'b' } };
    const granted = await expectStatus(201, 'post', base, {
      body: { requestId: 'oa-1', kind: 'Pod', name: 'job-1', resources: { pods: '1', 'requests.cpu': '100m' } },
    });
    expect(granted.body.position).toMatch(/^\d+$/);
    await expectStatus(201, 'post', base, {
      body: { requestId: 'oa-1', kind: 'Pod', name: 'job-1', resources: { pods: '1', 'requests.cpu': '100m' } },
    });
    const near = await expectStatus(201, 'post', base, {
      body: { requestId: 'oa-2', kind: 'Pod', name: 'job-2', resources: { pods: '1', 'requests.cpu': '1700m' } },
    });
    expect(near.headers.get('warning')).toContain('299');
    await expectStatus(200, 'post', base, {
      body: { requestId: 'oa-3', kind: 'Pod', name: 'job-3', resources: { pods: '1' }, dryRun: true },
    });
    await expectStatus(200, 'post', base, {
      body: { requestId: 'oa-4', kind: 'ConfigMap', operation: 'UPDATE', object: configMap, oldObject: configMap },
    });
    const refused = await expectStatus(403, 'post', base, {
      body: { requestId: 'oa-5', kind: 'Pod', name: 'job-5', resources: { pods: '1', 'requests.cpu': '3' } },
    });
    expect(refused.body.details.denial).toMatchObject({ kind: 'Exceeded', quota: 'compute' });
    await expectStatus(409, 'post', base, { body: { requestId: 'oa-1', kind: 'Pod', name: 'job-other', resources: { pods: '2' } } });
    await expectStatus(422, 'post', base, { body: { kind: 'Gadget', name: 'g', resources: { pods: '1' } } });
    await expectStatus(400, 'post', base, { body: { kind: 'Pod', colour: 'red', resources: { pods: '1' } } });
    await expectStatus(404, 'post', '/v1/namespaces/nowhere/reservations', { body: { kind: 'Pod', name: 'p', resources: { pods: '1' } } });
    // One that waits is queued (202), read, listed with the queue, and cancelled (it fits the hard limit, not the room left).
    const queued = await expectStatus(202, 'post', base, {
      body: { requestId: 'oa-6', kind: 'Pod', name: 'job-6', resources: { pods: '1', 'requests.cpu': '1' }, wait: { seconds: 60 } },
    });
    await expectStatus(200, 'get', `${base}/${queued.body.id}`);
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/queue`);
    await expectStatus(200, 'delete', `${base}/${queued.body.id}`);
    await expectStatus(422, 'post', base, { body: { kind: 'Pod', name: 'job-7', resources: { pods: '1' }, wait: { seconds: 0 } } });

    await expectStatus(200, 'post', `${base}/${granted.body.id}/commit`);
    await expectStatus(200, 'get', `${base}/${granted.body.id}`);
    await expectStatus(404, 'get', `${base}/no-such-id`);
    await expectStatus(400, 'get', `${base}/${'x'.repeat(200)}`);
    await expectStatus(200, 'delete', `${base}/${near.body.id}`);
    await expectStatus(409, 'post', `${base}/${near.body.id}/commit`);
    await expectStatus(404, 'delete', `${base}/no-such-id`);
    await expectStatus(200, 'get', `${base}?state=committed&limit=10`);
    await expectStatus(400, 'get', `${base}?state=lost`);

    const would = await expectStatus(200, 'post', `/v1/namespaces/${ns}/whatif`, {
      body: { kind: 'Pod', object: pod('what-1', { cpu: '100m', memory: '64Mi' }) },
    });
    expect(would.body.allowed).toBe(true);
    const wouldNot = await expectStatus(200, 'post', `/v1/namespaces/${ns}/whatif`, {
      body: { kind: 'Pod', resources: { pods: '1', 'requests.cpu': '9' } },
    });
    expect(wouldNot.body).toMatchObject({ allowed: false, code: 403 });
    await expectStatus(400, 'post', `/v1/namespaces/${ns}/whatif`, {
      body: { kind: 'Pod', requestId: 'not-here', resources: { pods: '1' } },
    });
  });

  it('audit: usage, series, events, decisions, exports, namespaces, projection lag, whoami', async () => {
    await api.settle();
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/usage`);
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/usage?at=${new Date().toISOString()}`);
    await expectStatus(404, 'get', '/v1/namespaces/nowhere/usage');
    await expectStatus(400, 'get', `/v1/namespaces/${ns}/usage?at=yesterday`);
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/usage/series?points=5`);
    await expectStatus(400, 'get', `/v1/namespaces/${ns}/usage/series?points=1`);
    await expectStatus(404, 'get', '/v1/namespaces/nowhere/usage/series');
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/usage/unsettled`);
    const events = await expectStatus(200, 'get', `/v1/namespaces/${ns}/events?limit=3`);
    expect(events.body.next).toBeDefined();
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/events/export`);
    const decisions = await expectStatus(200, 'get', `/v1/namespaces/${ns}/decisions?order=newest`);
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/decisions?allowed=false`);
    await expectStatus(400, 'get', `/v1/namespaces/${ns}/decisions?limit=0`);
    await expectStatus(400, 'get', `/v1/namespaces/${ns}/decisions?colour=red`);
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/decisions/${decisions.body.items[0].id}`);
    await expectStatus(404, 'get', `/v1/namespaces/${ns}/decisions/999999`);
    await expectStatus(400, 'get', `/v1/namespaces/${ns}/decisions/abc`);
    const exported = await expectStatus(200, 'get', `/v1/namespaces/${ns}/decisions/export`);
    expect(String(exported.body).trim().split('\n').length).toBeGreaterThan(3);
    await expectStatus(200, 'get', '/v1/namespaces?limit=10');
    await expectStatus(200, 'get', '/v1/projections/usage');
    await expectStatus(200, 'get', '/v1/whoami');
    await expectStatus(401, 'get', '/v1/whoami', { token: null });
  });

  it('namespaces, ClusterResourceQuotas and HierarchicalResourceQuotas', async () => {
    const namespace = (name: string, labels: Record<string, string>) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels },
    });
    await expectStatus(201, 'put', `/v1/namespaces/${ns}`, { body: namespace(ns, { team: 'red' }) });
    await expectStatus(200, 'put', `/v1/namespaces/${ns}`, { body: namespace(ns, { team: 'red' }) });
    await expectStatus(422, 'put', `/v1/namespaces/${ns}`, { body: namespace(ns, { 'bad label!': 'x' }) });
    await expectStatus(200, 'get', `/v1/namespaces/${ns}`);
    await expectStatus(404, 'get', '/v1/namespaces/nowhere');
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/history`);
    await expectStatus(201, 'put', '/v1/namespaces/oa-gone', { body: namespace('oa-gone', {}) });
    await expectStatus(200, 'delete', '/v1/namespaces/oa-gone');
    await expectStatus(404, 'delete', '/v1/namespaces/oa-gone');
    await expectStatus(403, 'delete', '/v1/namespaces/kube-system');

    const crq = {
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuota',
      spec: { selector: { labels: { matchLabels: { team: 'red' } } }, quota: { hard: { pods: '20' } } },
    };
    await expectStatus(201, 'put', '/v1/clusterresourcequotas/red', { body: crq });
    await expectStatus(200, 'put', '/v1/clusterresourcequotas/red', { body: crq });
    await expectStatus(422, 'put', '/v1/clusterresourcequotas/everything', {
      body: { ...crq, spec: { selector: {}, quota: { hard: { pods: '1' } } } },
    });
    await expectStatus(201, 'post', `/v1/namespaces/${ns}/reservations`, {
      body: { requestId: 'oa-shared', kind: 'Pod', name: 'shared-1', resources: { pods: '1' } },
    });
    await expectStatus(200, 'get', '/v1/clusterresourcequotas');
    await expectStatus(200, 'get', '/v1/clusterresourcequotas/red');
    await expectStatus(404, 'get', '/v1/clusterresourcequotas/blue');
    await expectStatus(200, 'get', '/v1/clusterresourcequotas/red/history');
    await expectStatus(200, 'get', '/v1/clusterresourcequotas/red/usage');
    await expectStatus(200, 'get', '/v1/clusterresourcequotas/red/queue');
    await expectStatus(404, 'get', '/v1/clusterresourcequotas/blue/queue');
    await expectStatus(200, 'get', `/v1/clusterresourcequotas/red/usage?at=${new Date().toISOString()}`);
    await expectStatus(200, 'get', '/v1/clusterresourcequotas/red/usage/series?points=3');
    await expectStatus(404, 'get', '/v1/clusterresourcequotas/blue/usage');
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/appliedclusterresourcequotas`);
    await expectStatus(200, 'get', `/v1/namespaces/${ns}/appliedclusterresourcequotas/red`);
    await expectStatus(404, 'get', `/v1/namespaces/${ns}/appliedclusterresourcequotas/blue`);

    const hrq = { apiVersion: 'hnc.x-k8s.io/v1alpha2', kind: 'HierarchicalResourceQuota', spec: { hard: { pods: '5' } } };
    const hrqs = `/v1/namespaces/${ns}/hierarchicalresourcequotas`;
    await expectStatus(201, 'put', `${hrqs}/tree`, { body: hrq });
    await expectStatus(200, 'put', `${hrqs}/tree`, { body: hrq });
    await expectStatus(200, 'get', hrqs);
    await expectStatus(200, 'get', `${hrqs}/tree`);
    await expectStatus(200, 'get', `${hrqs}/tree/history`);
    await expectStatus(200, 'get', `${hrqs}/tree/usage`);
    await expectStatus(200, 'get', `${hrqs}/tree/queue`);
    await expectStatus(200, 'get', `${hrqs}/tree/usage/series`);
    await expectStatus(404, 'get', `${hrqs}/forest/usage/series`);
    await expectStatus(200, 'delete', `${hrqs}/tree`);
    await expectStatus(404, 'delete', `${hrqs}/tree`);
    await expectStatus(200, 'delete', '/v1/clusterresourcequotas/red');
    await expectStatus(200, 'get', '/v1/clusterresourcequotas/red/history');
  });

  it('deletes what it made, and the operational endpoints answer', async () => {
    await expectStatus(200, 'delete', `/v1/namespaces/${ns}/resourcequotas/spare`);
    await expectStatus(404, 'delete', `/v1/namespaces/${ns}/resourcequotas/spare`);
    await expectStatus(200, 'delete', `/v1/namespaces/${ns}/limitranges/defaults`);
    await expectStatus(404, 'delete', `/v1/namespaces/${ns}/limitranges/defaults`);
    await expectStatus(200, 'get', '/healthz');
    await expectStatus(400, 'get', '/healthz?probe=%00');
    const ready = await call('get', '/readyz?exclude=queue');
    expect([200, 503]).toContain(ready.status);
    await expectStatus(200, 'get', '/metrics');
  });

  it('answers a client over its rate limit with the documented 429', async () => {
    const limited = await startApi(
      { insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)), rateLimitPerSecond: 1, rateLimitBurst: 1 },
      'qlopenapirate',
    );
    try {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await call('get', '/v1/whoami', { base: limited.base }));
      expect(answers.map((a) => a.status)).toContain(429);
    } finally {
      await limited.close();
    }
  });

  it('walked every operation to a success answer, and each kind of refusal at least once', () => {
    const unwalked = operations()
      .map(([path, method]) => `${method} ${path}`)
      .filter((operation) => ![...(answered.get(operation) ?? [])].some((status) => status.startsWith('2')));
    expect(unwalked, 'operations never answered 2xx in the walk').toEqual([]);
    const statuses = new Set([...answered.values()].flatMap((set) => [...set]));
    for (const status of ['400', '401', '403', '404', '409', '413', '415', '422', '429']) expect(statuses, status).toContain(status);
  });
});
