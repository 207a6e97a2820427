import { Quantity } from '@quota/domain';

/**
 * A quantity as a number, for drawing only: exact values stay strings (shown as the API gives
 * them); a chart needs a position, and a double is precise enough for a pixel.
 */
export function quantityNumber(value: string | undefined): number {
  if (value === undefined) return 0;
  const quantity = Quantity.tryParse(value);
  return quantity ? Number(quantity.milliValue()) / 1000 : Number.NaN;
}

/**
 * used/hard for a bar (exact strings are what the page prints). A hard limit of zero is full
 * (nothing more fits), and past full when anything is used.
 */
export function usageRatio(used: string | undefined, hard: string): number {
  const limit = quantityNumber(hard);
  const value = quantityNumber(used ?? '0');
  if (!(limit > 0)) return value > 0 ? Infinity : 1;
  return value / limit;
}

/** "3 s", "4 min", "2 h 5 min", "3 d 4 h": how long ago, coarse enough to read at a glance. */
export function age(fromIso: string, nowMs: number): string {
  const seconds = Math.max(0, Math.floor((nowMs - Date.parse(fromIso)) / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

/** A percentage for people: whole numbers, "<1 %" for a sliver, "≥1000 %" for the absurd. */
export function percent(ratio: number): string {
  if (!Number.isFinite(ratio) || ratio >= 10) return '≥1000 %';
  if (ratio > 0 && ratio < 0.01) return '<1 %';
  return `${Math.round(ratio * 100)} %`;
}

/** An instant in the reader's time zone, to the second: "2026-11-23 14:05:09". */
export function localTime(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** `pods: 1, requests.cpu: 100m` */
export function resourceList(list: Readonly<Record<string, string>> | undefined): string {
  const entries = Object.entries(list ?? {});
  return entries.length === 0 ? 'nothing' : entries.map(([name, value]) => `${name}: ${value}`).join(', ');
}

/** The principal that asked, and the user it asked for when a trusted relay named one. */
export const who = (requester: string | undefined, onBehalfOf: string | undefined): string =>
  (requester ?? '—') + (onBehalfOf ? ` for ${onBehalfOf}` : '');

/**
 * An instant typed by a person: the page's own form ("2026-11-23 14:05:09", in the reader's time
 * zone, seconds optional) or RFC 3339 with a zone. Undefined when it is neither.
 */
export function parseInstant(text: string): string | undefined {
  const value = text.trim();
  const local = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d{1,3})?)?$/.test(value);
  const zoned = /^\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)$/i.test(value);
  if (!local && !zoned) return undefined;
  const ms = Date.parse(local ? value.replace(' ', 'T') : value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}
