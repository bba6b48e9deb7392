/**
 * Why a connection to the broker failed, in a word a subscriber (or an operator reading
 * `/healthz`) can act on. mqtt.js reports CONNACK refusals as errors with the reason code as
 * `code` (MQTT 3.1.1 return codes, MQTT 5 reason codes) and socket failures with Node's codes.
 */
export type MqttFailure = 'auth' | 'refused' | 'unreachable' | 'tls' | 'error';

/** MQTT 3.1.1: 4 bad user name or password, 5 not authorized; MQTT 5: 134, 135. */
const AUTH_CODES = new Set([4, 5, 134, 135]);

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
]);

export function classifyMqttError(err: Error & { code?: unknown }): MqttFailure {
  const code = err.code;
  if (typeof code === 'number') return AUTH_CODES.has(code) ? 'auth' : 'refused';
  if (typeof code === 'string') {
    if (UNREACHABLE.has(code)) return 'unreachable';
    if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code)) return 'tls';
  }
  if (/connack timeout|connect timeout/i.test(err.message)) return 'unreachable';
  return 'error';
}
