import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { formatResource, needsWholeObject, sameResource, type KnownKind } from './kinds.js';
import type { SettleSignal, WatchState } from './inventory.js';
import { isRecord } from './objects.js';
import { runWatchLoop, WatchGone, type WatchEvent, type WatchLoopOptions, type WatchTransport } from './watch.js';

/**
 * The Kubernetes side of watching (watch.ts has the loop): one cluster-wide list+watch per
 * charged kind, pods whole (their phase is in the status), every other kind metadata-only
 * (`PartialObjectMetadata`: a Secret's data is never sent). What it reports is only what
 * settles a reservation: a pod that reached Succeeded or Failed, an object deleted (at once),
 * an object added (its reservation committed, or the object adopted if nobody reserved it;
 * coalesced per namespace by the reconciler). The watch starts at the resourceVersion of a
 * one-object list, so the objects that already exist are never reported as added (a relist is
 * no settle storm). The reconciler then settles the namespace (the same decision as a periodic pass).
 */

export interface KubeWatchContext {
  readonly server: string;
  readonly config: KubeConfig;
  readonly timeoutMs: number;
}

const WATCH_METADATA_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const LIST_METADATA_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
/** The server ends each watch after this long (it is resumed from the last resourceVersion). */
const WATCH_TIMEOUT_SECONDS = 300;
/** Pods remembered as already reported terminal, so that later status writes do not report them again. */
const TERMINAL_REMEMBERED_MAX = 100_000;

export const collectionPath = (kind: KnownKind): string =>
  (kind.groupResource.group === '' ? `/api/${kind.apiVersion}` : `/apis/${kind.apiVersion}`) + `/${kind.groupResource.resource}`;

/** Watches one kind across the cluster until `signal` aborts; `onSignal` hears each settling change. */
export function watchKind(
  ctx: KubeWatchContext,
  kind: KnownKind,
  signal: AbortSignal,
  onSignal: (change: SettleSignal) => void,
  onState?: (state: WatchState) => void,
  loop: Pick<WatchLoopOptions, 'backoffMs' | 'maxBackoffMs'> = {},
): Promise<void> {
  const terminal = new Set<string>();
  const onEvent = (event: WatchEvent): void => {
    const change = settleSignalOf(kind, event, terminal);
    if (change) onSignal(change);
  };
  const resource = formatResource(kind.groupResource);
  return runWatchLoop(kubeTransport(ctx, kind), signal, {
    ...loop,
    onEvent,
    onState: (state, detail) =>
      onState?.({
        resource,
        state,
        ...(detail?.error ? { error: (detail.error as Error).message } : {}),
        ...(detail?.waitMs ? { waitMs: detail.waitMs } : {}),
      }),
  });
}

/** What one watch event settles, if anything. `terminal` holds the pods already reported finished. */
export function settleSignalOf(kind: KnownKind, event: WatchEvent, terminal: Set<string>): SettleSignal | undefined {
  const metadata = isRecord(event.object['metadata']) ? event.object['metadata'] : {};
  const { namespace, uid, name } = metadata;
  if (typeof namespace !== 'string' || typeof uid !== 'string' || typeof name !== 'string') return undefined;
  const base = { namespace, groupResource: kind.groupResource, uid, name };
  if (event.type === 'DELETED') {
    terminal.delete(uid);
    return { ...base, why: 'deleted' };
  }
  const added = event.type === 'ADDED' ? { ...base, why: 'added' as const } : undefined;
  if (!sameResource(kind.groupResource, { group: '', resource: 'pods' })) return added;
  const status = isRecord(event.object['status']) ? event.object['status'] : {};
  if (status['phase'] !== 'Succeeded' && status['phase'] !== 'Failed') return added;
  if (terminal.has(uid)) return added;
  if (terminal.size >= TERMINAL_REMEMBERED_MAX) terminal.clear();
  terminal.add(uid);
  return { ...base, why: 'terminal' };
}

/** List (one object, for the resourceVersion) and watch of one kind across the cluster. */
export function kubeTransport(ctx: KubeWatchContext, kind: KnownKind): WatchTransport {
  return collectionTransport(ctx, collectionPath(kind), needsWholeObject(kind.groupResource) ? 'whole' : 'metadata');
}

/**
 * List (one object, for the resourceVersion) and watch of the collection at `path` (say
 * `/apis/quota-ledger.io/v1alpha1/ledgerquotas`, every namespace's), its events carrying whole
 * objects or their metadata only.
 */
export function collectionTransport(ctx: KubeWatchContext, path: string, objects: 'whole' | 'metadata'): WatchTransport {
  const accept = objects === 'whole' ? 'application/json' : WATCH_METADATA_ACCEPT;
  return {
    async list(signal) {
      const response = await open(ctx, `${path}?limit=1`, LIST_METADATA_ACCEPT, signal, AbortSignal.timeout(ctx.timeoutMs));
      const body = await readAll(response);
      if (response.statusCode !== 200) throw statusError(`GET ${path}`, response.statusCode, body);
      const parsed = JSON.parse(body) as unknown;
      const version = isRecord(parsed) && isRecord(parsed['metadata']) ? parsed['metadata']['resourceVersion'] : undefined;
      if (typeof version !== 'string' || version === '') throw new Error(`GET ${path}: the list has no resourceVersion`);
      return version;
    },
    async *watch(resourceVersion, signal, onOpen) {
      const query = new URLSearchParams({
        watch: '1',
        resourceVersion,
        allowWatchBookmarks: 'true',
        timeoutSeconds: String(WATCH_TIMEOUT_SECONDS),
      });
      const response = await open(ctx, `${path}?${query}`, accept, signal);
      if (response.statusCode === 410) {
        response.resume();
        throw new WatchGone();
      }
      if (response.statusCode !== 200) throw statusError(`watch ${path}`, response.statusCode, await readAll(response));
      onOpen?.();
      let buffered = '';
      for await (const chunk of response as AsyncIterable<Buffer>) {
        buffered += chunk.toString('utf8');
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line !== '') yield parseEvent(line);
        }
      }
    },
  };
}

function parseEvent(line: string): WatchEvent {
  const event = JSON.parse(line) as unknown;
  if (!isRecord(event) || typeof event['type'] !== 'string' || !isRecord(event['object']))
    throw new Error(`not a watch event: ${line.slice(0, 200)}`);
  return event as unknown as WatchEvent;
}

function statusError(what: string, status: number | undefined, body: string): Error {
  return status === 410 ? new WatchGone(`${what}: 410`) : new Error(`${what}: HTTP ${status ?? 0}: ${body.slice(0, 300)}`);
}

async function open(ctx: KubeWatchContext, pathAndQuery: string, accept: string, ...signals: AbortSignal[]): Promise<http.IncomingMessage> {
  const options: https.RequestOptions = {};
  await ctx.config.applyToHTTPSOptions(options);
  const url = new URL(`${ctx.server}${pathAndQuery}`);
  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const headers = { ...(options.headers as http.OutgoingHttpHeaders | undefined), accept };
    const request = send(url, { ...options, method: 'GET', headers, signal: AbortSignal.any(signals) }, resolve);
    request.on('error', reject);
    request.end();
  });
}

async function readAll(response: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}
