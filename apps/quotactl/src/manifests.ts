import { parseAllDocuments } from 'yaml';
import { UsageError } from './errors.js';

export type KubeObject = Record<string, unknown> & {
  readonly apiVersion?: unknown;
  readonly kind?: unknown;
  readonly metadata?: unknown;
};

export interface SourcedObject {
  readonly object: KubeObject;
  /** `quota.yaml` or `quota.yaml (document 2)`, to name it in errors. */
  readonly source: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Every object of a YAML stream (JSON is YAML too), with `kind: List` unwrapped as kubectl
 * unwraps it. Empty documents are skipped; anything that is not an object is a usage error.
 */
export function parseObjects(text: string, file: string): SourcedObject[] {
  const documents = parseAllDocuments(text, { prettyErrors: true });
  const list = Array.isArray(documents) ? documents : [];
  const many = list.length > 1;
  const objects: SourcedObject[] = [];
  list.forEach((document, index) => {
    const source = many ? `${file} (document ${index + 1})` : file;
    const [error] = document.errors;
    if (error) throw new UsageError(`error parsing ${source}: ${error.message.split('\n')[0]}`);
    const value: unknown = document.toJS({ maxAliasCount: 1000 });
    if (value === null || value === undefined) return;
    if (!isObject(value))
      throw new UsageError(
        `error parsing ${source}: a document must be an object with apiVersion and kind, got ${Array.isArray(value) ? 'a list' : JSON.stringify(value)}`,
      );
    if (
      value['kind'] === 'List' ||
      (typeof value['kind'] === 'string' && value['kind'].endsWith('List') && Array.isArray(value['items']))
    ) {
      const items = value['items'];
      if (!Array.isArray(items)) throw new UsageError(`error parsing ${source}: a List needs items`);
      items.forEach((item, i) => {
        if (!isObject(item)) throw new UsageError(`error parsing ${source}: items[${i}] is not an object`);
        objects.push({ object: item, source: `${source} items[${i}]` });
      });
      return;
    }
    objects.push({ object: value, source });
  });
  return objects;
}

/** metadata.name and metadata.namespace, when they are strings. */
export function identity(object: KubeObject): { name: string | undefined; namespace: string | undefined } {
  const metadata = isObject(object.metadata) ? object.metadata : {};
  return {
    name: typeof metadata['name'] === 'string' && metadata['name'] !== '' ? metadata['name'] : undefined,
    namespace: typeof metadata['namespace'] === 'string' && metadata['namespace'] !== '' ? metadata['namespace'] : undefined,
  };
}

/**
 * The namespace an object goes to: its own, else `-n`, else the default (the kubeconfig context's
 * namespace, else "default": kubectl's rules), and kubectl's refusal when its own and `-n` disagree.
 */
export function targetNamespace(object: KubeObject, flagNamespace: string | undefined, fallback = 'default'): string {
  const own = identity(object).namespace;
  if (own !== undefined && flagNamespace !== undefined && own !== flagNamespace) {
    throw new UsageError(
      `the namespace from the provided object "${own}" does not match the namespace "${flagNamespace}". You must pass '--namespace=${own}' to perform this operation.`,
    );
  }
  return own ?? flagNamespace ?? fallback;
}
