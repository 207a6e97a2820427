import { unroutedCounts, type RegisteredRule } from '@quota/domain';

/** How often the registered rules are checked at most; more often when the reconcile interval is shorter. */
export const WEBHOOK_ROUTES_PERIOD_MAX_MS = 5 * 60_000;

export interface WebhookRoutesSources {
  /** The registered ValidatingWebhookConfiguration's rules, every webhook's together; 'not-found' when it is not registered. */
  readonly rules: () => Promise<readonly RegisteredRule[] | 'not-found'>;
  /** The object counts quotas name, with how many quotas name each (DefinitionQueries.countedResources). */
  readonly counted: () => Promise<ReadonlyMap<string, number>>;
}

export interface WebhookRoutesOptions {
  readonly periodMs: number;
  readonly log: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void;
}

/**
 * The object counts quotas name that the registered webhook configuration does not send, checked
 * at start and every period: a configuration registered before the count webhook sent every kind
 * (or edited by hand) leaves a `count/…` counted only after the fact, which the Warning on the
 * quota's PUT cannot know of. Served as the `quota_ledger_reconciler_unrouted_counts` gauge and a
 * /readyz detail (never unready: admission goes on), and logged when the set changes.
 */
export class WebhookRoutes {
  private unrouted: ReadonlyMap<string, number> = new Map();
  private error: string | undefined;
  private running = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly configuration: string,
    private readonly sources: WebhookRoutesSources,
    private readonly options: WebhookRoutesOptions,
  ) {}

  start(): void {
    void this.check();
    this.timer = setInterval(() => void this.check(), this.options.periodMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Quotas naming each object count the configuration does not send, as the last check found them (empty while it cannot be read). */
  totals(): ReadonlyMap<string, number> {
    return this.unrouted;
  }

  /** What /readyz says of it: the configuration read, why it could not be, the unrouted counts with the quotas naming each. */
  readinessDetail(): Record<string, unknown> {
    return {
      webhookRoutes: {
        configuration: this.configuration,
        ...(this.error ? { error: this.error } : {}),
        ...(this.unrouted.size > 0 ? { unroutedCounts: Object.fromEntries(this.unrouted) } : {}),
      },
    };
  }

  /** One check (skipped while the last is still running): reads the rules and the quotas' counts, and keeps what is unrouted. */
  async check(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const [rules, counted] = await Promise.all([this.sources.rules(), this.sources.counted()]);
      const missing = rules === 'not-found';
      this.failed(
        missing
          ? `ValidatingWebhookConfiguration ${this.configuration} is not registered: no object count is refused at admission (RECONCILE_WEBHOOK_CONFIGURATION names the one to read)`
          : undefined,
      );
      const names = unroutedCounts([...counted.keys()], missing ? [] : rules);
      this.found(new Map(names.map((name) => [name, counted.get(name) ?? 0])));
    } catch (error) {
      this.failed(`ValidatingWebhookConfiguration ${this.configuration} not read: ${(error as Error).message}`);
      this.found(new Map());
    } finally {
      this.running = false;
    }
  }

  private failed(error: string | undefined): void {
    if (error !== undefined && error !== this.error) this.options.log('warn', error);
    else if (error === undefined && this.error !== undefined)
      this.options.log('info', `ValidatingWebhookConfiguration ${this.configuration} read again`);
    this.error = error;
  }

  private found(unrouted: ReadonlyMap<string, number>): void {
    const before = [...this.unrouted.keys()].join(',');
    this.unrouted = unrouted;
    if ([...unrouted.keys()].join(',') === before) return;
    if (unrouted.size > 0)
      this.options.log(
        'warn',
        'quotas name object counts the registered webhooks are not sent: a create past them is not refused at admission, only counted after the fact (ResourceQuota objects are never sent; for another kind, apply the configuration `quotactl webhook-config` prints again)',
        { configuration: this.configuration, unroutedCounts: Object.fromEntries(unrouted) },
      );
    else if (this.error === undefined)
      this.options.log('info', 'every object count quotas name is sent to the webhooks', { configuration: this.configuration });
  }
}
