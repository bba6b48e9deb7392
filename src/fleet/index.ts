export { Fleet, RESYNC_MS, type FleetDeps, type FleetView, type Ownership } from './fleet.js';
export {
  DEFAULT_SLACK,
  balance,
  limitOf,
  loadRatio,
  moved,
  score,
  movement,
  place,
  walks,
  type Member,
  type PlacedCamera,
  type Placement,
} from './placement.js';
