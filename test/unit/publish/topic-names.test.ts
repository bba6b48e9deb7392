import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commandFilters, NUMBERS, parseCommand, settingsOf } from '../../../src/control/index.js';
import { isNumber, settingKey } from '../../../src/core/setting-keys.js';
import {
  ConfigError,
  parseConfig,
  RESERVED_NAMES,
  type CameraConfig,
  type Config,
} from '../../../src/config/index.js';
import {
  areaLabels,
  cameraLabels,
  discoveryConfigs,
  discoveryFilter,
} from '../../../src/publish/ha-configs.js';
import { checkLabels } from '../../../src/detector/index.js';
import { topicMatches } from '../../../src/publish/mqtt-output.js';
import { topics, type TopicKey } from '../../../src/publish/topics.js';
import { config, LINE_POINTS, ZONE_POINTS } from '../../helpers/config.js';

/**
 * Every topic Argus publishes and every filter it subscribes to, for a config, built with the
 * topic functions Argus publishes with; each topic with the kind (TopicMap's key) and the names
 * that made it.
 */
function topicsOf(cfg: Config): { published: Map<string, string[]>; filters: string[] } {
  const base = cfg.mqtt.base_topic;
  const prefix = cfg.home_assistant.discovery_prefix;
  const t = topics(base);
  const published = new Map<string, string[]>();
  const clashes: string[] = [];
  const add = (topic: string, kind: TopicKey, ...names: string[]): void => {
    const what = `${kind}(${names.join(', ')})`;
    const before = published.get(topic);
    if (before && !before.includes(what)) clashes.push(`${topic}: ${[...before, what].join(' and ')}`);
    published.set(topic, [...(before ?? []), ...(before?.includes(what) ? [] : [what])]);
  };
  // Every kind is walked: a kind added to TopicMap fails to compile here until it is.
  const kinds: Record<TopicKey, () => void> = {
    status: () => add(t.status, 'status'),
    events: () => add(t.events, 'events'),
    crossings: () => add(t.crossings, 'crossings'),
    stats: () => add(t.stats, 'stats'),
    modeState: () => add(t.modeState, 'modeState'),
    cameraStatus: () => each((c) => add(t.cameraStatus(c), 'cameraStatus', c)),
    detections: () => each((c) => add(t.detections(c), 'detections', c)),
    health: () => each((c) => add(t.health(c), 'health', c)),
    count: () => labels((c, l) => add(t.count(c, l), 'count', c, l)),
    countActive: () => labels((c, l) => add(t.countActive(c, l), 'countActive', c, l)),
    snapshot: () => labels((c, l) => add(t.snapshot(c, l), 'snapshot', c, l)),
    zoneCount: () => zones((c, z, l) => add(t.zoneCount(c, z, l), 'zoneCount', c, z, l)),
    zoneCountActive: () => zones((c, z, l) => add(t.zoneCountActive(c, z, l), 'zoneCountActive', c, z, l)),
    zoneDwell: () => zones((c, z, l) => add(t.zoneDwell(c, z, l), 'zoneDwell', c, z, l)),
    // Every zone here, calibrated or not: a zone named anything may be calibrated.
    zoneSpeed: () => zones((c, z, l) => add(t.zoneSpeed(c, z, l), 'zoneSpeed', c, z, l)),
    lineCount: () =>
      each((c, cam) => {
        for (const [line, l] of Object.entries(cam.lines))
          for (const label of areaLabels(l.objects, cam, cfg.home_assistant.default_labels))
            for (const d of l.directions) add(t.lineCount(c, line, label, d), 'lineCount', c, line, label, d);
      }),
    switchState: () =>
      each((c, cam) => {
        for (const ref of settingsOf(cam))
          if (!isNumber(ref)) add(t.switchState(c, ref), 'switchState', c, settingKey(ref));
      }),
    numberState: () =>
      each((c) =>
        NUMBERS.forEach((key) => add(t.numberState(c, { kind: 'camera', key }), 'numberState', c, key)),
      ),
    discovery: () => {
      for (const d of discoveryConfigs({
        settings: cfg.home_assistant,
        baseTopic: base,
        topics: t,
        cameras: cfg.cameras,
        control: { modes: Object.keys(cfg.modes) },
        version: '0',
      }))
        add(d.topic, 'discovery', d.uniqueId);
    },
  };
  function each(f: (camera: string, cam: CameraConfig) => void): void {
    for (const [camera, cam] of Object.entries(cfg.cameras)) f(camera, cam);
  }
  // A camera tracking every label publishes the counts of whatever the model names: its
  // track, its zones' and lines' objects and Home Assistant's labels stand for those here.
  function labels(f: (camera: string, label: string) => void): void {
    each((c, cam) => cameraLabels(cam, cfg.home_assistant.default_labels).forEach((l) => f(c, l)));
  }
  function zones(f: (camera: string, zone: string, label: string) => void): void {
    each((c, cam) => {
      for (const [zone, z] of Object.entries(cam.zones))
        for (const label of areaLabels(z.objects, cam, cfg.home_assistant.default_labels)) f(c, zone, label);
    });
  }
  for (const walk of Object.values(kinds)) walk();
  assert.deepEqual(clashes, [], 'no two kinds (or names) share a topic');
  return {
    published,
    filters: [...commandFilters(base), `${prefix}/status`, discoveryFilter(prefix, base)],
  };
}

/** What is wrong with a config's topics: a topic two things publish, or one Argus reads as well. */
function problems(cfg: Config): string[] {
  const out: string[] = [];
  let walked: ReturnType<typeof topicsOf>;
  try {
    walked = topicsOf(cfg);
  } catch (err) {
    return [String(err)];
  }
  const own = discoveryFilter(cfg.home_assistant.discovery_prefix, cfg.mqtt.base_topic);
  for (const [topic, what] of walked.published) {
    // Argus reads its own discovery configs back, on purpose: to delete those it no longer announces.
    const isDiscovery = what.every((w) => w.startsWith('discovery('));
    for (const filter of walked.filters)
      if (topicMatches(filter, topic) && !(isDiscovery && filter === own))
        out.push(`${topic} (${what.join(', ')}) matches the subscription ${filter}`);
    if (parseCommand(cfg.mqtt.base_topic, topic, 'ON') !== undefined)
      out.push(`${topic} (${what.join(', ')}) is read as a command`);
  }
  return out;
}

/** Names one step from a reserved word that are not reserved themselves: `Status`, `sets`, `state_`. */
const ADJACENT = [
  ...new Set(
    RESERVED_NAMES.flatMap((w) => [
      `${w}s`,
      `${w[0]!.toUpperCase()}${w.slice(1)}`,
      `${w}_`,
      `_${w}`,
      `x${w}`,
    ]),
  ),
].filter((n) => !RESERVED_NAMES.includes(n));

/** One camera whose labels, zones, lines and directions are all the names given. */
function named(
  names: string[],
  over: { track?: string[]; directions?: (line: number) => [string, string] } = {},
) {
  const at = (i: number): string => names[i % names.length]!;
  return {
    model: { path: 'm.onnx' },
    home_assistant: { enabled: true, default_labels: names.slice(0, 20) },
    modes: { away: { cameras: { gate: { detect: false } } } },
    cameras: {
      gate: {
        url: 'lavfi:a',
        objects: { track: over.track ?? names },
        zones: Object.fromEntries(names.slice(0, 100).map((z) => [z, { points: ZONE_POINTS }])),
        lines: Object.fromEntries(
          names
            .slice(0, 100)
            .map((l, i) => [
              l,
              { points: LINE_POINTS, directions: over.directions?.(i) ?? [at(i), at(i + 1)] },
            ]),
        ),
      },
      // A camera tracking every label: Home Assistant's labels stand for the model's.
      yard: { url: 'lavfi:b', zones: { [at(3)]: { points: ZONE_POINTS } } },
    },
  };
}

describe("names and Argus' own topics", () => {
  it('names next to each reserved word are taken, and land on no other topic nor on one Argus reads', () => {
    assert.ok(ADJACENT.length > 4 * RESERVED_NAMES.length, String(ADJACENT.length));
    const cfg = config(named(ADJACENT));
    const { published } = topicsOf(cfg);
    assert.ok(published.size > 10000, `${published.size} topics walked`);
    assert.deepEqual(problems(cfg), []);
  });

  it('the walk finds the collisions reserved words would make (the schema aside)', () => {
    // Built past the schema, as a file with these names would run without the check.
    const unchecked = (cfg: Config, edit: (cam: CameraConfig) => void): Config => {
      edit(cfg.cameras.gate!);
      return cfg;
    };
    const cfg = (): Config => config(named(['person', 'car']));
    const status = unchecked(cfg(), (cam) => (cam.objects.track = ['person', 'status']));
    assert.match(problems(status).join('\n'), /cameraStatus\(gate\) and count\(gate, status\)/);
    const detections = unchecked(cfg(), (cam) => (cam.objects.track = ['detections']));
    assert.match(problems(detections).join('\n'), /detections\(gate\) and count\(gate, detections\)/);
    const set = unchecked(cfg(), (cam) => (cam.lines.person!.directions = ['in', 'set']));
    assert.match(
      problems(set).join('\n'),
      /lines\/person\/person\/set .* matches the subscription argus\/cameras\/\+\/\+\/\+\/\+\/set/,
    );
    const state = unchecked(cfg(), (cam) => {
      cam.objects.track = ['person', 'enabled'];
      cam.lines.person!.directions = ['in', 'state'];
    });
    const found = problems(state).join('\n');
    assert.match(found, /argus\/cameras\/gate\/lines\/person\/enabled\/state: /);
    assert.match(found, /switchState\(gate, lines\.person\.enabled\)/);
    assert.match(found, /lineCount\(gate, person, enabled, state\)/);
  });

  it('refuses every reserved word as a label, zone, line, direction or area object, at its line', () => {
    const yaml = (word: string): string =>
      [
        'model: { path: m.onnx }', // 1
        'home_assistant:', // 2
        `  default_labels: [person, ${word}]`, // 3
        'cameras:', // 4
        '  gate:', // 5
        '    url: "lavfi:a"', // 6
        `    objects: { track: [person, ${word}] }`, // 7
        '    zones:', // 8
        `      ${word}: { points: [[0, 0], [9, 0], [9, 9]] }`, // 9
        `      drive: { points: [[0, 0], [9, 0], [9, 9]], objects: [${word}] }`, // 10
        '    lines:', // 11
        `      ${word}: { points: [[0, 0], [9, 9]] }`, // 12
        `      road: { points: [[0, 0], [9, 9]], directions: [in, ${word}], objects: [${word}] }`, // 13
      ].join('\n');
    for (const word of RESERVED_NAMES) {
      let err: unknown;
      try {
        parseConfig(yaml(word), 'argus.yaml');
      } catch (e) {
        err = e;
      }
      assert.ok(err instanceof ConfigError, word);
      const words = err.issues
        .filter((i) => i.message.startsWith("must not be one of the words of Argus' own topics"))
        .map((i) => `${i.line}: ${i.path}`);
      assert.deepEqual(
        words,
        [
          '3: home_assistant.default_labels[1]',
          '7: cameras.gate.objects.track[1]',
          `9: cameras.gate.zones.${word}`,
          '10: cameras.gate.zones.drive.objects[0]',
          `12: cameras.gate.lines.${word}`,
          '13: cameras.gate.lines.road.objects[0]',
          '13: cameras.gate.lines.road.directions[1]',
        ],
        word,
      );
    }
  });

  it('refuses a model whose labels hold a reserved word (a camera tracking every label publishes each), naming the file', () => {
    assert.throws(
      () => checkLabels(['person', 'set'], 'labels.txt', 'the labels file'),
      /^Error: labels\.txt: label 1 "set" must not be one of the words of Argus' own topics \(.*\): .*; rename it in the labels file$/,
    );
    checkLabels(['person', ...ADJACENT], 'labels.txt', 'the labels file');
  });
});
