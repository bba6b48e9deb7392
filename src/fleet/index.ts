export { Fleet, RESYNC_MS, type FleetDeps, type FleetView, type Ownership } from './fleet.js';
export {
  DEFAULT_SLACK,
  limitOf,
  moved,
  movement,
  place,
  type Member,
  type PlacedCamera,
  type Placement,
} from './placement.js';
