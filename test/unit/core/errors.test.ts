import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorMessage, errorStack } from '../../../src/core/errors.js';
import { isoTime, isoTimeOrNull } from '../../../src/core/time.js';

describe('errorMessage and errorStack', () => {
  it("give an Error's message (stack), anything else as a string", () => {
    const err = new RangeError('too far');
    assert.equal(errorMessage(err), 'too far');
    assert.equal(errorStack(err), err.stack);
    assert.equal(errorMessage('plain'), 'plain');
    assert.equal(errorStack(42), '42');
    assert.equal(errorMessage(undefined), 'undefined');
  });

  it('fall back to the message for an Error without a stack', () => {
    const err = new Error('no stack');
    err.stack = undefined;
    assert.equal(errorStack(err), 'no stack');
  });
});

describe('isoTime', () => {
  it('gives a time in ms as ISO 8601 UTC, and null for none', () => {
    assert.equal(isoTime(0), '1970-01-01T00:00:00.000Z');
    assert.equal(isoTimeOrNull(1_700_000_000_123), '2023-11-14T22:13:20.123Z');
    assert.equal(isoTimeOrNull(null), null);
    assert.equal(isoTimeOrNull(undefined), null);
  });
});
