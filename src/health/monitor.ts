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

/**
 * An IR day/night switch turns the whole picture grey while its structure stays: each camera
 * keeps a reference per mode, colour and monochrome, as it keeps one per time of day. A picture
 * is monochrome when its `chroma` (signals.ts: the 90th percentile of its blocks' colour) is at
 * most `MONOCHROME` levels, and clearly coloured from `COLOURFUL` levels. A picture in the other
 * mode than the only reference its bucket has is a switch when that reference was clearly of the
 * other mode and the picture keeps its structure: gradient correlation, unshifted, at least
 * `STRUCTURE_KEPT`, and its detail as sharp (`sharpness` above the defocus threshold). A switch to
 * colour must also not be one colour (spray paint), and a switch to monochrome must not have
 * turned a varied picture one colour (the covered rule's one-colour test: a grey spray). The
 * new mode then learns its own reference
 * (only blackout and frozen are judged meanwhile); a picture that is not a switch is judged
 * against the reference there is (a grey cloth destroys structure where it lies: covered).
 */
export const MONOCHROME = 1.5;
export const COLOURFUL = 3;
export const STRUCTURE_KEPT = 0.6;
/**
 * The key of a bucket's reference in the other mode than its first: the bucket plus this (the
 * first is learnt whatever each picture's mode, and keyed by the bucket alone).
 */
export const OTHER_MODE = 100;

export type Mode = 'colour' | 'monochrome';

/** The mode of a picture (or a reference): undefined for a reference stored without its chroma. */
export function modeOf(f: Features): Mode | undefined {
  if (f.chroma === undefined) return undefined;
  return f.chroma <= MONOCHROME ? 'monochrome' : 'colour';
}

/**
 * Whether `cur`, in another mode than the reference `other`, is the camera's day/night switch
 * (see `MONOCHROME`), given its measures against that reference.
 */
export function isModeSwitch(m: Measures, cur: Features, other: Features, t: Thresholds): boolean {
  if (cur.chroma === undefined || other.chroma === undefined) return false;
  const oneColour = m.uniformity >= ONE_COLOUR && other.uniformity < ONE_COLOUR - 0.25;
  const toMono = cur.chroma <= MONOCHROME && other.chroma >= COLOURFUL && !oneColour;
  const toColour = other.chroma <= MONOCHROME && cur.chroma >= COLOURFUL && cur.uniformity < ONE_COLOUR - 0.1;
  return (toMono || toColour) && m.match0 >= STRUCTURE_KEPT && m.sharpness > t.defocused;
}

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
  // Turned to face elsewhere: nothing of the reference matches, at any shift.
  const replaced = m.match < 0.2;
  const shifted = m.shift >= t.moved && m.match >= m.match0 + 0.05;
  // Shifted, the detail is looked for where the shift put it: detail that left the view is a
  // move, not a cover; a cover stays blank once the shift is compensated.
  const blank = shifted ? m.blankShifted : m.blank;
  out.covered = {
    bad: blank >= t.covered || oneColour,
    good: blank < t.covered * 0.7 && m.uniformity < ONE_COLOUR - 0.1,
    measure: round3(Math.max(blank, oneColour ? m.uniformity : 0)),
  };
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
  const copy: Features = {
    ...f,
    contrast: Float32Array.from(f.contrast),
    mean: Float32Array.from(f.mean),
    sharpness: Float32Array.from(f.sharpness),
    edges: Float32Array.from(f.edges),
  };
  delete copy.image;
  return copy;
}

/** `into += k · f` for every number of the features. */
function blend(into: Features, f: Features, k: number): void {
  into.luma += k * f.luma;
  into.spread += k * f.spread;
  into.uniformity += k * f.uniformity;
  // A reference stored without its chroma stays without (its mode unknown until learnt again).
  if (into.chroma !== undefined) into.chroma += k * (f.chroma ?? 0);
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
  if (f.chroma !== undefined) f.chroma *= k;
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
  /** The reference key being learnt (the bucket, or the bucket + `OTHER_MODE`). */
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
    // The bucket's reference, learnt first whatever its mode, and its other mode's, if learnt.
    let key = s.bucket;
    let ref = this.fit(key, s.features);
    const mode = modeOf(s.features);
    if (ref && mode !== undefined && modeOf(ref.features) !== undefined && modeOf(ref.features) !== mode) {
      const main = ref;
      key = s.bucket + OTHER_MODE;
      ref = this.fit(key, s.features);
      // A switch found goes on learning while the pictures stay in its mode: one picture less like
      // the other mode's reference (a car passing a flat IR view) does not stop it.
      const switching = this.learning !== undefined && this.learningBucket === key;
      if (
        !ref &&
        !switching &&
        !isModeSwitch(compare(s.features, main.features), s.features, main.features, settings.thresholds)
      ) {
        key = s.bucket;
        ref = main;
      }
    }
    const measures = ref ? compare(s.features, ref.features) : undefined;
    this.lastMeasures = measures;
    const v = verdicts(measures, s.features, ref?.features, s.residual, settings.thresholds, settings.still);
    for (const f of FAULTS) this.step(f, v[f], s.ts);
    if (!ref) this.learn(s, key, v);
    else if (FAULTS.every((f) => !v[f]?.bad) && this.report.state === 'ok') {
      const k = Math.min(1, settings.sample_s / ADAPT_S);
      scale(ref.features, 1 - k);
      blend(ref.features, s.features, k);
      this.dirty = true;
    }
    return this.settle(s.ts, undefined, !this.refs.has(key));
  }

  /** The reference under `key`, dropped if its picture's size is not that of `f` (learnt again). */
  private fit(key: number, f: Features): Reference | undefined {
    const ref = this.refs.get(key);
    if (ref && (ref.features.w !== f.w || ref.features.h !== f.h)) {
      // The picture's size changed (another stream, another model size): learn it again.
      this.refs.delete(key);
      this.dirty = true;
      return undefined;
    }
    return ref;
  }

  private learn(s: Sample, key: number, v: Partial<Record<Fault, Verdict>>): void {
    if (this.learningBucket !== key || !this.learning) {
      this.learning = new Learning(s.ts);
      this.learningBucket = key;
    }
    if (v.blackout?.bad || v.frozen?.bad) return;
    this.learning.add(s.features);
    if (s.ts - this.learning.since >= this.settings.learn_s * 1000 && this.learning.n >= 3) {
      const mean = this.learning.mean()!;
      this.refs.set(key, { features: mean, samples: this.learning.n, at: s.ts });
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
