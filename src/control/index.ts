/** The control stage's public interface: runtime settings, modes, control topics. */
export { commandFilters, parseCommand } from './commands.js';
export {
  Control,
  CONTROL_FILE,
  type ApplyOutcome,
  type ChangeOutcome,
  type ControlDeps,
  type ControlView,
} from './control.js';
export {
  effectiveCameras,
  keysOf,
  parseValue,
  readKey,
  readSetting,
  settingsOf,
  withMode,
  type ChangeRequest,
  type ControlState,
  type SettingValue,
} from './settings.js';
export { NUMBERS, SWITCHES, type SettingKey, type SettingRef } from '../core/setting-keys.js';
