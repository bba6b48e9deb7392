import { stat } from 'node:fs/promises';
import {
  COCO,
  ConfigError,
  dottedPath,
  loadConfig,
  nearest,
  untrackedLabels,
  type ConfigIssue,
  type LoadedConfig,
  type PathKey,
} from '../config/index.js';
import { scrub } from '../redact.js';
import { checkLabels, ModelError, planModel, readLabels } from '../detector/index.js';

export { nearest };

/**
 * What `argus validate` checks beyond the file itself, and `argus run` before it starts anything:
 * that each local model can be read as a model Argus runs (its header, input and labels, read
 * without an inference session), that every label the config names is one of its camera's model,
 * that `http.max_body_mb` holds one picture of each model, and that the state directory can be
 * one. Each problem is a ConfigIssue with the config's line.
 */
export async function vouchFor(loaded: LoadedConfig): Promise<ConfigIssue[]> {
  const { config } = loaded;
  const issues: ConfigIssue[] = [];
  const at = (path: PathKey[], message: string, atKey = false): void => {
    // A path may hold a substituted value (`${MODEL_DIR}/m.onnx`): every one is a secret.
    issues.push({
      path: dottedPath(path),
      line: loaded.lineOf(path, atKey),
      message: scrub(message, loaded.secrets),
    });
  };
  // `model:` is the model named default: its keys are under `model`, the others' under `models.<name>`.
  const modelKey = (name: string, key: string): PathKey[] =>
    name === 'default' && loaded.lineOf(['model']) !== undefined ? ['model', key] : ['models', name, key];

  /** Each model's labels; undefined for a remote model without `labels:` (its server names them). */
  const labelsOf = new Map<string, string[] | undefined>();
  const inputSizes = new Map<string, number>();
  for (const [name, m] of Object.entries(config.models)) {
    labelsOf.set(name, undefined);
    try {
      if (m.path) {
        const plan = await planModel({ path: m.path, labels: m.labels, input_size: m.input_size });
        labelsOf.set(name, plan.labels);
        inputSizes.set(name, plan.inputSize);
      } else if (m.labels) {
        const labels = await readLabels(m.labels);
        checkLabels(labels, m.labels, 'the labels file');
        labelsOf.set(name, labels);
      }
    } catch (err) {
      if (!(err instanceof ModelError)) throw err;
      // planModel's messages start with the file they are about: the labels file, or the model.
      const key = m.labels && err.message.startsWith(`${m.labels}:`) ? 'labels' : m.path ? 'path' : 'labels';
      at(modelKey(name, key), err.message);
    }
  }

  const track = (path: PathKey[], label: string, model: string, atKey = false): void => {
    const labels = labelsOf.get(model);
    if (!labels || labels.includes(label)) return;
    const near = nearest(label, labels);
    at(
      path,
      `'${label}' is not a label of model '${model}'${near ? ` (did you mean '${near}'?)` : ''}; ` +
        (labels.length <= 12
          ? `its labels are ${labels.join(', ')}`
          : `\`argus model inspect\` lists its ${labels.length} labels`),
      atKey,
    );
  };
  for (const [cam, c] of Object.entries(config.cameras)) {
    c.objects.track?.forEach((l, i) => track(['cameras', cam, 'objects', 'track', i], l, c.model));
    for (const label of Object.keys(c.objects.filters))
      track(['cameras', cam, 'objects', 'filters', label], label, c.model, true);
    for (const kind of ['zones', 'lines'] as const)
      for (const [name, area] of Object.entries<{ objects?: string[] }>(c[kind]))
        area.objects?.forEach((l, i) => track(['cameras', cam, kind, name, 'objects', i], l, c.model));
  }
  // A zone's or line's label the camera does not track, judged by the model's labels where known
  // (COCO's else): one issue per line, so a label already refused above is not blamed again.
  for (const [cam, c] of Object.entries(config.cameras)) {
    const labels = labelsOf.get(c.model);
    const reference = labels ? { labels, what: `a label of model '${c.model}'` } : COCO;
    for (const f of untrackedLabels(c, reference)) {
      const path: PathKey[] = ['cameras', cam, ...f.path];
      if (!issues.some((i) => i.path === dottedPath(path))) at(path, f.message);
    }
  }
  const ha = config.home_assistant;
  if (ha.enabled) {
    // default_labels give entities to cameras that track every label: each must be one of their model's.
    const models = new Set(Object.values(config.cameras).flatMap((c) => (c.objects.track ? [] : [c.model])));
    ha.default_labels.forEach((l, i) => {
      for (const model of models) track(['home_assistant', 'default_labels', i], l, model);
    });
  }

  // A picture of the model as RGB bytes: what KServe's UINT8 form sends, and more than a JPEG of it.
  const limit = config.http.max_body_mb * 1024 * 1024;
  for (const [name, size] of inputSizes) {
    const bytes = size * size * 3;
    if (bytes > limit)
      at(
        ['http', 'max_body_mb'],
        `${config.http.max_body_mb} MB cannot hold one ${size}×${size} picture of model '${name}' ` +
          `(${(bytes / 1048576).toFixed(2)} MB as RGB); set at least ${Math.ceil((bytes / 1048576) * 100) / 100}`,
      );
  }

  // The loader resolves state_dir (systemd's, the key's, or the default), so it is always set here.
  const dir = config.state_dir!;
  const isDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => true, // missing (Argus creates it) or unreadable (the daemon says so, and runs without it)
  );
  if (!isDir) {
    const line = loaded.lineOf(['state_dir']);
    issues.push({
      path: line === undefined ? '' : 'state_dir',
      line,
      message: scrub(`the state directory ${dir} is a file, not a directory`, loaded.secrets),
    });
  }
  return issues.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

/** The config in `file`, loaded and vouched for; throws ConfigError listing every problem found. */
export async function loadVouchedConfig(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LoadedConfig> {
  const loaded = await loadConfig(file, env, { tracked: 'models' });
  const issues = await vouchFor(loaded);
  if (issues.length) throw new ConfigError(file, issues);
  return loaded;
}
