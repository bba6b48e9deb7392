import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ClipPayload } from '../publish/index.js';
import { frameFits, MAX_FRAME_SIDE } from '../record/index.js';

/**
 * An event of the history on disk: its record (`<key>.json`), the names of its files, and the
 * names of every file Argus writes in the history's directory.
 */

/** An event as the history keeps it: what it is filtered and ordered by, and what is answered. */
export interface StoredEvent {
  id: string;
  camera: string;
  label: string;
  /** Every zone it has been in. */
  zones: string[];
  /** When it started (ms since the epoch): the history's order. */
  start: number;
  /** The event as the API answers it: its latest payload. */
  event: Record<string, unknown>;
  /**
   * Where its snapshot's picture is when its camera records (issue 47): a frame of the camera's
   * recording, drawn on request, instead of `<key>.jpg`. Absent: `<key>.jpg` is the snapshot.
   */
  frame?: SnapshotFrame;
}

/** A snapshot kept as a frame of the camera's recording: which frame, and what is drawn on it. */
export interface SnapshotFrame {
  /** The frame's time on the recording's clock (ms since the epoch). */
  ts: number;
  /** The source's size: what the boxes' pixels are of. */
  srcW: number;
  srcH: number;
  /** The picture's size, as the snapshot published on MQTT has it. */
  w: number;
  h: number;
  quality: number;
  /** The boxes drawn, in source pixels. */
  detections: { label: string; score: number; box: [number, number, number, number] }[];
  /** The recording no longer holds the frame and it could not be kept as `<key>.jpg`: why. */
  gone?: string;
}

export interface Snapshot {
  /** The frame with the object's box drawn (published; kept as `<key>.jpg` unless the record names its frame). */
  full: Buffer;
  /** The object and a margin around it. */
  crop: Buffer;
}

const frameSchema = z.object({
  ts: z.number(),
  srcW: z.number().positive(),
  srcH: z.number().positive(),
  // Checked after (`parseRecord`): a size past what is decoded loses the frame, not the record.
  w: z.number(),
  h: z.number(),
  quality: z.number().int().min(1).max(100),
  detections: z.array(
    z.object({
      label: z.string(),
      score: z.number(),
      box: z.tuple([z.number(), z.number(), z.number(), z.number()]),
    }),
  ),
  gone: z.string().optional(),
});

const fileSchema = z.object({
  version: z.literal(1),
  id: z.string().min(1),
  camera: z.string(),
  label: z.string(),
  zones: z.array(z.string()),
  start: z.number(),
  event: z.record(z.string(), z.unknown()),
  frame: frameSchema.optional(),
});

export const RECORD = '.json';
export const SNAPSHOT_FILES = { full: '.jpg', crop: '.crop.jpg' } as const;
export const CLIP = '.mp4';
/** An event's files besides its record. */
export const MEDIA = [SNAPSHOT_FILES.full, SNAPSHOT_FILES.crop, CLIP] as const;

/** A clip Argus stopped before writing: what a record still `recording` at start says instead (docs/mqtt.md, `clip`). */
export const STOPPED_CLIP: ClipPayload = {
  state: 'failed',
  error: 'Argus stopped before its clip was written',
  reasons: ['stream_ended'],
};

/**
 * The names of the files Argus writes in the history's directory: `<key>.json`, `<key>.jpg`,
 * `<key>.crop.jpg`, and their temporary files (`.<name>.<pid>.tmp`, state/atomic.ts).
 */
const OWN_FILE = String.raw`[0-9a-f]{24}(?:\.json|\.jpg|\.crop\.jpg|\.mp4)`;
const OWN_NAME = new RegExp(String.raw`^(?:${OWN_FILE}|\.${OWN_FILE}\.\d+\.tmp)$`);
export const isOwnName = (name: string): boolean => OWN_NAME.test(name);

/** An event's files' name: a hash of its id (ids hold camera names, which may not fit a file name). */
export const eventKey = (id: string): string => createHash('sha256').update(id).digest('hex').slice(0, 24);

/** An event's record as its file holds it: one line of JSON. */
export function recordText(e: StoredEvent): string {
  const { id, camera, label, zones, start, event, frame } = e;
  return `${JSON.stringify({ version: 1, id, camera, label, zones, start, event, ...(frame ? { frame } : {}) })}\n`;
}

/**
 * The event a record file of that key holds; throws when it is not one, or is another event's. A
 * frame whose size is past what is decoded (`frameFits`: a model whose fixed input is larger than
 * 4096, or a corrupt size) is marked gone, with why; the record and its other files are kept.
 */
export function parseRecord(text: string, key: string): StoredEvent {
  const { id, camera, label, zones, start, event, frame } = fileSchema.parse(JSON.parse(text));
  if (eventKey(id) !== key) throw new Error(`holds event ${id}, whose file is another`);
  if (frame && frame.gone === undefined && !frameFits(frame.w, frame.h))
    frame.gone = `its size (${frame.w}×${frame.h}) is past what is drawn from the recording, ${MAX_FRAME_SIDE} a side (frame_too_large)`;
  return { id, camera, label, zones, start, event, ...(frame ? { frame: frame } : {}) };
}
