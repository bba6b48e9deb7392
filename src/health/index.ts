/** Camera health: covered, defocused, moved, blacked out or frozen, said within seconds (issue 49). */
export { greyOf, residual, GREY_SIDE, type Grey } from './grey.js';
export { compare, features, register, uniformity, type Features, type Measures } from './signals.js';
export {
  bucketOf,
  FAULTS,
  HealthMonitor,
  isModeSwitch,
  modeOf,
  OTHER_MODE,
  verdicts,
  type Mode,
  type Fault,
  type HealthChange,
  type HealthReport,
  type HealthState,
  type Reference,
  type Sample,
} from './monitor.js';
export { CameraHealth, HEALTH_FILE, type CameraHealthView, type HealthDeps } from './part.js';
