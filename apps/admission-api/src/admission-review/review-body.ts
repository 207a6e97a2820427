import { ANY_KIND_FIELDS, fieldsRead, keys, OBJECT_FIELDS, WHOLE, type FieldSelection, type GroupResource } from '@quota/domain';
import { ScannedBody, SelectionTooLarge, selectionBudget, type SelectionBudget } from '../common/json-scan/json-select.js';
import { ReviewMalformed } from './admission-review.js';

const strings = (...names: string[]): FieldSelection => keys(Object.fromEntries(names.map((name) => [name, WHOLE])));

/** What the webhook reads of an AdmissionReview's request besides its objects: strings, and objects of strings. */
const REQUEST_FIELDS: Readonly<Record<string, FieldSelection>> = {
  uid: WHOLE,
  kind: strings('group', 'version', 'kind'),
  resource: strings('group', 'version', 'resource'),
  subResource: WHOLE,
  name: WHOLE,
  namespace: WHOLE,
  operation: WHOLE,
  userInfo: strings('username'),
  dryRun: WHOLE,
};
const HEADER = keys({ apiVersion: WHOLE, kind: WHOLE, request: keys(REQUEST_FIELDS) });

/** What the webhook's body scan records (body-guard.ts `@JsonBody`): the review, and of its objects what admission reads of any kind. */
export const REVIEW_SCAN: FieldSelection = keys({
  apiVersion: WHOLE,
  kind: WHOLE,
  request: keys({ ...REQUEST_FIELDS, object: ANY_KIND_FIELDS, oldObject: ANY_KIND_FIELDS }),
});

/** The review to decide: what admission reads of it, and, when its objects' fields are more than it reads, why they were left out. */
export interface ReviewBody {
  readonly review: unknown;
  readonly tooLarge?: SelectionTooLarge;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The reviewed kind, when the request names one well enough to choose what to read of its objects. */
function groupResourceOf(request: unknown): GroupResource | undefined {
  const resource = isObject(request) ? request['resource'] : undefined;
  if (!isObject(resource) || typeof resource['resource'] !== 'string') return undefined;
  return { group: typeof resource['group'] === 'string' ? resource['group'] : '', resource: resource['resource'] };
}

/**
 * The review as the webhook decides it, from a scanned body: its request, and of its object and
 * oldObject only what admission reads of the reviewed kind (@quota/domain fieldsRead). A body
 * already parsed (not scanned) is taken as it is. Fields of the request itself over their bound
 * make the review unreadable (400); objects over theirs leave the review without them, to be
 * refused by name (`tooLarge`).
 */
export function reviewBodyOf(body: unknown): ReviewBody {
  if (!(body instanceof ScannedBody)) return { review: body };
  let header: unknown;
  try {
    header = body.read(body.root, HEADER, 'request', selectionBudget());
  } catch (error) {
    if (error instanceof SelectionTooLarge) throw new ReviewMalformed(error.field.replace(/^request\.?/, '') || 'body', error.detail);
    throw error;
  }
  const request = isObject(header) ? header['request'] : undefined;
  if (!isObject(request)) return { review: header };
  const groupResource = groupResourceOf(request);
  const budget = selectionBudget();
  try {
    for (const field of ['object', 'oldObject'] as const) readObject(body, request, field, groupResource, budget);
  } catch (error) {
    if (!(error instanceof SelectionTooLarge)) throw error;
    delete request['object'];
    delete request['oldObject'];
    return { review: header, tooLarge: error };
  }
  return { review: header };
}

function readObject(
  body: ScannedBody,
  request: Record<string, unknown>,
  field: 'object' | 'oldObject',
  groupResource: GroupResource | undefined,
  budget: SelectionBudget,
): void {
  const found = body.at(['request', field]);
  if (found) request[field] = body.read(found, groupResource ? fieldsRead(groupResource) : OBJECT_FIELDS, `request.${field}`, budget);
}
