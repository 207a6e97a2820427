import { Controller, Get, Header, Inject, Query, Res } from '@nestjs/common';
import { withTimeout } from '@quota/ops';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Metrics } from '../observability/metrics.js';
import { ReconcileTrigger } from '../reconcile/reconcile-trigger.js';

const CHECK_TIMEOUT_MS = 2000;

/**
 * Liveness, readiness and metrics, open to every caller (no tokens: probes and Prometheus
 * scrape them). /readyz answers as the kube-apiserver's does: one `[+]name ok` or
 * `[-]name failed: why` line per check, 200 or 503, and `?exclude=queue` to leave a check out
 * (a replica may stay in service while Redis is away: admissions never need the queue).
 */
@Controller()
export class HealthController {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(ReconcileTrigger) private readonly queue: ReconcileTrigger,
    @Inject(Metrics) private readonly metrics: Metrics,
  ) {}

  /** Alive: the process answers. */
  @Get('healthz')
  @Header('Content-Type', 'text/plain; charset=utf-8')
  healthz(): string {
    return 'ok';
  }

  @Get('readyz')
  async readyz(@Query('exclude') exclude: string | string[] | undefined, @Res() response: Response): Promise<void> {
    const excluded = new Set(([] as string[]).concat(exclude ?? []));
    const checks: Array<[string, () => Promise<unknown>]> = [
      ['database', () => withTimeout(this.dataSource.query('SELECT 1'), CHECK_TIMEOUT_MS)],
      ['queue', () => this.queue.depth()],
    ];
    const results = await Promise.all(
      checks
        .filter(([name]) => !excluded.has(name))
        .map(async ([name, check]) => {
          try {
            await check();
            return { name, ok: true, line: `[+]${name} ok` };
          } catch (error) {
            return { name, ok: false, line: `[-]${name} failed: ${error instanceof Error ? error.message : String(error)}` };
          }
        }),
    );
    const ok = results.every((r) => r.ok);
    const lines = [...results.map((r) => r.line), ...[...excluded].map((name) => `[+]${name} excluded: ok`), `readyz check ${ok ? 'passed' : 'failed'}`];
    response.status(ok ? 200 : 503).type('text/plain; charset=utf-8').send(`${lines.join('\n')}\n`);
  }

  @Get('metrics')
  async metricsText(@Res() response: Response): Promise<void> {
    response.status(200).type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}
