export { Fleet, RESYNC_MS, type FleetDeps, type FleetView, type Ownership } from './fleet.js';
export {
  DEFAULT_SLACK,
  balance,
  limitOf,
  loadRatio,
  moved,
  movement,
  place,
  type Member,
  type PlacedCamera,
  type Placement,
} from './placement.js';
