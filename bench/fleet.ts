import { balance, movement } from '../src/fleet/index.js';

/**
 * `node dist/bench/fleet.js`: the placement's figures (issue 48, item 6): cameras moved per
 * membership change ÷ cameras ÷ boxes, and max ÷ mean load by capacity. The failover figures come
 * from test/integration/fleet-etcd.test.ts (real etcd, real daemons).
 */
const { mean, worst, changes } = movement();
console.log(
  `fleet placement: ${changes} membership changes, moved ÷ (cameras ÷ boxes): mean ${mean.toFixed(2)}, worst ${worst.toFixed(2)}`,
);
const b = balance();
console.log(
  `fleet placement: ${b.placements} placements, max ÷ mean load by capacity: mean ${b.mean.toFixed(2)}, worst ${b.worst.toFixed(2)}, worst where every fair share is 10 cameras or more ${b.worstFrom10.toFixed(2)}`,
);
