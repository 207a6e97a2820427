import { BadRequestException } from '@nestjs/common';
import type { ObjectMeta } from '@quota/domain';
import { kubeStatus } from '../../errors/kube-status.js';

/**
 * What the admin endpoints share: reading a PUT body's identity against the URL the way the
 * API server does, and rendering stored objects with Kubernetes metadata.
 */
export interface StoredMeta {
  readonly name: string;
  readonly namespace: string;
  readonly version: number;
  readonly createdAt: string;
  readonly metadata?: Pick<ObjectMeta, 'labels' | 'annotations' | 'uid' | 'creationTimestamp'>;
}

export function renderMetadata(stored: StoredMeta): ObjectMeta {
  const m = stored.metadata ?? {};
  return {
    name: stored.name,
    namespace: stored.namespace,
    ...(m.uid ? { uid: m.uid } : {}),
    resourceVersion: String(stored.version),
    creationTimestamp: m.creationTimestamp ?? stored.createdAt,
    ...(m.labels && Object.keys(m.labels).length > 0 ? { labels: m.labels } : {}),
    ...(m.annotations && Object.keys(m.annotations).length > 0 ? { annotations: m.annotations } : {}),
  };
}

export interface PutIdentity {
  /** The body with metadata.name and metadata.namespace filled from the URL. */
  readonly body: Record<string, unknown>;
  /** `metadata.resourceVersion`, when the caller sent one. */
  readonly expectedVersion?: number;
}

const bad = (message: string, field?: string): BadRequestException =>
  new BadRequestException(kubeStatus(400, message, field ? { causes: [{ reason: 'FieldValueInvalid', field, message }] } : undefined));

/**
 * The API server's checks of an update's identity: the object's name and namespace must
 * match the URL (filled in when absent), and a resourceVersion must be a version we issued.
 */
export function readPutIdentity(raw: unknown, namespace: string, name: string, kind: string): PutIdentity {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw bad(`the request body must be a ${kind} object`);
  }
  const body = raw as Record<string, unknown>;
  const metadataRaw = body['metadata'] ?? {};
  if (typeof metadataRaw !== 'object' || metadataRaw === null || Array.isArray(metadataRaw)) {
    throw bad('metadata must be an object', 'metadata');
  }
  const metadata = { ...(metadataRaw as Record<string, unknown>) };
  if (metadata['name'] !== undefined && metadata['name'] !== name) {
    throw bad(`the name of the object (${String(metadata['name'])}) does not match the name on the URL (${name})`, 'metadata.name');
  }
  if (metadata['namespace'] !== undefined && metadata['namespace'] !== namespace) {
    throw bad('the namespace of the provided object does not match the namespace sent on the request', 'metadata.namespace');
  }
  let expectedVersion: number | undefined;
  const resourceVersion = metadata['resourceVersion'];
  if (resourceVersion !== undefined && resourceVersion !== '') {
    if (typeof resourceVersion !== 'string' || !/^[1-9][0-9]{0,15}$/.test(resourceVersion)) {
      throw bad(
        `metadata.resourceVersion: Invalid value: ${JSON.stringify(resourceVersion)}: must be a resourceVersion this server returned`,
        'metadata.resourceVersion',
      );
    }
    expectedVersion = Number(resourceVersion);
  }
  // Server-set fields a client may echo back from a read: ignored, as the API server ignores them.
  for (const field of ['resourceVersion', 'uid', 'creationTimestamp', 'generation', 'managedFields', 'selfLink']) delete metadata[field];
  const { status: _status, ...rest } = body;
  return {
    body: { ...rest, metadata: { ...metadata, name, namespace } },
    ...(expectedVersion === undefined ? {} : { expectedVersion }),
  };
}
