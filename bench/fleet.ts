import { balance, movement, walks } from '../src/fleet/index.js';

/**
 * `node dist/bench/fleet.js`: the placement's figures (issue 48, item 2): cameras moved per
 * membership change ÷ cameras ÷ boxes (from a fresh placement, and along walks of changes), and
 * max ÷ mean load by capacity. The failover figures come from `npm run bench -- --sections fleet`
 * (bench/fleet-failover.ts: real etcd, real daemons).
 */
const { mean, worst, changes } = movement();
console.log(
  `fleet placement: ${changes} membership changes, moved ÷ (cameras ÷ boxes): mean ${mean.toFixed(2)}, worst ${worst.toFixed(2)}`,
);
const b = balance();
console.log(
  `fleet placement: ${b.placements} placements, max ÷ mean load by capacity: mean ${b.mean.toFixed(2)}, worst ${b.worst.toFixed(2)}, worst where every fair share is 10 cameras or more ${b.worstFrom10.toFixed(2)}`,
);
for (const [regime, w] of Object.entries(walks()))
  console.log(
    `fleet placement: walks, fair share ${{ from10: '≥ 10', from5: '5–10', below5: '< 5' }[regime]}: ${w.changes} changes, moved ÷ (cameras ÷ boxes): mean ${w.mean.toFixed(2)}, worst ${w.worst.toFixed(2)}`,
  );
