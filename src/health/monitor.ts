import { HEALTH_FAULTS, type HealthFault, type HealthSettings } from '../config/index.js';
import { compare, GRID, type Features, type Measures } from './signals.js';

/**
 * One camera's health as plain logic: its references (one per time-of-day bucket, learnt from
 * the camera's own pictures), and a state machine per fault with a persistence window and
 * hysteresis. Time comes in with each sample (a fake clock in tests).
 */

export const FAULTS = HEALTH_FAULTS;
export type Fault = HealthFault;
export type HealthState = 'ok' | Fault;
type Thresholds = HealthSettings['thresholds'];

/** The one-colour share that counts as covered (a picture 75 % one colour, Frigate's 1793). */
export const ONE_COLOUR = 0.75;
/** How slowly an ok picture moves its reference: a step of sample_s ÷ this. */
export const ADAPT_S = 900;

/** A learnt reference: the mean features of the camera's pictures over `learn_s`. */
export interface Reference {
  features: Features;
  samples: number;
  /** When it was learnt (ms). */
  at: number;
}

/** What one sample says about the camera. */
export interface Sample {
  ts: number;
  /** The time-of-day bucket the sample falls in. */
  bucket: number;
  features: Features;
  /** How much the picture changed since the sample before (grey.ts `residual`); undefined: unknown. */
  residual: number | undefined;
}

/** The camera's health as published. */
export interface HealthReport {
  state: HealthState;
  /** Since when (ms): the fault's start, or the end of the last one (or the monitor's start). */
  since: number;
  /** The fault's measure (docs/mqtt.md), absent when ok. */
  measure?: number;
  /** Every fault that holds now, by priority. */
  faults: Fault[];
  /** The bucket now has no reference yet: only blackout and frozen are judged. */
  learning: boolean;
}

interface FaultTrack {
  /** The measure has been past the start threshold since then (ms). */
  badSince: number | undefined;
  /** The fault holds since then. */
  activeSince: number | undefined;
  /** While it holds, the measure has been past the clearing threshold since then. */
  goodSince: number | undefined;
  measure: number;
}

/** A fault's reading of one sample: past its start threshold, past its clearing one, and its measure. */
interface Verdict {
  bad: boolean;
  good: boolean;
  measure: number;
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** Each fault's verdict on a sample's measures; `undefined` measures (no reference): not judged. */
export function verdicts(
  m: Measures | undefined,
  feat: Features,
  ref: Features | undefined,
  residual: number | undefined,
  t: Thresholds,
  still: boolean,
): Partial<Record<Fault, Verdict>> {
  const out: Partial<Record<Fault, Verdict>> = {};
  const extreme = feat.luma <= 24 || feat.luma >= 235;
  // A reference that is itself near black (a camera at night without IR) is not blacked out.
  const refFlat = ref !== undefined && (ref.luma <= 24 || ref.luma >= 235) && ref.spread <= t.blackout * 2;
  out.blackout = {
    bad: extreme && feat.spread <= t.blackout && !refFlat,
    good: !extreme || feat.spread > t.blackout * 1.5,
    measure: round3(feat.spread),
  };
  if (!still && residual !== undefined)
    out.frozen = {
      bad: residual <= t.frozen,
      good: residual > Math.max(t.frozen * 3, 0.05),
      measure: round3(residual),
    };
  if (!m || !ref) return out;
  const oneColour = m.uniformity >= ONE_COLOUR && ref.uniformity < ONE_COLOUR - 0.25;
  out.covered = {
    bad: m.blank >= t.covered || oneColour,
    good: m.blank < t.covered * 0.7 && m.uniformity < ONE_COLOUR - 0.1,
    measure: round3(Math.max(m.blank, oneColour ? m.uniformity : 0)),
  };
  // Turned to face elsewhere: nothing of the reference matches, at any shift.
  const replaced = m.match < 0.2;
  const shifted = m.shift >= t.moved && m.match >= m.match0 + 0.05;
  out.moved = {
    bad: shifted || replaced,
    good: m.shift < t.moved / 2 && m.match0 >= 0.3,
    measure: round3(replaced ? 1 : m.shift),
  };
  out.defocused = {
    bad: m.sharpness <= t.defocused,
    good: m.sharpness > t.defocused + 0.15,
    measure: round3(m.sharpness),
  };
  return out;
}

/** The running sum of features over the learning time. */
class Learning {
  private sum: Features | undefined;
  n = 0;

  constructor(readonly since: number) {}

  add(f: Features): void {
    if (!this.sum || this.sum.w !== f.w || this.sum.h !== f.h) {
      this.sum = cloneFeatures(f);
      this.n = 1;
      return;
    }
    blend(this.sum, f, 1);
    this.n++;
  }

  mean(): Features | undefined {
    if (!this.sum) return undefined;
    const m = cloneFeatures(this.sum);
    scale(m, 1 / this.n);
    return m;
  }
}

/** A copy of features (their arrays too). */
export function cloneFeatures(f: Features): Features {
  return {
    ...f,
    contrast: Float32Array.from(f.contrast),
    mean: Float32Array.from(f.mean),
    sharpness: Float32Array.from(f.sharpness),
    edges: Float32Array.from(f.edges),
  };
}

/** `into += k · f` for every number of the features. */
function blend(into: Features, f: Features, k: number): void {
  into.luma += k * f.luma;
  into.spread += k * f.spread;
  into.uniformity += k * f.uniformity;
  for (let i = 0; i < GRID * GRID; i++) {
    into.mean[i]! += k * f.mean[i]!;
    into.contrast[i]! += k * f.contrast[i]!;
    into.sharpness[i]! += k * f.sharpness[i]!;
  }
  for (let i = 0; i < into.edges.length; i++) into.edges[i]! += k * f.edges[i]!;
}

function scale(f: Features, k: number): void {
  f.luma *= k;
  f.spread *= k;
  f.uniformity *= k;
  for (let i = 0; i < GRID * GRID; i++) {
    f.mean[i]! *= k;
    f.contrast[i]! *= k;
    f.sharpness[i]! *= k;
  }
  for (let i = 0; i < f.edges.length; i++) f.edges[i]! *= k;
}

/** What changed with a sample: the state before and the report now. */
export interface HealthChange {
  before: HealthState;
  report: HealthReport;
}

/**
 * One camera's health: samples in, a report out, and a change when its state changes. Each fault
 * is said once its measure has been past its start threshold for its window, and ends once it
 * has been past its clearing threshold for `clear_s`; one sample the other way restarts the
 * count. While a bucket learns its reference, only blackout and frozen are judged, and samples
 * that show either are not learnt.
 */
export class HealthMonitor {
  private readonly refs = new Map<number, Reference>();
  private learning: Learning | undefined;
  private learningBucket: number | undefined;
  private readonly tracks = new Map<Fault, FaultTrack>();
  private report: HealthReport;
  /** Set when a reference was learnt, adapted or dropped since `takeDirty()`. */
  private dirty = false;

  constructor(
    private settings: HealthSettings,
    now: number,
    refs?: ReadonlyMap<number, Reference>,
  ) {
    for (const [b, r] of refs ?? []) this.refs.set(b, r);
    this.report = { state: 'ok', since: now, faults: [], learning: false };
  }

  configure(settings: HealthSettings): void {
    this.settings = settings;
  }

  /** The references, by bucket (for the state file). */
  references(): ReadonlyMap<number, Reference> {
    return this.refs;
  }

  /** Whether the references changed since the last call. */
  takeDirty(): boolean {
    const d = this.dirty;
    this.dirty = false;
    return d;
  }

  /** The last sample's measures against its reference (none while learning): for tracing. */
  lastMeasures: Measures | undefined;

  current(): HealthReport {
    return this.report;
  }

  /** Forgets every reference (re-learn on request): the current bucket learns from now on. */
  reset(now: number): HealthChange | undefined {
    this.refs.clear();
    this.learning = undefined;
    this.learningBucket = undefined;
    this.dirty = true;
    for (const f of ['covered', 'moved', 'defocused'] as const) this.tracks.delete(f);
    return this.settle(now, { ...this.report, learning: true });
  }

  observe(s: Sample): HealthChange | undefined {
    const { settings } = this;
    let ref = this.refs.get(s.bucket);
    if (ref && (ref.features.w !== s.features.w || ref.features.h !== s.features.h)) {
      // The picture's size changed (another stream, another model size): learn it again.
      this.refs.delete(s.bucket);
      ref = undefined;
    }
    const measures = ref ? compare(s.features, ref.features) : undefined;
    this.lastMeasures = measures;
    const v = verdicts(measures, s.features, ref?.features, s.residual, settings.thresholds, settings.still);
    for (const f of FAULTS) this.step(f, v[f], s.ts);
    if (!ref) this.learn(s, v);
    else if (FAULTS.every((f) => !v[f]?.bad) && this.report.state === 'ok') {
      const k = Math.min(1, settings.sample_s / ADAPT_S);
      scale(ref.features, 1 - k);
      blend(ref.features, s.features, k);
      this.dirty = true;
    }
    return this.settle(s.ts, undefined, !this.refs.has(s.bucket));
  }

  private learn(s: Sample, v: Partial<Record<Fault, Verdict>>): void {
    if (this.learningBucket !== s.bucket || !this.learning) {
      this.learning = new Learning(s.ts);
      this.learningBucket = s.bucket;
    }
    if (v.blackout?.bad || v.frozen?.bad) return;
    this.learning.add(s.features);
    if (s.ts - this.learning.since >= this.settings.learn_s * 1000 && this.learning.n >= 3) {
      const mean = this.learning.mean()!;
      this.refs.set(s.bucket, { features: mean, samples: this.learning.n, at: s.ts });
      this.learning = undefined;
      this.learningBucket = undefined;
      this.dirty = true;
    }
  }

  private step(f: Fault, v: Verdict | undefined, now: number): void {
    const t = this.tracks.get(f) ?? {
      badSince: undefined,
      activeSince: undefined,
      goodSince: undefined,
      measure: 0,
    };
    this.tracks.set(f, t);
    if (!v) {
      // Not judged (no reference yet, a still camera): it does not hold.
      t.badSince = t.activeSince = t.goodSince = undefined;
      return;
    }
    t.measure = v.measure;
    t.badSince = v.bad ? (t.badSince ?? now) : undefined;
    if (t.activeSince === undefined) {
      if (t.badSince !== undefined && now - t.badSince >= this.settings.windows[f] * 1000) {
        t.activeSince = now;
        t.goodSince = undefined;
      }
      return;
    }
    t.goodSince = v.good ? (t.goodSince ?? now) : undefined;
    if (t.goodSince !== undefined && now - t.goodSince >= this.settings.clear_s * 1000) {
      t.activeSince = t.goodSince = undefined;
    }
  }

  private settle(
    now: number,
    forced?: HealthReport,
    learning = this.report.learning,
  ): HealthChange | undefined {
    const before = this.report;
    const faults = FAULTS.filter((f) => this.tracks.get(f)?.activeSince !== undefined);
    const state: HealthState = faults[0] ?? 'ok';
    const since =
      state === before.state ? before.since : state === 'ok' ? now : this.tracks.get(state)!.activeSince!;
    this.report = {
      state,
      since,
      ...(state === 'ok' ? {} : { measure: this.tracks.get(state)!.measure }),
      faults,
      learning: forced?.learning ?? learning,
    };
    const changed =
      state !== before.state ||
      this.report.learning !== before.learning ||
      faults.join() !== before.faults.join();
    return changed ? { before: before.state, report: this.report } : undefined;
  }
}

/** The time-of-day bucket of `ts` (local time), buckets `hours` long. */
export function bucketOf(ts: number, hours: number): number {
  return Math.floor(new Date(ts).getHours() / hours);
}
