import { ModelError, planModel } from '../detector/index.js';

/** `argus model inspect FILE`: what Argus reads from a model, before running it. */
export async function inspectModel(path: string, labels: string | undefined, json: boolean): Promise<number> {
  let plan;
  try {
    plan = await planModel({ path, labels });
  } catch (err) {
    if (!(err instanceof ModelError)) throw err;
    process.stderr.write(`argus: ${err.message}\n`);
    return 1;
  }
  const info = plan.info;
  const shape = (dims: (number | string | null)[]): string => `[${dims.map((d) => d ?? '?').join(', ')}]`;
  const summary = {
    file: path,
    producer: info.producer,
    ir_version: info.irVersion,
    opsets: info.opsets.map((o) => `${o.domain || 'ai.onnx'} ${o.version}`),
    inputs: info.inputs.map((i) => ({ name: i.name, shape: shape(i.shape) })),
    outputs: info.outputs.map((o) => ({ name: o.name, shape: shape(o.shape) })),
    input_size: plan.inputSize,
    batch: plan.staticBatch === null ? 'dynamic' : `static ${plan.staticBatch}`,
    labels: plan.labels.length,
    labels_from: plan.labelsFrom,
    quantization: plan.quantization,
    nodes: Object.values(info.opCounts).reduce((a, b) => a + b, 0),
  };
  if (json) {
    process.stdout.write(`${JSON.stringify({ ...summary, label_names: plan.labels })}\n`);
    return 0;
  }
  const lines = [
    `${path}`,
    `  producer      ${summary.producer || '?'} (IR ${summary.ir_version}, opset ${summary.opsets.join(', ')})`,
    ...summary.inputs.map((i) => `  input         ${i.name} ${i.shape}`),
    ...summary.outputs.map((o) => `  output        ${o.name} ${o.shape}`),
    `  input size    ${summary.input_size}`,
    `  batch         ${summary.batch}`,
    `  labels        ${summary.labels} from ${summary.labels_from}: ${plan.labels.slice(0, 8).join(', ')}${plan.labels.length > 8 ? ', …' : ''}`,
    `  quantization  ${summary.quantization}`,
    `  nodes         ${summary.nodes}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
