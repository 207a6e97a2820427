import type { WatchState } from '@quota/inventory';

type Log = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

/**
 * What the log says of the watches: a failure once per resource until its watch works again
 * (`failing` holds them, for the gauge), and each kind watched or no longer watched since start.
 */
export function watchStateLog(failing: Set<string>, log: Log | undefined): (state: WatchState) => void {
  return (state) => {
    if (state.state === 'failed' && !failing.has(state.resource)) {
      failing.add(state.resource);
      log?.('warn', 'watch failing; retrying with backoff (the periodic pass settles meanwhile)', { ...state });
    } else if (state.state === 'listed' || state.state === 'resumed') failing.delete(state.resource);
    else if (state.state === 'started' || state.state === 'stopped') {
      if (state.state === 'stopped') failing.delete(state.resource);
      log?.(
        'info',
        state.state === 'started' ? 'watching a kind discovered since start' : 'no longer watching a kind the cluster stopped serving',
        {
          resource: state.resource,
        },
      );
    }
  };
}
