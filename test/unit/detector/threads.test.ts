import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detectorThreads } from '../../../src/detector/threads.js';

describe('detector threads', () => {
  const auto = { workers: 0, intra_op_threads: 0 };
  it('on CPU, shares the cores among up to 4 single- or few-threaded sessions', () => {
    assert.deepEqual(detectorThreads({ ...auto, providers: ['cpu'] }, 1), { workers: 1, intraOpThreads: 1 });
    assert.deepEqual(detectorThreads({ ...auto, providers: ['cpu'] }, 2), { workers: 2, intraOpThreads: 1 });
    assert.deepEqual(detectorThreads({ ...auto, providers: ['cpu'] }, 16), { workers: 4, intraOpThreads: 4 });
  });
  it('on a GPU, one session; explicit settings win', () => {
    assert.deepEqual(detectorThreads({ ...auto, providers: ['cuda', 'cpu'] }, 16), {
      workers: 1,
      intraOpThreads: 0,
    });
    assert.deepEqual(detectorThreads({ providers: ['cpu'], workers: 1, intra_op_threads: 0 }, 16), {
      workers: 1,
      intraOpThreads: 0,
    });
    assert.deepEqual(detectorThreads({ providers: ['cpu'], workers: 0, intra_op_threads: 3 }, 2), {
      workers: 2,
      intraOpThreads: 3,
    });
  });
});
