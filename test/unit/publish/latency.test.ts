import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { letterbox } from '../../../src/core/geometry.js';
import type { Result } from '../../../src/core/frame.js';
import { PublishLatency } from '../../../src/publish/latency.js';
import { cameraConfig } from '../../helpers/config.js';
import { FakeClock } from '../../helpers/fakes.js';
import { CamerasBox } from '../../helpers/cameras-now.js';

const result = (camera: string, ts: number): Result => ({
  camera,
  seq: 1,
  ts,
  data: Buffer.alloc(0),
  geometry: letterbox(4, 4, 4),
  cached: false,
  detections: [],
});

describe('publish latency', () => {
  it('a camera disabled and enabled again counts on from its histogram (issue 44): its series never go down', () => {
    const clock = new FakeClock();
    const box = new CamerasBox({ lot: cameraConfig() });
    const latency = new PublishLatency(box.now, clock);
    latency.onResult(result('lot', clock.now() - 100));
    latency.onResult(result('lot', clock.now() - 200));
    assert.equal(latency.latency().get('lot')!.count, 2);
    box.set({ lot: cameraConfig({ enabled: false }) });
    assert.equal(latency.latency().get('lot'), undefined, 'not shown while disabled');
    box.set({ lot: cameraConfig() });
    latency.onResult(result('lot', clock.now() - 50));
    const h = latency.latency().get('lot')!;
    assert.deepEqual([h.count, Math.round(h.sum * 1000) / 1000], [3, 0.35]);
    box.set({});
    assert.deepEqual([...latency.latency().keys()], [], 'a removed camera is not shown');
  });
});
