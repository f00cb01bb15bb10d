// Just enough of ONNX's protobuf format for float32 TensorProto files (.pb) and for listing the
// nodes of a ModelProto (to report which ORT transformers changed a graph). fusefuzz writes both
// with raw_data; float_data and packed dims are read too.
'use strict';

function readVarint(buf, pos) {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const b = buf[pos++];
    value |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [value, pos];
    shift += 7n;
    if (shift >= 70n) throw new Error('varint too long');
  }
}

// Calls visit(field, wireType, value) for each field; value is a BigInt (varint), a Buffer
// (length-delimited) or a 4-byte Buffer (fixed32).
function forEachField(buf, visit) {
  let pos = 0;
  while (pos < buf.length) {
    let tag;
    [tag, pos] = readVarint(buf, pos);
    const field = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (wire === 0) {
      let v;
      [v, pos] = readVarint(buf, pos);
      visit(field, wire, v);
    } else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      const end = pos + Number(len);
      if (end > buf.length) throw new Error('truncated field');
      visit(field, wire, buf.subarray(pos, end));
      pos = end;
    } else if (wire === 5) {
      if (pos + 4 > buf.length) throw new Error('truncated field');
      visit(field, wire, buf.subarray(pos, pos + 4));
      pos += 4;
    } else if (wire === 1) {
      pos += 8;
    } else {
      throw new Error('unsupported wire type ' + wire);
    }
  }
}

// TensorProto -> {name, dims, data: Float32Array}
function decodeTensor(buf) {
  const dims = [];
  let name = '';
  let dataType = 0;
  let raw = null;
  const floats = [];
  forEachField(buf, (field, wire, v) => {
    if (field === 1 && wire === 0) dims.push(Number(BigInt.asIntN(64, v)));
    if (field === 1 && wire === 2) {
      let pos = 0;
      while (pos < v.length) {
        let d;
        [d, pos] = readVarint(v, pos);
        dims.push(Number(BigInt.asIntN(64, d)));
      }
    }
    if (field === 2) dataType = Number(v);
    if (field === 8) name = v.toString('utf8');
    if (field === 9) raw = v;
    if (field === 4 && wire === 5) floats.push(v.readFloatLE(0));
    if (field === 4 && wire === 2) {
      for (let i = 0; i + 4 <= v.length; i += 4) floats.push(v.readFloatLE(i));
    }
  });
  if (dataType !== 1) throw new Error('TensorProto ' + name + ': data_type ' + dataType + ' is not FLOAT');
  let data;
  if (raw) {
    data = new Float32Array(raw.length / 4);
    for (let i = 0; i < data.length; i++) data[i] = raw.readFloatLE(4 * i);
  } else {
    data = Float32Array.from(floats);
  }
  const count = dims.reduce((a, b) => a * b, 1);
  if (count !== data.length) throw new Error('TensorProto ' + name + ': dims do not match the data');
  return {name, dims, data};
}

function varint(n) {
  const out = [];
  let v = BigInt.asUintN(64, BigInt(n));
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

function lengthDelimited(field, bytes) {
  return Buffer.concat([varint((field << 3) | 2), varint(bytes.length), bytes]);
}

// {name, dims, data: Float32Array} -> TensorProto bytes (raw_data, exact)
function encodeTensor(name, dims, data) {
  const parts = [];
  for (const d of dims) parts.push(varint(1 << 3), varint(d));
  parts.push(varint(2 << 3), varint(1));
  parts.push(lengthDelimited(8, Buffer.from(name, 'utf8')));
  const raw = Buffer.alloc(4 * data.length);
  for (let i = 0; i < data.length; i++) raw.writeFloatLE(data[i], 4 * i);
  parts.push(lengthDelimited(9, raw));
  return Buffer.concat(parts);
}

// ModelProto -> [{name, opType, inputs, outputs}] of its main graph
function modelNodes(buf) {
  const nodes = [];
  forEachField(buf, (field, wire, v) => {
    if (field !== 7 || wire !== 2) return;  // ModelProto.graph
    forEachField(v, (gf, gw, gv) => {
      if (gf !== 1 || gw !== 2) return;  // GraphProto.node
      const node = {name: '', opType: '', inputs: [], outputs: [], domain: ''};
      forEachField(gv, (nf, nw, nv) => {
        if (nw !== 2) return;
        if (nf === 1) node.inputs.push(nv.toString('utf8'));
        if (nf === 2) node.outputs.push(nv.toString('utf8'));
        if (nf === 3) node.name = nv.toString('utf8');
        if (nf === 4) node.opType = nv.toString('utf8');
        if (nf === 7) node.domain = nv.toString('utf8');
      });
      nodes.push(node);
    });
  });
  return nodes;
}

module.exports = {decodeTensor, encodeTensor, modelNodes};
