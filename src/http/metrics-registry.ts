import { Counter, Gauge, Registry, type Metric } from 'prom-client';
import type { HistogramSnapshot } from '../core/histogram.js';

/** Sets one series of a metric: its labels and its value. */
export type SetSeries = (labels: Record<string, string>, v: number) => void;

/** A registry whose metrics are read at scrape time, and how to declare them. */
export interface ReadRegistry<S> {
  registry: Registry;
  /** A counter or gauge, its series set by `read` from the scrape's snapshot. */
  metric: (
    kind: 'counter' | 'gauge',
    name: string,
    help: string,
    labelNames: string[],
    read: (s: S, set: SetSeries) => void,
  ) => void;
  /** A histogram kept by a stage, one per `label` value, read from the scrape's snapshot. */
  histogram: (
    name: string,
    help: string,
    label: 'camera' | 'model',
    read: (s: S) => Iterable<readonly [string, HistogramSnapshot]>,
  ) => void;
}

/**
 * A Prometheus registry (one per daemon, no globals) whose every metric is read, not observed:
 * at a scrape, each reads the same snapshot, `take`n once (the next scrape takes a new one).
 */
export function readRegistry<S>(take: () => S): ReadRegistry<S> {
  const registry = new Registry();
  let snap: S | undefined;
  const snapshot = (): S => {
    if (!snap) {
      snap = take();
      setImmediate(() => (snap = undefined));
    }
    return snap;
  };
  const metric: ReadRegistry<S>['metric'] = (kind, name, help, labelNames, read) => {
    const options = { name, help, labelNames, registers: [registry] };
    // Every series is set afresh from the scrape's snapshot.
    const fill = (m: { reset: () => void }, set: SetSeries): void => {
      m.reset();
      read(snapshot(), set);
    };
    if (kind === 'counter')
      new Counter({
        ...options,
        collect() {
          fill(this, (labels, v) => this.inc(labels, Math.max(0, v)));
        },
      });
    else
      new Gauge({
        ...options,
        collect() {
          fill(this, (labels, v) => this.set(labels, v));
        },
      });
  };
  const histogram: ReadRegistry<S>['histogram'] = (name, help, label, read) => {
    const get = () => ({
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      values: [...read(snapshot())].flatMap(([value, h]) => histogramValues(name, { [label]: value }, h)),
    });
    // prom-client's Histogram takes observations only; this one is read, like every metric here.
    registry.registerMetric({ name, help, get } as unknown as Metric);
  };
  return { registry, metric, histogram };
}

/** A histogram's Prometheus series: cumulative `_bucket`s up to `le="+Inf"`, `_sum`, `_count`. */
function histogramValues(name: string, labels: Record<string, string>, h: HistogramSnapshot) {
  let cumulative = 0;
  const buckets = h.counts.map((n, i) => {
    cumulative += n;
    const le = i < h.bounds.length ? String(h.bounds[i]) : '+Inf';
    return { metricName: `${name}_bucket`, labels: { ...labels, le }, value: cumulative };
  });
  return [
    ...buckets,
    { metricName: `${name}_sum`, labels, value: h.sum },
    { metricName: `${name}_count`, labels, value: h.count },
  ];
}
