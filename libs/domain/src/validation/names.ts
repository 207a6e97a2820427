import { exceedsBytes } from './field.js';

/**
 * Kubernetes' name formats (k8s.io/apimachinery util/validation and api/validate/content).
 * Each check returns the list of problems, in Kubernetes' words; empty means valid.
 *
 * Two message families exist upstream: DNS names and namespaces count "characters",
 * label keys and values (the `content` package) count "bytes". Both are kept.
 */

export function regexError(message: string, format: string, ...examples: string[]): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${format}')`;
  return `${message} (e.g. ${examples.map((e) => `'${e}', `).join('or ')}regex used for validation is '${format}')`;
}

const maxLenCharacters = (n: number): string => `must be no more than ${n} characters`;
const maxLenBytes = (n: number): string => `must be no more than ${n} bytes`;
export const EMPTY_ERROR = 'must be non-empty';

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_ERR =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_ERR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

/** RFC 1123 label: namespaces. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (exceedsBytes(value, DNS1123_LABEL_MAX_LENGTH)) errs.push(maxLenCharacters(DNS1123_LABEL_MAX_LENGTH));
  if (!DNS1123_LABEL_RE.test(value)) {
    // Length was checked already, so a valid subdomain that is no label has dots.
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_ERR, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL_ERR =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const DNS1035_LABEL_RE = new RegExp(`^${DNS1035_LABEL_FMT}$`);

/** RFC 1035 label: Service names (they become DNS names in the cluster). */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (exceedsBytes(value, DNS1123_LABEL_MAX_LENGTH)) errs.push(maxLenCharacters(DNS1123_LABEL_MAX_LENGTH));
  if (!DNS1035_LABEL_RE.test(value)) errs.push(regexError(DNS1035_LABEL_ERR, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  return errs;
}

export function nameIsDNS1035Label(name: string, prefix: boolean): string[] {
  return isDNS1035Label(prefix ? maskTrailingDash(name) : name);
}

/**
 * `path.IsValidPathSegmentName`: what RBAC names must be (`system:controller:…` is one). Kubernetes
 * sets no length; the ledger stores names, so it holds them to a subdomain's 253 as well.
 */
export function nameIsPathSegment(name: string, prefix: boolean): string[] {
  const errs: string[] = [];
  if (exceedsBytes(name, DNS1123_SUBDOMAIN_MAX_LENGTH)) errs.push(maxLenCharacters(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!prefix && (name === '.' || name === '..')) errs.push(`may not be '${name}'`);
  if (name.includes('/')) errs.push("may not contain '/'");
  if (name.includes('%')) errs.push("may not contain '%'");
  return errs;
}

function dns1123Subdomain(value: string, maxLen: (n: number) => string): string[] {
  const errs: string[] = [];
  if (exceedsBytes(value, DNS1123_SUBDOMAIN_MAX_LENGTH)) errs.push(maxLen(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

/** RFC 1123 subdomain: object names. */
export function isDNS1123Subdomain(value: string): string[] {
  return dns1123Subdomain(value, maxLenCharacters);
}

/**
 * Kubernetes' generateName check: a trailing dash is allowed because a suffix follows.
 * (It drops the last two characters and appends "a", exactly as upstream does.)
 */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

export function nameIsDNSSubdomain(name: string, prefix: boolean): string[] {
  return isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
}

export function nameIsDNSLabel(name: string, prefix: boolean): string[] {
  return isDNS1123Label(prefix ? maskTrailingDash(name) : name);
}

const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_KEY_ERR = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_RE = new RegExp(`^${LABEL_KEY_FMT}$`);
const LABEL_KEY_MAX_LENGTH = 63;

/**
 * A "qualified name" (a label key): an optional DNS-subdomain prefix and a `/`, then a
 * name of at most 63 bytes. Resource names, limit types and finalizers use it too.
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] as string;
  } else if (parts.length === 2) {
    const prefix = parts[0] as string;
    name = parts[1] as string;
    if (prefix.length === 0) errs.push(`prefix part ${EMPTY_ERROR}`);
    else errs.push(...dns1123Subdomain(prefix, maxLenBytes).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a valid label key ${regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${EMPTY_ERROR}`);
  else if (exceedsBytes(name, LABEL_KEY_MAX_LENGTH)) errs.push(`name part ${maxLenBytes(LABEL_KEY_MAX_LENGTH)}`);
  if (!LABEL_KEY_RE.test(name)) errs.push(`name part ${regexError(LABEL_KEY_ERR, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

const LABEL_VALUE_FMT = `(${LABEL_KEY_FMT})?`;
const LABEL_VALUE_ERR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const LABEL_VALUE_MAX_LENGTH = 63;

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (exceedsBytes(value, LABEL_VALUE_MAX_LENGTH)) errs.push(maxLenBytes(LABEL_VALUE_MAX_LENGTH));
  if (!LABEL_VALUE_RE.test(value)) errs.push(regexError(LABEL_VALUE_ERR, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}
