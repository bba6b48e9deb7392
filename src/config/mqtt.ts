import { z } from 'zod';
import { topicWord } from './names.js';
import { int, topicPrefix, urlWithSchemes } from './primitives.js';

/** The sections about MQTT: the broker and Argus' messages (`mqtt:`), Home Assistant's discovery. */

export const mqtt = z
  .strictObject({
    /** Broker URL; absent means Argus' embedded broker. */
    url: urlWithSchemes('MQTT', ['mqtt', 'mqtts', 'ws', 'wss']).optional(),
    base_topic: topicPrefix.default('argus'),
    client_id: z.string().min(1).max(128).optional(),
    username: z.string().optional(),
    password: z.string().optional(),
    keepalive_s: int().min(5).max(3600).default(30),
    tls: z
      .strictObject({
        ca: z.string().min(1).optional(),
        cert: z.string().min(1).optional(),
        key: z.string().min(1).optional(),
        reject_unauthorized: z.boolean().default(true),
      })
      .optional(),
    /** Seconds between `stats` messages. */
    stats_interval_s: z.number().min(1).max(3600).default(30),
    /** Messages on <base>/cameras/<camera>/detections. */
    detections: z
      .strictObject({
        /** `changes`: when a camera's detections change, and every `heartbeat_s`; `every_frame`: every answered frame. */
        publish: z.enum(['changes', 'every_frame']).default('changes'),
        /** With `changes`: a camera's detections again after this long without a message. */
        heartbeat_s: z.number().min(1).max(3600).default(10),
      })
      .prefault({}),
    /** Events and state changes kept while the broker is away (oldest dropped beyond). */
    buffer_size: int().min(1).max(100000).default(1000),
    /** Seconds between reconnection attempts (mqtt.js reconnects; Argus only watches). */
    reconnect_period_s: z.number().min(0.1).max(300).default(2),
    embedded: z
      .strictObject({
        host: z.string().min(1).default('127.0.0.1'),
        port: int().min(0).max(65535).default(1883),
        /** Largest packet (topic and payload) another client may send; Argus' own are not limited. */
        max_message_kb: int().min(1).max(262144).default(256),
        /** Clients connected at once, Argus' own not counted; the next is refused until one leaves. */
        max_clients: int().min(1).max(100000).default(100),
        /** Retained messages of other clients: at most this many, of at most this many KiB together. */
        max_retained_messages: int().min(0).max(1000000).default(1000),
        max_retained_kb: int().min(0).max(1048576).default(4096),
        /** KiB that may wait in another client's socket; beyond, its QoS 0 messages are dropped. */
        max_queued_kb: int().min(16).max(1048576).default(1024),
        /** Seconds another client may stay over max_queued_kb before it is disconnected. */
        max_behind_s: z.number().min(1).max(3600).default(10),
        /** Connections that have not sent their CONNECT yet; the next is closed at once. */
        max_connecting: int().min(1).max(100000).default(100),
        /** Seconds a connection has to send its CONNECT. */
        connect_timeout_s: z.number().min(1).max(300).default(10),
        /** The login subscribers must give; not set: anyone who can reach the port may connect. */
        username: z.string().min(1).optional(),
        password: z.string().min(1).optional(),
      })
      .refine((e) => (e.username === undefined) === (e.password === undefined), {
        message: 'username and password go together: set both, or neither',
        path: ['password'],
      })
      .prefault({}),
  })
  .prefault({});

export const homeAssistant = z
  .strictObject({
    /** Announce every camera's entities to Home Assistant (MQTT discovery). */
    enabled: z.boolean().default(false),
    /** Home Assistant's discovery prefix (its MQTT integration's setting). */
    discovery_prefix: topicPrefix.default('homeassistant'),
    /** The name of the device that stands for this Argus in Home Assistant. */
    device_name: z.string().min(1).max(128).default('Argus'),
    /** Labels given entities on cameras without `objects.track` (which report every label). */
    default_labels: z.array(topicWord).min(1).default(['person']),
  })
  .prefault({});
