/**
 * Metric families whose series are resolved once and then updated for a few nanoseconds, for the
 * conversion hot path. prom-client's `observe(labels, v)` and `inc(labels, n)` validate and hash
 * the label object on every call (~0.5–1 µs and a few hundred bytes each); a review records
 * four such updates, which cost a small review ~4 µs — a fifth of its handler time. These
 * register into the same prom-client `Registry` as metrics (`name` + `get()`), so the exposition
 * is identical to a prom-client Histogram's or Counter's (pinned by tests/webhook/metrics_test.ts).
 *
 * A series is found by its label values (in `labelNames` order) through one map per label, so a
 * lookup of a known series allocates nothing.
 */
import type { Metric, Registry } from "prom-client";

/** What observes one series of a histogram. */
export interface Observer {
  observe(value: number): void;
}

/** What counts one series of a counter. */
export interface Incrementer {
  inc(n?: number): void;
}

export interface SeriesFamilyOptions {
  name: string;
  help: string;
  labelNames: readonly string[];
}

export interface SeriesHistogramOptions extends SeriesFamilyOptions {
  buckets: readonly number[];
}

interface ExportedValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

interface ExportedMetric {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: ExportedValue[];
}

/** Nested maps from label values to a series; `create` builds one the first time. */
class SeriesIndex<S> {
  readonly #root = new Map<string, unknown>();
  readonly #all: S[] = [];

  constructor(
    private readonly labelNames: readonly string[],
    private readonly create: (labels: Readonly<Record<string, string>>) => S,
  ) {}

  get(values: readonly string[]): S {
    const last = this.labelNames.length - 1;
    let level = this.#root;
    for (let i = 0; i < last; i++) {
      const key = values[i] ?? "";
      let next = level.get(key) as Map<string, unknown> | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(key, next);
      }
      level = next;
    }
    const key = values[last] ?? "";
    let s = level.get(key) as S | undefined;
    if (s === undefined) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, i) => labels[name] = values[i] ?? "");
      s = this.create(labels);
      level.set(key, s);
      this.#all.push(s);
    }
    return s;
  }

  values(): readonly S[] {
    return this.#all;
  }

  clear(): void {
    this.#root.clear();
    this.#all.length = 0;
  }
}

abstract class SeriesFamily<S> {
  abstract readonly type: string;
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  protected readonly index: SeriesIndex<S>;

  protected readonly labelNames: readonly string[];

  /** Without a registry the family is exposed nowhere: a ledger drained into one that is. */
  constructor(registry: Registry | undefined, opts: SeriesFamilyOptions) {
    if (opts.labelNames.length === 0) throw new Error(`${opts.name}: a series family has labels`);
    this.name = opts.name;
    this.help = opts.help;
    this.labelNames = [...opts.labelNames];
    this.index = new SeriesIndex(this.labelNames, (labels) => this.create(labels));
    registry?.registerMetric(this as unknown as Metric);
  }

  /** The label values of a series, in `labelNames` order. */
  protected valuesOf(labels: Readonly<Record<string, string>>): string[] {
    return this.labelNames.map((n) => labels[n]);
  }

  protected abstract create(labels: Readonly<Record<string, string>>): S;
  protected abstract export(s: S, into: ExportedValue[]): void;

  /** Forgets every series (exposition shows the family with none). */
  reset(): void {
    this.index.clear();
  }

  /** prom-client's metric protocol (called by `Registry.metrics()` / `getMetricsAsJSON()`). */
  get(): Promise<ExportedMetric> {
    const values: ExportedValue[] = [];
    for (const s of this.index.values()) this.export(s, values);
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    });
  }
}

class HistogramSeries implements Observer {
  /** Non-cumulative counts; the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }
}

/** What one histogram series gained: non-cumulative bucket counts (the last is +Inf), sum, count. */
export interface HistogramDelta {
  values: string[];
  counts: number[];
  sum: number;
  count: number;
}

/** What one counter series gained. */
export interface CounterDelta {
  values: string[];
  value: number;
}

/** A histogram of resolved series; exposition as prom-client's Histogram. */
export class SeriesHistogram extends SeriesFamily<HistogramSeries> {
  readonly type = "histogram";
  readonly #bounds: readonly number[];

  constructor(registry: Registry | undefined, opts: SeriesHistogramOptions) {
    super(registry, opts);
    this.#bounds = [...opts.buckets].sort((a, b) => a - b);
  }

  /** The series for these label values (in `labelNames` order), created on first use. */
  series(values: readonly string[]): Observer {
    return this.index.get(values);
  }

  protected create(labels: Readonly<Record<string, string>>): HistogramSeries {
    return new HistogramSeries(labels, this.#bounds);
  }

  /** Every series observed since the last drain, as plain data; the family is empty after. */
  drain(): HistogramDelta[] {
    const out: HistogramDelta[] = [];
    for (const s of this.index.values()) {
      if (s.count === 0) continue;
      out.push({
        values: this.valuesOf(s.labels),
        counts: [...s.counts],
        sum: s.sum,
        count: s.count,
      });
    }
    this.reset();
    return out;
  }

  /** Adds a series' drained observations (a family with the same buckets) to this one. */
  merge(d: HistogramDelta): void {
    const s = this.index.get(d.values);
    if (d.counts.length !== s.counts.length) {
      throw new Error(
        `${this.name}: a delta of ${d.counts.length} buckets, not ${s.counts.length}`,
      );
    }
    for (let i = 0; i < d.counts.length; i++) s.counts[i] += d.counts[i];
    s.sum += d.sum;
    s.count += d.count;
  }

  protected export(s: HistogramSeries, into: ExportedValue[]): void {
    const bucket = `${this.name}_bucket`;
    let acc = 0;
    this.#bounds.forEach((le, i) => {
      acc += s.counts[i];
      into.push({ labels: { ...s.labels, le }, value: acc, metricName: bucket });
    });
    into.push({ labels: { ...s.labels, le: "+Inf" }, value: s.count, metricName: bucket });
    into.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
    into.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
  }
}

class CounterSeries implements Incrementer {
  value = 0;
  constructor(readonly labels: Readonly<Record<string, string>>) {}
  inc(n = 1): void {
    if (!(n >= 0)) throw new Error(`a counter only goes up (got ${n})`);
    this.value += n;
  }
}

/** A counter of resolved series; exposition as prom-client's Counter. */
export class SeriesCounter extends SeriesFamily<CounterSeries> {
  readonly type = "counter";

  /** The series for these label values (in `labelNames` order), created on first use at 0. */
  series(values: readonly string[]): Incrementer {
    return this.index.get(values);
  }

  protected create(labels: Readonly<Record<string, string>>): CounterSeries {
    return new CounterSeries(labels);
  }

  /** Every series counted since the last drain, as plain data; the family is empty after. */
  drain(): CounterDelta[] {
    const out: CounterDelta[] = [];
    for (const s of this.index.values()) {
      out.push({ values: this.valuesOf(s.labels), value: s.value });
    }
    this.reset();
    return out;
  }

  /** Adds a series' drained count to this one. */
  merge(d: CounterDelta): void {
    this.index.get(d.values).inc(d.value);
  }

  protected export(s: CounterSeries, into: ExportedValue[]): void {
    into.push({ labels: { ...s.labels }, value: s.value });
  }
}
