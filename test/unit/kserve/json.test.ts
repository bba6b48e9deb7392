import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { tensorFromJson } from '../../../src/kserve/json-data.js';
import {
  JsonData,
  MAX_DEPTH,
  MAX_SKELETON,
  parseJson,
  runSteps,
  SLICE_BYTES,
  type Steps,
} from '../../../src/kserve/json.js';
import type { Datatype } from '../../../src/kserve/protocol.js';
import { ProtocolError, type Tensor } from '../../../src/kserve/tensor.js';

const parse = (text: string): unknown => runSteps(parseJson(Buffer.from(text)));

/** A tensor from `{"data": <text>}`, as a request's input is read. */
function tensor(datatype: Datatype, shape: number[], dataText: string): Tensor {
  const doc = parse(`{"data": ${dataText}}`) as { data: unknown };
  return runSteps(tensorFromJson('x', datatype, shape, doc.data));
}

const refused = (fn: () => unknown, re: RegExp): void =>
  assert.throws(fn, (e: Error) => e instanceof ProtocolError && re.test(e.message), String(re));

/** How many pauses the steps make on their way. */
function pauses<T>(steps: Steps<T>): number {
  let n = 0;
  while (!steps.next().done) n++;
  return n;
}

describe('KServe JSON bodies: the JSON around tensors reads as JSON.parse reads it', () => {
  it('any JSON value (no "data" key) is read as JSON.parse reads it, any text refused where JSON.parse refuses it', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.boolean(), (v, pretty) => {
        const text = JSON.stringify(v, null, pretty ? 2 : undefined);
        if (text.includes('"data"')) return;
        assert.deepEqual(parse(text), JSON.parse(text));
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[\s\d.eE+\-"\\tfrunl[\]{},:ax\u00e9]{0,40}$/), (text) => {
        let want: unknown;
        try {
          want = JSON.parse(text);
        } catch {
          refused(() => parse(text), /does not parse/);
          return;
        }
        if (text.includes('"data"')) return;
        assert.deepEqual(parse(text), want);
      }),
      { numRuns: 2000 },
    );
  });

  it('a key "__proto__" is a key, as JSON.parse makes it; the object keeps its prototype', () => {
    const o = parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(o), Object.prototype);
    assert.deepEqual(Object.keys(o), ['__proto__', 'a']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('a "data" array is located, not read: a JsonData over its bytes', () => {
    const text = '{"inputs": [{"name": "x", "data": [[1, 2], ["]", 3]] }]}';
    const doc = parse(text) as { inputs: { data: JsonData }[] };
    const d = doc.inputs[0]!.data;
    assert.ok(d instanceof JsonData);
    assert.equal(d.buf.toString('utf8', d.start, d.end), '[[1, 2], ["]", 3]]');
  });

  it(`refuses nesting deeper than ${MAX_DEPTH} and more than ${MAX_SKELETON} bytes around the tensors' data, however deep or long`, () => {
    refused(() => parse('['.repeat(100_000) + ']'.repeat(100_000)), /nested deeper than 32 levels/);
    refused(() => parse('{"a":'.repeat(100_000)), /nested deeper than 32 levels/);
    parse('['.repeat(32) + ']'.repeat(32));
    refused(() => parse('['.repeat(33) + ']'.repeat(33)), /nested deeper than 32 levels/);
    refused(
      () => parse(`{"id": "${'x'.repeat(MAX_SKELETON)}"}`),
      /over 65536 bytes apart from its tensors' "data"/,
    );
    refused(() => parse(`{"id": 1${' '.repeat(20 * MAX_SKELETON)}}`), /over 65536 bytes/);
    // The data arrays do not count.
    const big = `{"data": [${'1,'.repeat(MAX_SKELETON)}1]}`;
    assert.ok((parse(big) as { data: unknown }).data instanceof JsonData);
  });

  it('refuses what is not JSON, saying where', () => {
    refused(() => parse('{"a": 1,}'), /where a key should be at byte 8/);
    refused(() => parse('{"a": 01}'), /where ',' or '}' should be/);
    refused(() => parse('{"a": [1, 2'), /where ',' or ']' should be/);
    refused(() => parse('{"data": [1, 2'), /an array with no end/);
    refused(() => parse('{"data": ["1, 2]}'), /an array with no end/);
    refused(() => parse('{"a": "\u0001"}'), /a control character/);
    refused(() => parse('{} {}'), /after the value/);
    refused(() => parse(''), /unexpected the end/);
  });
});

describe('KServe JSON bodies: tensor data', () => {
  it('reads flat data, and data nested exactly as the shape, into the datatype', () => {
    assert.deepEqual(
      [...(tensor('UINT8', [2, 3], '[1, 2, 3, 4, 5, 255]').data as Uint8Array)],
      [1, 2, 3, 4, 5, 255],
    );
    assert.deepEqual(
      [...(tensor('INT32', [2, 3], '[[1,2,3],[-4,5,6]]').data as Int32Array)],
      [1, 2, 3, -4, 5, 6],
    );
    assert.deepEqual(
      [...(tensor('INT64', [1, 2], '[ [ -9007199254740991 , 7 ] ]').data as BigInt64Array)],
      [-9007199254740991n, 7n],
    );
    assert.deepEqual(
      [...(tensor('FP32', [2, 1, 2], '[[[0.5, -1e-3]], [[2E2, 0]]]').data as Float32Array)],
      [0.5, Math.fround(-1e-3), 200, 0],
    );
    assert.deepEqual([...(tensor('BOOL', [3], '[true, false, true]').data as Uint8Array)], [1, 0, 1]);
    assert.deepEqual(
      (tensor('BYTES', [2], '["ab", "\\u00fc"]').data as Buffer[]).map((b) => b.toString()),
      ['ab', 'ü'],
    );
    assert.equal(tensor('FP32', [0, 3], '[]').data.length, 0);
    assert.equal(tensor('FP32', [2, 0], '[[], []]').data.length, 0);
    assert.deepEqual([...(tensor('FP64', [], '[3]').data as Float64Array)], [3]);
  });

  it('numbers read exactly as JSON.parse reads them', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (v) => {
        const text = JSON.stringify(v);
        assert.equal((tensor('FP64', [1], `[${text}]`).data as Float64Array)[0], JSON.parse(text));
      }),
      { numRuns: 3000 },
    );
    const digits = fc.stringMatching(/^[0-9]{1,24}$/);
    fc.assert(
      fc.property(
        fc.boolean(),
        digits.map((d) => d.replace(/^0+(?=\d)/, '')),
        fc.option(digits),
        fc.option(fc.integer({ min: -400, max: 400 })),
        (neg, int, frac, exp) => {
          const text = `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : `e${exp}`}`;
          const want = JSON.parse(text) as number;
          if (!Number.isFinite(want)) return;
          assert.equal((tensor('FP64', [1], `[${text}]`).data as Float64Array)[0], want, text);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('refuses data nested otherwise than the shape, deeper than its rank, or of another count, saying how', () => {
    refused(() => tensor('UINT8', [2, 2], '[[1, 2], 3, 4]'), /neither flat nor nested as its shape \[2, 2\]/);
    refused(() => tensor('UINT8', [2, 2], '[1, 2, [3, 4]]'), /neither flat nor nested as its shape \[2, 2\]/);
    refused(() => tensor('UINT8', [4], '[[1, 2], [3, 4]]'), /nested deeper than its shape \[4\]/);
    refused(() => tensor('UINT8', [1, 1], '[[[1]]]'), /nested deeper than its shape \[1, 1\]/);
    refused(
      () => tensor('UINT8', [2, 2], '[[1, 2], [3]]'),
      /an array at depth 2 of the data has 1 elements; shape \[2, 2\] gives it 2/,
    );
    refused(
      () => tensor('UINT8', [2, 2], '[[1, 2, 3], [4]]'),
      /depth 2 of the data has more than the 2 elements/,
    );
    refused(
      () => tensor('UINT8', [2, 2], '[[1, 2]]'),
      /an array at depth 1 of the data has 1 elements; shape \[2, 2\] gives it 2/,
    );
    refused(() => tensor('UINT8', [3], '[1, 2, 3, 4]'), /4 elements of data; shape \[3\] has 3/);
    refused(() => tensor('UINT8', [3], '[1, 2]'), /2 elements of data; shape \[3\] has 3/);
    refused(() => tensor('UINT8', [3], '[1, 2, ]'), /',' before ']'/);
    refused(() => tensor('UINT8', [3], '[1 2 3]'), /where ',' or ']' should be/);
    refused(
      () => tensor('UINT8', [1, 1000000000], '[1]'),
      /1 elements of data; shape \[1, 1000000000\] has 1000000000/,
    );
    refused(() => tensor('UINT8', [2 ** 40, 2 ** 40], '[1]'), /more elements than can be counted/);
  });

  it('refuses data 100,000 deep at the shape’s rank, not by a stack overflow', () => {
    const deep = '['.repeat(100_000) + '1' + ']'.repeat(100_000);
    refused(() => tensor('UINT8', [1, 2, 2, 3], deep), /nested deeper than its shape \[1, 2, 2, 3\]/);
    refused(() => tensor('UINT8', [1], deep), /nested deeper than its shape \[1\]/);
  });

  it('refuses elements of the wrong kind or range', () => {
    refused(() => tensor('UINT8', [1], '[256]'), /element 0 \(256\) is not a UINT8 integer/);
    refused(() => tensor('INT8', [2], '[1, -129]'), /element 1 \(-129\) is not a INT8 integer/);
    refused(() => tensor('INT32', [1], '[1.5]'), /not a INT32 integer/);
    refused(() => tensor('FP32', [1], '[1e999]'), /not a finite number/);
    refused(() => tensor('FP32', [1], '["1"]'), /not a finite number/);
    refused(() => tensor('FP32', [1], '[null]'), /not a finite number/);
    refused(() => tensor('FP32', [1], '[{}]'), /not a finite number/);
    refused(() => tensor('FP32', [1], '[.5]'), /not a finite number/);
    refused(() => tensor('BOOL', [1], '[1]'), /not true or false/);
    refused(() => tensor('BOOL', [1], '[tru]'), /not true or false/);
    refused(() => tensor('BYTES', [1], '[1]'), /not a string/);
    refused(() => runSteps(tensorFromJson('x', 'FP32', [1], [1])), /"data" is not an array/);
  });

  it(`pauses every ${SLICE_BYTES / 1024} KiB, locating the data and reading it`, () => {
    const text = `{"data": [${'0.25,'.repeat(1 << 20)}0.5]}`;
    const buf = Buffer.from(text);
    const steps = parseJson(buf);
    let r = steps.next();
    let located = 0;
    for (; !r.done; r = steps.next()) located++;
    const data = (r.value as { data: JsonData }).data;
    assert.ok(located >= Math.floor(buf.length / SLICE_BYTES) - 1, `${located} pauses locating`);
    const read = pauses(tensorFromJson('x', 'FP32', [(1 << 20) + 1], data));
    assert.ok(read >= Math.floor(buf.length / SLICE_BYTES) - 1, `${read} pauses reading`);
  });

  it('anything at all, as data of any shape and datatype, is a tensor or a ProtocolError', () => {
    const datatype = fc.constantFrom<Datatype>('UINT8', 'INT64', 'FP32', 'FP16', 'BOOL', 'BYTES');
    fc.assert(
      fc.property(
        datatype,
        fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 4 }),
        fc.oneof(
          fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
          fc.stringMatching(/^[\s\d.e\-"tfrunl[\],]{0,60}$/),
        ),
        (dt, shape, data) => {
          try {
            tensor(dt, shape, `[${data}]`);
          } catch (e) {
            assert.ok(e instanceof ProtocolError, String(e));
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});
