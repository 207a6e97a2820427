import { createHash } from 'node:crypto';
import type { AdmitCommand } from '../ledger.types.js';

/**
 * What an idempotency key was used for: the SHA-256 of the request's canonical JSON (keys
 * sorted at every level, so the same request spelled in another key order is the same). A
 * repeated key must come with the same request, from the same principal, or it is a conflict
 * (a reused key used to answer a different body with the first body's answer).
 * dryRun is left out: dry runs never store a key.
 */
export function requestDigest(command: AdmitCommand): string {
  const { namespace, source, request, resources, ttlMs, requester, onBehalfOf } = command;
  return createHash('sha256')
    .update(canonicalJson({ namespace, source, request, resources, ttlMs, requester, onBehalfOf }))
    .digest('base64url');
}

/** JSON with every object's keys sorted (undefined members left out, as JSON.stringify does). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += `${i > 0 ? ',' : ''}${value[i] === undefined ? 'null' : canonicalJson(value[i])}`;
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const key of Object.keys(record).sort()) {
    if (record[key] === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${canonicalJson(record[key])}`;
  }
  return `${out}}`;
}
