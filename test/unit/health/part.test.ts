import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import type { CameraConfig } from '../../../src/config/index.js';
import { letterbox } from '../../../src/core/geometry.js';
import type { Frame } from '../../../src/core/frame.js';
import {
  features,
  greyOf,
  modeOf,
  OTHER_MODE,
  type Features,
  type Reference,
} from '../../../src/health/index.js';
import { CameraHealth, parseStored, serializeStored } from '../../../src/health/part.js';
import { picture as pic, scene } from './scenes.js';
import { topics } from '../../../src/publish/topics.js';
import { cameraConfig, config } from '../../helpers/config.js';
import { FakeClock } from '../../helpers/fakes.js';
import { FakeOutput } from '../../helpers/fake-output.js';

const SIZE = 64;

/** A detailed picture (a seeded noise texture), the very same bytes every time it is sent. */
function picture(): Buffer {
  let seed = 11;
  const data = Buffer.alloc(SIZE * SIZE * 3);
  for (let i = 0; i < data.length; i++) data[i] = (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 256;
  return data;
}

/** The health states published for each camera after `seconds` of one unchanging picture a second. */
async function healthOfStill(
  cameras: Record<string, CameraConfig>,
  seconds: number,
): Promise<Map<string, string[]>> {
  const out = new FakeOutput();
  const clock = new FakeClock();
  const part = new CameraHealth(() => cameras, config().health, {
    out,
    topics: topics('argus'),
    clock,
    log: pino({ level: 'silent' }),
    stateDir: undefined,
  });
  await part.start();
  const data = picture();
  const geometry = letterbox(SIZE, SIZE, SIZE);
  for (let s = 1; s <= seconds; s++)
    for (const [camera, seq] of Object.keys(cameras).map((c) => [c, s] as const)) {
      const f: Frame = { camera, seq, ts: clock.now() + s * 1000, data, geometry };
      part.onFrame(f);
    }
  const said = new Map<string, string[]>();
  for (const m of out.of('state')) {
    const camera = /cameras\/([^/]+)\/health$/.exec(m.topic)?.[1];
    if (camera && m.payload)
      said.set(camera, [...(said.get(camera) ?? []), (JSON.parse(m.payload) as { state: string }).state]);
  }
  await part.stop();
  return said;
}

describe('camera health as a part', () => {
  it('a lavfi: camera is a generated picture: a still one is never frozen unless its own health.still says so', async () => {
    const said = await healthOfStill(
      {
        rtsp: cameraConfig({ url: 'rtsp://127.0.0.1:8554/still' }),
        gen: cameraConfig({ url: 'lavfi:color=c=gray:s=64x64' }),
        told: cameraConfig({ url: 'lavfi:color=c=gray:s=64x64', health: { still: false } }),
      },
      40,
    );
    assert.ok(said.get('rtsp')?.includes('frozen'), `the RTSP camera: ${JSON.stringify(said.get('rtsp'))}`);
    assert.ok(!said.get('gen')?.includes('frozen'), `the lavfi camera: ${JSON.stringify(said.get('gen'))}`);
    assert.ok(said.get('told')?.includes('frozen'), `told still: false: ${JSON.stringify(said.get('told'))}`);
  });
});

describe('the health state file (issue 49 item 3: a reference per mode)', () => {
  const f = (chroma: number | undefined): Features => {
    const x = features(greyOf(pic(scene(2), { noise: 2 })));
    if (chroma === undefined) delete x.chroma;
    else x.chroma = chroma;
    return x;
  };

  it('keeps each mode’s reference (the bucket, and the bucket + OTHER_MODE) and its chroma', () => {
    const refs = new Map<number, Reference>([
      [2, { features: f(28.3), samples: 30, at: 1000 }],
      [2 + OTHER_MODE, { features: f(0.4), samples: 30, at: 2000 }],
    ]);
    const back = parseStored(JSON.parse(JSON.stringify(serializeStored(new Map([['cam', refs]])))));
    const cam = back.get('cam')!;
    assert.deepEqual(
      [...cam.keys()].sort((a, b) => a - b),
      [2, 102],
    );
    assert.equal(cam.get(2)!.features.chroma, 28.3);
    assert.equal(cam.get(102)!.features.chroma, 0.4);
    assert.equal(cam.get(102)!.features.image, undefined, 'the grey image is not stored');
  });

  it('reads a file written before the rule (no chroma): its mode unknown, judged as before', () => {
    const old = serializeStored(
      new Map([['cam', new Map([[2, { features: f(undefined), samples: 3, at: 5 }]])]]),
    );
    const back = parseStored(JSON.parse(JSON.stringify(old)));
    assert.equal(back.get('cam')!.get(2)!.features.chroma, undefined);
    assert.equal(modeOf(back.get('cam')!.get(2)!.features), undefined);
  });
});
