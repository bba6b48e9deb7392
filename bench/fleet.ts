import { movement } from '../src/fleet/index.js';

/**
 * `node dist/bench/fleet.js`: the placement's figures (issue 48, item 6): cameras moved per
 * membership change ÷ cameras ÷ boxes. The failover figures come from
 * test/integration/fleet-etcd.test.ts (real etcd, real daemons).
 */
const { mean, worst, changes } = movement();
console.log(
  `fleet placement: ${changes} membership changes, moved ÷ (cameras ÷ boxes): mean ${mean.toFixed(2)}, worst ${worst.toFixed(2)}`,
);
