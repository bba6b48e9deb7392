import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  controlLevels,
  controlPath,
  NUMBERS,
  parseControlLevels,
  parseControlPath,
  parseSettingKey,
  settingKey,
  SWITCHES,
  type ControlRef,
  type SettingRef,
} from '../../../src/core/setting-keys.js';

/** Zone and line names that look like the grammar's own words and separators. */
const TRICKY = [
  'front.door',
  'a.enabled',
  'enabled.a',
  'zones.x',
  'lines.y.enabled',
  '.hidden',
  'trailing.',
  'a..b',
  'x%2Fy',
  '100%',
  'front door',
  'größe',
  '入口',
  '🚗.lane',
  'a?b&c=d',
  'back\\slash',
];

const refs = (name: string): SettingRef[] => [
  { kind: 'zones', name },
  { kind: 'lines', name },
];

/** A path's segments as the HTTP server has them (URL-parsed, then each decoded: http/control.ts). */
const segments = (path: string): string[] =>
  new URL(path, 'http://argus').pathname.split('/').slice(1).map(decodeURIComponent);

describe('setting keys (the one codec)', () => {
  it('writes the camera keys as they are, and a zone or line as zones.<name>.enabled', () => {
    assert.deepEqual(
      [...SWITCHES, ...NUMBERS].map((key) => settingKey({ kind: 'camera', key })),
      ['enabled', 'detect', 'snapshots', 'fps', 'priority'],
    );
    assert.equal(settingKey({ kind: 'zones', name: 'front.door' }), 'zones.front.door.enabled');
    assert.deepEqual(controlLevels({ kind: 'zones', name: 'front.door' }), [
      'zones',
      'front.door',
      'enabled',
    ]);
    assert.deepEqual(controlLevels({ kind: 'reset', line: 'a.b' }), ['lines', 'a.b', 'reset']);
    assert.equal(
      controlPath('my cam', { kind: 'lines', name: 'a/b' }),
      '/cameras/my%20cam/lines/a%2Fb/enabled',
    );
  });

  it('reads a name as everything between zones. (or lines.) and the last .enabled', () => {
    assert.deepEqual(parseSettingKey('zones.a.enabled.enabled'), { kind: 'zones', name: 'a.enabled' });
    assert.deepEqual(parseSettingKey('lines.zones.x.enabled'), { kind: 'lines', name: 'zones.x' });
  });

  it('every zone and line name round-trips through the flat key, the topic levels and the path', () => {
    for (const name of TRICKY)
      for (const ref of refs(name)) {
        assert.deepEqual(parseSettingKey(settingKey(ref)), ref, name);
        assert.deepEqual(parseControlLevels(controlLevels(ref)), ref, name);
        const path = controlPath('gate', ref);
        assert.deepEqual(segments(path).slice(0, 2), ['cameras', 'gate'], path);
        assert.deepEqual(parseControlPath(segments(path).slice(2)), ref, path);
        // The flat key in one segment, as the page sends it.
        assert.deepEqual(parseControlPath([settingKey(ref)]), ref, name);
      }
    const reset: ControlRef = { kind: 'reset', line: 'a.b' };
    assert.deepEqual(parseControlLevels(controlLevels(reset)), reset);
    assert.deepEqual(parseControlPath(segments(controlPath('gate', reset)).slice(2)), reset);
  });

  it('names nothing for what is no setting', () => {
    for (const key of [
      '',
      'zones',
      'zones.enabled',
      'zones..enabled',
      'zones.a',
      'a.enabled',
      'colour',
      'Detect',
    ])
      assert.equal(parseSettingKey(key), undefined, key);
    for (const levels of [
      [],
      ['colour'],
      ['zones', 'a'],
      ['zones', '', 'enabled'],
      ['zones', 'a', 'reset'],
      ['zones', 'a', 'enabled', 'x'],
      ['lines', 'a', 'b', 'enabled'],
      ['zones.a.enabled'],
    ])
      assert.equal(parseControlLevels(levels), undefined, levels.join('/'));
  });
});
