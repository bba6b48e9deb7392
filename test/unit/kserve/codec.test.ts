import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decodeInferRequest,
  decodeInferResponse,
  encodeInferRequest,
  encodeInferResponse,
} from '../../../src/kserve/codec.js';
import type { Datatype } from '../../../src/kserve/protocol.js';
import {
  ProtocolError,
  tensorFromBytes,
  tensorToBytes,
  tensorToJson,
  type Tensor,
} from '../../../src/kserve/tensor.js';
import { SPECIAL_NAMES } from '../../helpers/names.js';

/**
 * Conformance with the documented shapes and layouts:
 * - "Predict Protocol - Version 2" (kserve/kserve docs/predict-api/v2/required_api.md; the same
 *   text as kserve/open-inference-protocol specification/protocol/inference_rest.md): the JSON of
 *   inference requests and responses, "Tensor Data" (row-major, nested or flat), "Tensor Data
 *   Types" and their sizes;
 * - Triton's "Binary Tensor Data Extension" (triton-inference-server/server
 *   docs/protocol/extension_binary_data.md): little-endian, row-major, no padding; BOOL one byte
 *   (1/0); BYTES a 4-byte length before each element; `binary_data_size` on tensors,
 *   `binary_data` on requested outputs, `binary_data_output` on the request; the JSON's length
 *   in Inference-Header-Content-Length, the tensors after it in the JSON's order.
 */

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** A tensor from its JSON data, as a server reads it from a request. */
const tensorFromJson = (name: string, datatype: Datatype, shape: number[], data: unknown): Tensor =>
  decodeInferRequest(Buffer.from(JSON.stringify({ inputs: [{ name, datatype, shape, data }] })), undefined)
    .inputs[0]!;
const joined = (chunks: Buffer[]): Buffer => Buffer.concat(chunks);

describe('KServe v2 codec: the binary extension example, byte by byte', () => {
  // The extension's example request: input0 UINT32 [2, 2] and input1 BOOL [3] as binary data
  // (16 + 3 = 19 bytes), output0 asked for as binary.
  const input0: Tensor = {
    name: 'input0',
    datatype: 'UINT32',
    shape: [2, 2],
    data: Uint32Array.of(1, 2, 3, 4),
  };
  const input1: Tensor = { name: 'input1', datatype: 'BOOL', shape: [3], data: Uint8Array.of(1, 0, 1) };

  it('encodes the request: JSON with binary_data_size per input, binary_data on the output, then the bytes', () => {
    const body = encodeInferRequest({
      inputs: [input0, input1].map((t) => ({ ...t, bytes: tensorToBytes(t) })),
      outputs: [{ name: 'output0', binary: true }],
    });
    const all = joined(body.chunks);
    assert.equal(body.length, all.length);
    assert.equal(body.headerLength! + 19, body.length, 'Content-Length is the JSON plus 19 bytes');
    assert.equal(body.headerLength! % 8, 0, 'the JSON padded with spaces: the tensors start aligned');
    assert.deepEqual(JSON.parse(all.subarray(0, body.headerLength).toString()), {
      inputs: [
        { name: 'input0', shape: [2, 2], datatype: 'UINT32', parameters: { binary_data_size: 16 } },
        { name: 'input1', shape: [3], datatype: 'BOOL', parameters: { binary_data_size: 3 } },
      ],
      outputs: [{ name: 'output0', parameters: { binary_data: true } }],
    });
    assert.equal(
      hex(all.subarray(body.headerLength)),
      '01000000' + '02000000' + '03000000' + '04000000' + '010001',
      'input0 little-endian, row major, then input1 one byte per element',
    );
  });

  it('decodes that request as a server, and the example response as a client', () => {
    const body = encodeInferRequest({
      inputs: [input0, input1].map((t) => ({ ...t, bytes: tensorToBytes(t) })),
      outputs: [{ name: 'output0', binary: true }],
    });
    const req = decodeInferRequest(joined(body.chunks), String(body.headerLength));
    assert.deepEqual(req.outputs, [{ name: 'output0', binary: true }]);
    assert.deepEqual([...(req.inputs[0]!.data as Uint32Array)], [1, 2, 3, 4]);
    assert.deepEqual([...(req.inputs[1]!.data as Uint8Array)], [1, 0, 1]);

    // The example response: output0 FP32 [3, 2] as 24 bytes after the JSON.
    const json = Buffer.from(
      JSON.stringify({
        outputs: [{ name: 'output0', shape: [3, 2], datatype: 'FP32', parameters: { binary_data_size: 24 } }],
      }),
    );
    const values = Float32Array.of(1.0, 1.1, 2.0, 2.1, 3.0, 3.1);
    const res = decodeInferResponse(Buffer.concat([json, Buffer.from(values.buffer)]), String(json.length));
    assert.equal(res.modelName, undefined, 'the example has no model_name: tolerated');
    assert.deepEqual(res.outputs[0]!.shape, [3, 2]);
    assert.deepEqual(res.outputs[0]!.data, values);
  });
});

describe('KServe v2 codec: JSON tensors (required_api.md)', () => {
  it('reads the inference request example, and "natural" nested data as flat', () => {
    const body = Buffer.from(
      JSON.stringify({
        id: '42',
        inputs: [
          {
            name: 'input0',
            shape: [2, 2],
            datatype: 'UINT32',
            data: [
              [1, 2],
              [4, 5],
            ],
          },
          // The document's example gives BOOL [3] one element; the shape is what counts.
          { name: 'input1', shape: [3], datatype: 'BOOL', data: [true, false, true] },
        ],
        outputs: [{ name: 'output0' }],
      }),
    );
    const req = decodeInferRequest(body, undefined);
    assert.equal(req.id, '42');
    assert.deepEqual(req.outputs, [{ name: 'output0', binary: false }]);
    assert.deepEqual([...(req.inputs[0]!.data as Uint32Array)], [1, 2, 4, 5]);
    assert.deepEqual(tensorToJson(req.inputs[1]!), [true, false, true]);
  });

  it('writes the inference response example: model_name, id, outputs with their data', () => {
    const body = encodeInferResponse({
      modelName: 'mymodel',
      id: '42',
      outputs: [
        {
          name: 'output0',
          datatype: 'FP32',
          shape: [3, 2],
          data: Float32Array.of(1, 1.5, 2, 2.5, 3, 3.5),
          binary: false,
        },
      ],
    });
    assert.equal(body.headerLength, undefined, 'JSON alone: no Inference-Header-Content-Length');
    assert.deepEqual(JSON.parse(joined(body.chunks).toString()), {
      model_name: 'mymodel',
      id: '42',
      outputs: [{ name: 'output0', shape: [3, 2], datatype: 'FP32', data: [1, 1.5, 2, 2.5, 3, 3.5] }],
    });
  });

  it('binary_data_output asks for every output as binary, unless an output says otherwise', () => {
    const body = Buffer.from(
      JSON.stringify({
        parameters: { binary_data_output: true },
        inputs: [],
        outputs: [{ name: 'a' }, { name: 'b', parameters: { binary_data: false } }],
      }),
    );
    const req = decodeInferRequest(body, undefined);
    assert.equal(req.binaryOutput, true);
    assert.deepEqual(req.outputs, [
      { name: 'a', binary: true },
      { name: 'b', binary: false },
    ]);
    assert.equal(decodeInferRequest(Buffer.from('{"inputs":[]}'), undefined).outputs, undefined);
  });

  it('puts binary outputs after the JSON in their order, JSON ones inline', () => {
    const body = encodeInferResponse({
      modelName: 'm',
      modelVersion: '1',
      outputs: [
        { name: 'first', datatype: 'INT32', shape: [2], data: Int32Array.of(7, -1), binary: true },
        { name: 'inline', datatype: 'UINT8', shape: [1], data: Uint8Array.of(9), binary: false },
        { name: 'second', datatype: 'UINT8', shape: [3], data: Uint8Array.of(1, 2, 3), binary: true },
      ],
    });
    const all = joined(body.chunks);
    const json = JSON.parse(all.subarray(0, body.headerLength).toString()) as {
      outputs: { name: string; parameters?: unknown; data?: unknown }[];
    };
    assert.deepEqual(
      json.outputs.map((o) => [o.name, o.parameters, o.data]),
      [
        ['first', { binary_data_size: 8 }, undefined],
        ['inline', undefined, [9]],
        ['second', { binary_data_size: 3 }, undefined],
      ],
    );
    assert.equal(hex(all.subarray(body.headerLength)), '07000000ffffffff' + '010203');
    const back = decodeInferResponse(all, String(body.headerLength));
    assert.equal(back.modelVersion, '1');
    assert.deepEqual(
      back.outputs.map((o) => tensorToJson(o)),
      [[7, -1], [9], [1, 2, 3]],
    );
  });
});

describe('KServe v2 codec: datatypes', () => {
  it('FP16 binary outputs decode to float32', () => {
    // 1.0, -2.0, 65504 (largest half), 2^-24 (smallest subnormal), 0.333 (0x3555), -0.
    const bits = Uint16Array.of(0x3c00, 0xc000, 0x7bff, 0x0001, 0x3555, 0x8000);
    const t = tensorFromBytes('y', 'FP16', [2, 3], Buffer.from(bits.buffer));
    assert.ok(t.data instanceof Float32Array);
    assert.deepEqual([...t.data], [1, -2, 65504, 2 ** -24, 0.333251953125, -0]);
    assert.equal(hex(tensorToBytes(t)), hex(Buffer.from(bits.buffer)), 'and encode back to the same bits');
  });

  it('INT64, INT32 and UINT8 are little-endian, two’s complement', () => {
    const i64 = tensorFromBytes('a', 'INT64', [2], Buffer.from('0100000000000000feffffffffffffff', 'hex'));
    assert.deepEqual([...(i64.data as BigInt64Array)], [1n, -2n]);
    assert.deepEqual(tensorToJson(i64), [1, -2]);
    const i32 = tensorFromBytes('b', 'INT32', [1], Buffer.from('00010000', 'hex'));
    assert.deepEqual([...(i32.data as Int32Array)], [256]);
    assert.equal(hex(tensorToBytes(tensorFromJson('c', 'UINT8', [3], [0, 128, 255]))), '0080ff');
    assert.equal(hex(tensorToBytes(tensorFromJson('d', 'INT64', [1], [-1]))), 'ffffffffffffffff');
  });

  it('BOOL is one byte, 1 or 0 (any non-zero byte read as true)', () => {
    assert.equal(hex(tensorToBytes(tensorFromJson('b', 'BOOL', [3], [true, false, true]))), '010001');
    assert.deepEqual(tensorToJson(tensorFromBytes('b', 'BOOL', [2], Buffer.from('0200', 'hex'))), [
      true,
      false,
    ]);
  });

  it('BYTES: each element a 4-byte little-endian length, then its bytes', () => {
    const t = tensorFromJson('s', 'BYTES', [3], ['ab', '', 'ü']);
    const bytes = tensorToBytes(t);
    assert.equal(hex(bytes), '02000000' + '6162' + '00000000' + '02000000' + 'c3bc');
    assert.deepEqual(tensorToJson(tensorFromBytes('s', 'BYTES', [3], bytes)), ['ab', '', 'ü']);
    assert.throws(
      () => tensorFromBytes('s', 'BYTES', [3], bytes.subarray(0, 10)),
      /element 2 has no 4-byte length/,
    );
    assert.throws(() => tensorFromBytes('s', 'BYTES', [1], Buffer.from('05000000ab', 'hex')), /runs past/);
    assert.throws(() => tensorFromBytes('s', 'BYTES', [1], Buffer.from('00000000ff', 'hex')), /1 bytes left/);
  });

  it('reads tensors that start at any offset (the JSON part has any length)', () => {
    const values = Float32Array.of(0.5, -3.25, 1e-7);
    const odd = Buffer.concat([Buffer.from('x'), Buffer.from(values.buffer)]).subarray(1);
    assert.equal(odd.byteOffset % 4 !== 0, true);
    assert.deepEqual(tensorFromBytes('f', 'FP32', [3], odd).data, values);
  });

  it('reads aligned tensors in place, without a copy', () => {
    const body = encodeInferResponse({
      modelName: 'm',
      outputs: [{ name: 'y', datatype: 'FP32', shape: [2], data: Float32Array.of(1, 2), binary: true }],
    });
    const raw = Buffer.alloc(body.length);
    Buffer.concat(body.chunks).copy(raw);
    const t = decodeInferResponse(raw, String(body.headerLength)).outputs[0]!;
    assert.equal((t.data as Float32Array).buffer, raw.buffer);
    assert.deepEqual([...(t.data as Float32Array)], [1, 2]);
  });

  it('a tensor of shape [0] has no elements', () => {
    assert.deepEqual(tensorFromBytes('e', 'FP32', [4, 0, 6], Buffer.alloc(0)).data, new Float32Array(0));
  });
});

describe('KServe v2 codec: what breaks the protocol is refused, saying what', () => {
  const bad = (fn: () => unknown, re: RegExp): void =>
    assert.throws(fn, (e: Error) => e instanceof ProtocolError && re.test(e.message));
  const request = (json: unknown, binary = Buffer.alloc(0)): Buffer =>
    Buffer.concat([Buffer.from(JSON.stringify(json)), binary]);

  it('binary data sizes that do not fit the tensor or the body', () => {
    const input = (size: number) => ({
      inputs: [{ name: 'x', datatype: 'FP32', shape: [2], parameters: { binary_data_size: size } }],
    });
    const json = (size: number) => Buffer.from(JSON.stringify(input(size))).length;
    bad(
      () => decodeInferRequest(request(input(4), Buffer.alloc(4)), String(json(4))),
      /4 bytes of binary data; FP32 \[2\] takes 8/,
    );
    bad(
      () => decodeInferRequest(request(input(8), Buffer.alloc(4)), String(json(8))),
      /runs past the 4 bytes/,
    );
    bad(
      () => decodeInferRequest(request(input(8), Buffer.alloc(12)), String(json(8))),
      /4 bytes of binary data belong to no input/,
    );
  });

  it('a header length that is no byte count, or beyond the body', () => {
    bad(() => decodeInferRequest(Buffer.from('{}'), 'ten'), /is not a byte count/);
    bad(() => decodeInferRequest(Buffer.from('{}'), '3'), /beyond the body's 2 bytes/);
    bad(() => decodeInferRequest(Buffer.from('{"a":'), undefined), /does not parse/);
    bad(() => decodeInferResponse(Buffer.from('[]'), undefined), /not a JSON object/);
  });

  it('JSON data of the wrong count or kind, unknown datatypes, shapes that are not whole numbers', () => {
    bad(() => tensorFromJson('x', 'FP32', [2, 2], [1, 2, 3]), /3 elements of data; shape \[2, 2\] has 4/);
    bad(() => tensorFromJson('x', 'UINT8', [1], [256]), /not a UINT8 integer/);
    bad(() => tensorFromJson('x', 'INT32', [1], [1.5]), /not a INT32 integer/);
    bad(() => tensorFromJson('x', 'BOOL', [1], [1]), /not true or false/);
    bad(() => tensorFromJson('x', 'FP32', [1], ['1']), /not a finite number/);
    bad(() => tensorFromJson('x', 'FP32', [-1], []), /not a list of whole numbers/);
    bad(
      () =>
        decodeInferRequest(
          request({ inputs: [{ name: 'x', datatype: 'FLOAT', shape: [1], data: [1] }] }),
          undefined,
        ),
      /datatype "FLOAT" is not a tensor data type/,
    );
    for (const datatype of SPECIAL_NAMES)
      bad(
        () =>
          decodeInferRequest(
            request({ inputs: [{ name: 'x', datatype, shape: [1], data: [1] }] }),
            undefined,
          ),
        new RegExp(`datatype "${datatype}" is not a tensor data type`),
      );
    bad(() => decodeInferRequest(request({ inputs: {} }), undefined), /"inputs" is not an array/);
  });
});
