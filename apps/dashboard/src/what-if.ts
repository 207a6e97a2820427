/** The body of POST /v1/namespaces/{ns}/whatif. */
export interface WhatIfBody {
  readonly kind: string;
  readonly apiVersion?: string;
  readonly resource?: string;
  readonly name?: string;
  readonly operation?: 'CREATE' | 'UPDATE';
  readonly object?: Record<string, unknown>;
  readonly oldObject?: Record<string, unknown>;
  readonly resources?: Record<string, unknown>;
}

export type Pasted = { readonly ok: true; readonly body: WhatIfBody; readonly namespace?: string; readonly what: string } | { readonly ok: false; readonly problem: string };

/** The pasted text is bounded before parsing: a what-if is one object, not a file. */
export const PASTE_MAX_CHARS = 256 * 1024;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What a person may paste into the what-if box, turned into a what-if body:
 * - a Kubernetes object as `kubectl get -o json` prints it (a Pod, a Service, a PVC, ...);
 * - an AdmissionReview (its request's object, oldObject and operation);
 * - a REST reservation body (`{"kind": "Pod", "object": {...}}` or `{"kind": ..., "resources": {...}}`).
 * The namespace, when the paste names one, is returned so the page can say if it differs.
 */
export function parsePasted(text: string): Pasted {
  if (text.trim() === '') return { ok: false, problem: 'Paste a Pod (or another object) as JSON, an AdmissionReview, or a REST reservation body.' };
  if (text.length > PASTE_MAX_CHARS) return { ok: false, problem: `That is ${text.length.toLocaleString('en-US')} characters; a what-if takes at most ${PASTE_MAX_CHARS.toLocaleString('en-US')}.` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const hint = /^\s*[A-Za-z]+:/.test(text) ? ' It looks like YAML: paste JSON (kubectl get pod NAME -o json).' : '';
    return { ok: false, problem: `Not JSON: ${(error as Error).message}.${hint}` };
  }
  if (!isObject(value)) return { ok: false, problem: 'Expected a JSON object ({ ... }).' };

  if (value['kind'] === 'AdmissionReview') {
    const request = value['request'];
    if (!isObject(request) || !isObject(request['object'])) return { ok: false, problem: 'This AdmissionReview has no request.object to ask about.' };
    const object = request['object'];
    const operation = request['operation'];
    if (operation !== undefined && operation !== 'CREATE' && operation !== 'UPDATE') return { ok: false, problem: `Only a CREATE or UPDATE is charged; this review is a ${String(operation)}.` };
    const kind = typeof object['kind'] === 'string' ? object['kind'] : undefined;
    if (!kind) return { ok: false, problem: 'request.object has no kind.' };
    const namespace = typeof request['namespace'] === 'string' ? request['namespace'] : namespaceOf(object);
    return {
      ok: true,
      body: { kind, object, ...(operation === 'UPDATE' ? { operation, ...(isObject(request['oldObject']) ? { oldObject: request['oldObject'] } : {}) } : {}) },
      ...(namespace ? { namespace } : {}),
      what: `${operation ?? 'CREATE'} of ${kind} ${nameOf(object) ?? ''}`.trim(),
    };
  }
  if (isObject(value['object']) || isObject(value['resources'])) {
    if (typeof value['kind'] !== 'string') return { ok: false, problem: 'A REST reservation body needs a kind (for example "Pod").' };
    const { requestId: _requestId, dryRun: _dryRun, ttlSeconds: _ttl, ...body } = value;
    const object = isObject(value['object']) ? value['object'] : undefined;
    const namespace = object ? namespaceOf(object) : undefined;
    return { ok: true, body: body as unknown as WhatIfBody, ...(namespace ? { namespace } : {}), what: `${value['kind']} ${typeof value['name'] === 'string' ? value['name'] : (object && nameOf(object)) ?? ''}`.trim() };
  }
  if (typeof value['kind'] === 'string' && typeof value['apiVersion'] === 'string') {
    const namespace = namespaceOf(value);
    // kubectl's own bookkeeping is not part of what is admitted; a pasted live object carries it.
    const { status: _status, ...object } = value;
    return { ok: true, body: { kind: value['kind'], object }, ...(namespace ? { namespace } : {}), what: `${value['kind']} ${nameOf(value) ?? ''}`.trim() };
  }
  return { ok: false, problem: 'Not an object this box understands: expected apiVersion and kind (a Kubernetes object), an AdmissionReview, or a body with kind and object or resources.' };
}

function metadataOf(object: Record<string, unknown>): Record<string, unknown> | undefined {
  const metadata = object['metadata'];
  return isObject(metadata) ? metadata : undefined;
}

function namespaceOf(object: Record<string, unknown>): string | undefined {
  const namespace = metadataOf(object)?.['namespace'];
  return typeof namespace === 'string' ? namespace : undefined;
}

function nameOf(object: Record<string, unknown>): string | undefined {
  const name = metadataOf(object)?.['name'];
  return typeof name === 'string' ? name : undefined;
}
