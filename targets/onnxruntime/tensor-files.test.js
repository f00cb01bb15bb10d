// Tests of tensor-files.js (run by ctest: `node --test tensor-files.test.js`).
'use strict';
const assert = require('assert');
const test = require('node:test');
const {onnx} = require('onnx-proto');
const {decodeTensor, encodeTensor} = require('./tensor-files');

test('round trip is bit for bit', () => {
  const data = new Float32Array([1.5, -0, Infinity, -Infinity, NaN, 1e-45]);
  const back = decodeTensor(encodeTensor('x', [2, 3], data));
  assert.strictEqual(back.name, 'x');
  assert.deepStrictEqual(back.dims, [2, 3]);
  assert.deepStrictEqual(Buffer.from(back.data.buffer), Buffer.from(data.buffer));
});

test('writes what protobuf readers expect: raw_data little-endian float32', () => {
  const t = onnx.TensorProto.decode(encodeTensor('y', [1], [2]));
  assert.strictEqual(t.dataType, onnx.TensorProto.DataType.FLOAT);
  assert.deepStrictEqual(Buffer.from(t.rawData), Buffer.from([0, 0, 0, 0x40]));
});

test('float_data is read', () => {
  const bytes = onnx.TensorProto.encode({dims: [2], dataType: 1, floatData: [3, -1]}).finish();
  assert.deepStrictEqual(Array.from(decodeTensor(bytes).data), [3, -1]);
});

test('non-float and inconsistent tensors are errors', () => {
  const int64 = onnx.TensorProto.encode({dims: [1], dataType: 7, int64Data: [1]}).finish();
  assert.throws(() => decodeTensor(int64), /data_type 7 is not FLOAT/);
  const short = onnx.TensorProto.encode({dims: [3], dataType: 1, floatData: [1]}).finish();
  assert.throws(() => decodeTensor(short), /dims do not match the data/);
  assert.throws(() => decodeTensor(Buffer.from([0x0a, 0xff])));  // truncated: protobufjs throws
});
