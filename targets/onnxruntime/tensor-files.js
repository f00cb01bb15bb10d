// Float32 TensorProto files (.pb, ONNX's backend-test layout) <-> {name, dims, data}. The
// protobuf codec is onnx-proto's (protobufjs classes generated from onnx.proto); this file only
// maps fusefuzz's one element type. fusefuzz writes raw_data; float_data is read too.
'use strict';
const {onnx} = require('onnx-proto');

const FLOAT = onnx.TensorProto.DataType.FLOAT;

// TensorProto bytes -> {name, dims, data: Float32Array}
function decodeTensor(buf) {
  const t = onnx.TensorProto.decode(buf);
  const name = t.name;
  if (t.dataType !== FLOAT) {
    throw new Error('TensorProto ' + name + ': data_type ' + t.dataType + ' is not FLOAT');
  }
  const dims = t.dims.map(Number);  // int64: Long objects or numbers
  let data;
  if (t.rawData && t.rawData.length) {
    if (t.rawData.length % 4) throw new Error('TensorProto ' + name + ': raw_data is not float32');
    // Copied: the decoded bytes need not be 4-byte aligned.
    const bytes = Uint8Array.from(t.rawData);
    data = new Float32Array(bytes.buffer);  // little-endian hosts (x86-64, arm64)
  } else {
    data = Float32Array.from(t.floatData);
  }
  const count = dims.reduce((a, b) => a * b, 1);
  if (count !== data.length) throw new Error('TensorProto ' + name + ': dims do not match the data');
  return {name, dims, data};
}

// {name, dims, data: Float32Array} -> TensorProto bytes (raw_data, exact)
function encodeTensor(name, dims, data) {
  const f32 = Float32Array.from(data);
  return Buffer.from(onnx.TensorProto.encode({
    dims: dims.map(Number),
    dataType: FLOAT,
    name,
    rawData: new Uint8Array(f32.buffer),
  }).finish());
}

module.exports = {decodeTensor, encodeTensor};
