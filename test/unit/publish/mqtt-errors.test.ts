import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyMqttError } from '../../../src/publish/mqtt-errors.js';

const err = (message: string, code?: unknown) => Object.assign(new Error(message), { code });

describe('MQTT connection failures', () => {
  it('names a refused login auth, in MQTT 3.1.1 and 5', () => {
    for (const code of [4, 5, 134, 135])
      assert.equal(classifyMqttError(err('Connection refused: Not authorized', code)), 'auth', `${code}`);
  });

  it('names other CONNACK refusals refused', () => {
    assert.equal(classifyMqttError(err('Connection refused: Server unavailable', 3)), 'refused');
    assert.equal(classifyMqttError(err('Connection refused: Client Identifier not valid', 133)), 'refused');
  });

  it('names socket failures unreachable, certificate failures tls, anything else error', () => {
    assert.equal(
      classifyMqttError(err('connect ECONNREFUSED 127.0.0.1:1883', 'ECONNREFUSED')),
      'unreachable',
    );
    assert.equal(classifyMqttError(err('getaddrinfo ENOTFOUND broker', 'ENOTFOUND')), 'unreachable');
    assert.equal(classifyMqttError(err('connack timeout')), 'unreachable');
    assert.equal(classifyMqttError(err('self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT')), 'tls');
    assert.equal(classifyMqttError(err('unable to verify', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE')), 'tls');
    assert.equal(classifyMqttError(err('something odd')), 'error');
  });
});
