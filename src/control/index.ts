/** The control stage's public interface: runtime settings, modes, control topics. */
export { commandFilters, parseCommand } from './commands.js';
export { Control, CONTROL_FILE, type ApplyOutcome, type ChangeOutcome, type ControlDeps, type ControlView } from './control.js';
export {
  effectiveCameras,
  keysOf,
  NUMBERS,
  parseValue,
  readKey,
  SWITCHES,
  withMode,
  type ChangeRequest,
  type ControlState,
  type SettingKey,
  type SettingValue,
} from './settings.js';
