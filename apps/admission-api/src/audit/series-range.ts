import { BadRequestException } from '@nestjs/common';
import type { LedgerClock } from '@quota/ledger';
import { kubeStatus } from '../errors/kube-status.js';
import type { UsageSeriesQueryDto } from './audit.dto.js';

const SERIES_DEFAULT_RANGE_MS = 24 * 3600 * 1000;
const SERIES_DEFAULT_POINTS = 100;

/**
 * The range and sample count of a usage series request: until defaults to now (the ledger's
 * clock), since to a day before until, points to 100; since must come before until.
 */
export async function seriesRange(
  query: UsageSeriesQueryDto,
  clock: LedgerClock,
): Promise<{ since: string; until: string; points: number }> {
  const until = query.until ?? new Date(await clock.now()).toISOString();
  const since = query.since ?? new Date(Date.parse(until) - SERIES_DEFAULT_RANGE_MS).toISOString();
  if (Date.parse(since) >= Date.parse(until)) {
    const message = `since (${since}) must be before until (${until})`;
    throw new BadRequestException(kubeStatus(400, message, { causes: [{ reason: 'FieldValueInvalid', field: 'since', message }] }));
  }
  return { since, until, points: query.points ?? SERIES_DEFAULT_POINTS };
}
