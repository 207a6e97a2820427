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

export type Pasted =
  | { readonly ok: true; readonly body: WhatIfBody; readonly namespace?: string; readonly what: string }
  | { readonly ok: false; readonly problem: string };

/** The pasted text is bounded before parsing: a what-if is one object, not a file. */
export const PASTE_MAX_CHARS = 256 * 1024;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The YAML parser's one function the box uses: the `yaml` package, loaded (as its own chunk) only when YAML is pasted. */
export type YamlLoader = () => Promise<{ parseAllDocuments: typeof import('yaml').parseAllDocuments }>;
const loadYaml: YamlLoader = () => import('yaml');

/**
 * What a person may paste into the what-if box, turned into a what-if body:
 * - a Kubernetes object as `kubectl get -o yaml` or `-o json` prints it (a Pod, a Service, a PVC, ...);
 * - an AdmissionReview (its request's object, oldObject and operation);
 * - a REST reservation body (`{"kind": "Pod", "object": {...}}` or `{"kind": ..., "resources": {...}}`).
 * JSON is read at once; anything else is read as YAML, whose parser is fetched the first time
 * it is needed, so a page that never sees YAML never loads it. The namespace, when the paste
 * names one, is returned so the page can say if it differs.
 */
export async function parsePasted(text: string, yaml: YamlLoader = loadYaml): Promise<Pasted> {
  if (text.trim() === '')
    return { ok: false, problem: 'Paste a Pod (or another object) as YAML or JSON, an AdmissionReview, or a REST reservation body.' };
  if (text.length > PASTE_MAX_CHARS)
    return {
      ok: false,
      problem: `That is ${text.length.toLocaleString('en-US')} characters; a what-if takes at most ${PASTE_MAX_CHARS.toLocaleString('en-US')}.`,
    };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // Braces or brackets first: JSON with a mistake, not YAML (whose flow style would hide it).
    if (/^\s*[[{]/.test(text)) return { ok: false, problem: `Not JSON: ${(error as Error).message}.` };
    const read = await readYaml(text, yaml);
    if (!read.ok) return read;
    value = read.value;
  }
  return interpret(value);
}

/** One YAML document as plain values; several documents, or a syntax error, say so. */
async function readYaml(text: string, yaml: YamlLoader): Promise<{ ok: true; value: unknown } | { ok: false; problem: string }> {
  let documents: ReturnType<typeof import('yaml').parseAllDocuments>;
  try {
    documents = (await yaml()).parseAllDocuments(text);
  } catch (error) {
    return {
      ok: false,
      problem: `Could not load the YAML reader: ${(error as Error).message}. Paste JSON instead (kubectl get pod NAME -o json).`,
    };
  }
  if (!Array.isArray(documents)) return { ok: false, problem: 'Not YAML or JSON: nothing to read.' };
  const problem = documents.flatMap((d) => d.errors)[0];
  // The parser's message names the line and column ("… at line 2, column 7:"); the excerpt after it is left out.
  if (problem) return { ok: false, problem: `Not YAML or JSON: ${(problem.message.split('\n')[0] ?? '').replace(/:$/, '')}.` };
  const present = documents.filter((d) => d.contents !== null);
  if (present.length !== 1)
    return { ok: false, problem: `A what-if takes one object; this has ${present.length} YAML documents (separated by ---).` };
  return { ok: true, value: (present[0] as (typeof present)[number]).toJS({ maxAliasCount: 100 }) };
}

/** A parsed paste (from JSON or YAML) as a what-if body. */
function interpret(value: unknown): Pasted {
  if (!isObject(value)) return { ok: false, problem: 'Expected an object: { ... } in JSON, or key: value lines in YAML.' };

  if (value['kind'] === 'AdmissionReview') {
    const request = value['request'];
    if (!isObject(request) || !isObject(request['object']))
      return { ok: false, problem: 'This AdmissionReview has no request.object to ask about.' };
    const object = request['object'];
    const operation = request['operation'];
    if (operation !== undefined && operation !== 'CREATE' && operation !== 'UPDATE')
      return { ok: false, problem: `Only a CREATE or UPDATE is charged; this review is a ${String(operation)}.` };
    const kind = typeof object['kind'] === 'string' ? object['kind'] : undefined;
    if (!kind) return { ok: false, problem: 'request.object has no kind.' };
    const namespace = typeof request['namespace'] === 'string' ? request['namespace'] : namespaceOf(object);
    return {
      ok: true,
      body: {
        kind,
        object,
        ...(operation === 'UPDATE' ? { operation, ...(isObject(request['oldObject']) ? { oldObject: request['oldObject'] } : {}) } : {}),
      },
      ...(namespace ? { namespace } : {}),
      what: `${operation ?? 'CREATE'} of ${kind} ${nameOf(object) ?? ''}`.trim(),
    };
  }
  if (isObject(value['object']) || isObject(value['resources'])) {
    if (typeof value['kind'] !== 'string') return { ok: false, problem: 'A REST reservation body needs a kind (for example "Pod").' };
    const { requestId: _requestId, dryRun: _dryRun, ttlSeconds: _ttl, ...body } = value;
    const object = isObject(value['object']) ? value['object'] : undefined;
    const namespace = object ? namespaceOf(object) : undefined;
    return {
      ok: true,
      body: body as unknown as WhatIfBody,
      ...(namespace ? { namespace } : {}),
      what: `${value['kind']} ${typeof value['name'] === 'string' ? value['name'] : ((object && nameOf(object)) ?? '')}`.trim(),
    };
  }
  if (typeof value['kind'] === 'string' && typeof value['apiVersion'] === 'string') {
    const namespace = namespaceOf(value);
    // kubectl's own bookkeeping is not part of what is admitted; a pasted live object carries it.
    const { status: _status, ...object } = value;
    return {
      ok: true,
      body: { kind: value['kind'], object },
      ...(namespace ? { namespace } : {}),
      what: `${value['kind']} ${nameOf(value) ?? ''}`.trim(),
    };
  }
  return {
    ok: false,
    problem:
      'Not an object this box understands: expected apiVersion and kind (a Kubernetes object), an AdmissionReview, or a body with kind and object or resources.',
  };
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
