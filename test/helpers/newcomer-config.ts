/**
 * The config of issue 45's newcomer: three cameras with zones, a line, masks, speed calibration
 * and Home Assistant; the third camera's `objects.track` is at line 58, its zone's `objects` at
 * line 66 and its line's `objects` at line 72. `model` is the two lines under `models.default`
 * (lines 4 and 5); `edit` changes those three lines (`track: [persons, car, bicycle]`).
 */
export const TRACK_LINE = 58;
export const ZONE_LINE = 66;
export const LINE_LINE = 72;

export function newcomerConfig(
  model: [string, string],
  edit: { track?: string; zone?: string; line?: string } = {},
): string {
  const lines = [
    '# Three cameras, as a newcomer wrote them (issue 45): zones, a line, masks, speed, clips.',
    'models:',
    '  default:',
    ...model.map((l) => `    ${l}`),
    'events:',
    '  speed_unit: km/h',
    '  stationary_after_s: 20',
    'home_assistant:',
    '  enabled: true',
    'cameras:',
    '  drive:',
    '    url: rtsp://10.0.0.11:554/stream1',
    '    fps: 5',
    '    objects:',
    '      track: [person, car]',
    '      filters:',
    '        car:',
    '          min_score: 0.5',
    '    zones:',
    '      driveway:',
    '        points: [[100, 300], [500, 300], [560, 470], [60, 470]]',
    '        objects: [car]',
    '        distances: [6, 8, 6, 8]',
    '        speed_threshold: 5',
    '  garden:',
    '    url: rtsp://10.0.0.12:554/stream1',
    '    fps: 5',
    '    objects:',
    '      track: [person, dog]',
    '      mask:',
    '        - [[0, 0], [640, 0], [640, 40], [0, 40]]',
    '    zones:',
    '      lawn:',
    '        points: [[0, 200], [640, 200], [640, 480], [0, 480]]',
    '        objects: [person, dog]',
    '        loiter_s: 30',
    '  street:',
    '    url: rtsp://10.0.0.13:554/stream1',
    '    fps: 5',
    '    priority: 7',
    '    rtsp_transport: tcp',
    '    detect: true',
    '    cache_mask:',
    '      - [[500, 0], [640, 0], [640, 120], [500, 120]]',
    '    objects:',
    '      filters:',
    '        person:',
    '          min_score: 0.4',
    '        car:',
    '          min_score: 0.5',
    '          mask:',
    '            - [[0, 0], [200, 0], [200, 80], [0, 80]]',
    '        bicycle:',
    '          min_score: 0.3',
    '      mask:',
    '        - [[600, 400], [640, 400], [640, 480], [600, 480]]',
    '      track: [person, car, bicycle]',
    '    zones:',
    '      road:',
    '        points: [[0, 250], [640, 250], [640, 330], [0, 330]]',
    '        distances: [20, 4, 20, 4]',
    '      crosswalk:',
    '        points: [[200, 300], [440, 300], [440, 420], [200, 420]]',
    '        loiter_s: 60',
    '        objects: [person]',
    '    lines:',
    '      kerb:',
    '        points: [[0, 420], [640, 420]]',
    '        anchor: bottom_center',
    '        directions: [in, out]',
    '        objects: [person]',
    '',
  ];
  lines[TRACK_LINE - 1] = `      track: ${edit.track ?? '[person, car, bicycle]'}`;
  lines[ZONE_LINE - 1] = `        objects: ${edit.zone ?? '[person]'}`;
  lines[LINE_LINE - 1] = `        objects: ${edit.line ?? '[person]'}`;
  return lines.join('\n');
}
