import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { topicMatches } from '../../../src/publish/mqtt-output.js';

describe('topicMatches', () => {
  it('matches as a broker does: + one level, a last # any below (and the level itself)', () => {
    const cases: [string, string, boolean][] = [
      ['homeassistant/status', 'homeassistant/status', true],
      ['homeassistant/status', 'homeassistant/status/x', false],
      ['homeassistant/+/argus/+/config', 'homeassistant/sensor/argus/argus-a-count/config', true],
      ['homeassistant/+/argus/+/config', 'homeassistant/sensor/other/argus-a-count/config', false],
      ['homeassistant/+/argus/+/config', 'homeassistant/sensor/argus-a-count/config', false],
      ['homeassistant/+/argus/+/config', 'homeassistant/sensor/argus//config', true],
      ['a/#', 'a', true],
      ['a/#', 'a/b/c', true],
      ['a/#', 'ab', false],
      ['#', '$SYS/broker', false],
      ['+/broker', '$SYS/broker', false],
    ];
    for (const [filter, topic, expected] of cases)
      assert.equal(topicMatches(filter, topic), expected, `${filter} ${topic}`);
  });
});
