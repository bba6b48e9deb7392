#!/usr/bin/env node
/**
 * The command line: owns argv, output streams and exit codes. Exit codes: 0 success,
 * 1 a failure in what was asked (bad config, unreadable model or image), 2 a usage error.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { errorMessage, errorStack } from './core/errors.js';
import {
  ConfigError,
  PROVIDERS,
  WEBGPU_VENDORS,
  type ProviderName,
  type WebgpuVendor,
} from './config/index.js';
import {
  inspectModel,
  runDaemon,
  runDetect,
  runInstall,
  runPrepare,
  providerWarning,
  summarize,
} from './commands/index.js';
import { loadVouchedConfig } from './models/index.js';
import { buildFixtureModel, DEFAULT_FIXTURE, type FixtureOptions } from './onnx/index.js';
import { argusVersion } from './version.js';

const USAGE = `Usage: argus <command> [options]

Commands:
  run -c FILE                 run the daemon: cameras -> detector -> MQTT
  validate -c FILE            check a config file; print its errors with line numbers
  detect --model FILE IMAGE…  run a model on images, print one JSON object per image
      [--conf 0.25] [--iou 0.45] [--labels FILE] [--providers cpu] [--batch 4]
      [--precision fp32|fp16] [--webgpu-vendor nvidia|amd|intel|software]
  model inspect FILE          inputs, outputs, batch, labels, opset, quantization
      [--labels FILE] [--json]
  model prepare FILE --out FILE
                              make a static batch dynamic, int8 ConvInteger -> fp32 (or fp16)
      [--batch dynamic|keep] [--precision fp32|fp16|keep] [--check-image IMAGE]… [--labels FILE]
  model fixture --out FILE    write Argus' generated test model (ONNX)
      [--size 320] [--stride 32] [--layout channels-first|transposed|flat]
      [--static-batch N] [--no-names] [--work N]
  install [--root DIR]        install the systemd unit and a config; check them as the service's user

Options:
  -h, --help      show this help
  -v, --version   print the version`;

class UsageError extends Error {}

function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(errorMessage(err));
  }
}

function num(v: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new UsageError(`${name} must be a number from ${min} to ${max}, got '${v}'`);
  return n;
}

async function validate(args: string[]): Promise<number> {
  const { values } = parse(args, { config: { type: 'string', short: 'c' } });
  if (!values.config) throw new UsageError('validate needs -c FILE');
  try {
    const loaded = await loadVouchedConfig(values.config);
    process.stdout.write(`${summarize(loaded)}\n`);
    const warning = await providerWarning(loaded.config);
    if (warning) process.stderr.write(`argus: ${loaded.file}: ${warning}\n`);
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.format()}\n${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

async function detect(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    model: { type: 'string', short: 'm' },
    labels: { type: 'string' },
    conf: { type: 'string' },
    iou: { type: 'string' },
    providers: { type: 'string' },
    batch: { type: 'string' },
    precision: { type: 'string' },
    'webgpu-vendor': { type: 'string' },
    'log-level': { type: 'string' },
  });
  if (!values.model) throw new UsageError('detect needs --model FILE');
  const precision = values.precision ?? 'fp32';
  if (precision !== 'fp32' && precision !== 'fp16')
    throw new UsageError(`--precision must be fp32 or fp16, got '${precision}'`);
  const vendor = values['webgpu-vendor'];
  if (vendor !== undefined && !(WEBGPU_VENDORS as readonly string[]).includes(vendor))
    throw new UsageError(`--webgpu-vendor must be one of ${WEBGPU_VENDORS.join(', ')}, got '${vendor}'`);
  if (positionals.length === 0) throw new UsageError('detect needs at least one IMAGE');
  const providers = (values.providers ?? 'cpu').split(',').map((p) => p.trim());
  for (const p of providers) {
    if (!(PROVIDERS as readonly string[]).includes(p))
      throw new UsageError(`unknown provider '${p}' (one of ${PROVIDERS.join(', ')})`);
  }
  return runDetect({
    model: values.model,
    labels: values.labels,
    images: positionals,
    conf: num(values.conf, '--conf', 0.25, 0, 1),
    iou: num(values.iou, '--iou', 0.45, 0, 1),
    batch: num(values.batch, '--batch', 4, 1, 64),
    providers: providers as ProviderName[],
    precision,
    webgpuVendor: vendor as WebgpuVendor | undefined,
    logLevel: values['log-level'] ?? 'warn',
  });
}

async function prepare(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    out: { type: 'string', short: 'o' },
    batch: { type: 'string' },
    precision: { type: 'string' },
    'check-image': { type: 'string', multiple: true },
    labels: { type: 'string' },
  });
  if (positionals.length !== 1) throw new UsageError('model prepare needs one FILE');
  if (!values.out) throw new UsageError('model prepare needs --out FILE');
  const batch = values.batch ?? 'dynamic';
  const precision = values.precision ?? 'fp32';
  if (batch !== 'dynamic' && batch !== 'keep')
    throw new UsageError(`--batch must be dynamic or keep, got '${batch}'`);
  if (precision !== 'fp32' && precision !== 'fp16' && precision !== 'keep')
    throw new UsageError(`--precision must be fp32, fp16 or keep, got '${precision}'`);
  return runPrepare({
    input: positionals[0]!,
    out: values.out,
    batch,
    precision,
    labels: values.labels,
    checkImages: values['check-image'] ?? [],
  });
}

async function model(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'inspect') {
    const { values, positionals } = parse(rest, { labels: { type: 'string' }, json: { type: 'boolean' } });
    if (positionals.length !== 1) throw new UsageError('model inspect needs one FILE');
    return inspectModel(positionals[0]!, values.labels, values.json === true);
  }
  if (sub === 'prepare') return prepare(rest);
  if (sub !== 'fixture')
    throw new UsageError(`unknown model command '${sub ?? ''}' (expected: inspect, prepare, fixture)`);
  const { values } = parse(rest, {
    out: { type: 'string', short: 'o' },
    size: { type: 'string' },
    stride: { type: 'string' },
    layout: { type: 'string' },
    'static-batch': { type: 'string' },
    'no-names': { type: 'boolean' },
    work: { type: 'string' },
  });
  if (!values.out) throw new UsageError('model fixture needs --out FILE');
  const layout = values.layout ?? DEFAULT_FIXTURE.layout;
  if (!['channels-first', 'transposed', 'flat'].includes(layout))
    throw new UsageError(`unknown layout '${layout}'`);
  const opts: FixtureOptions = {
    size: num(values.size, '--size', DEFAULT_FIXTURE.size, 32, 2048),
    stride: num(values.stride, '--stride', DEFAULT_FIXTURE.stride, 1, 512),
    layout: layout as FixtureOptions['layout'],
    batch: values['static-batch'] ? num(values['static-batch'], '--static-batch', 1, 1, 64) : 'dynamic',
    names: !values['no-names'],
    work: num(values.work, '--work', 0, 0, 1000),
  };
  if (!Number.isInteger(opts.work))
    throw new UsageError(`--work must be a whole number, got '${values.work}'`);
  await mkdir(dirname(values.out), { recursive: true });
  await writeFile(values.out, buildFixtureModel(opts));
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  try {
    switch (command) {
      case 'run': {
        const { values } = parse(args, { config: { type: 'string', short: 'c' } });
        if (!values.config) throw new UsageError('run needs -c FILE');
        return await runDaemon(values.config);
      }
      case 'validate':
        return await validate(args);
      case 'detect':
        return await detect(args);
      case 'model':
        return await model(args);
      case 'install':
        return await runInstall({ root: parse(args, { root: { type: 'string' } }).values.root ?? '/' });
      case '-v':
      case '--version':
        process.stdout.write(`${argusVersion()}\n`);
        return 0;
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        process.stdout.write(`${USAGE}\n`);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`argus: ${err.message}\n\n${USAGE}\n`);
      return 2;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // The daemon's stages have stopped; leave even if a library kept a handle open.
    if (process.argv[2] === 'run') setTimeout(() => process.exit(code), 200).unref();
  },
  (err: unknown) => {
    process.stderr.write(`argus: ${errorStack(err)}\n`);
    process.exitCode = 1;
  },
);
