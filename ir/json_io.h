// Graph JSON v1 and tensors files (see docs/graph-format.md, docs/graph.schema.json).
//
// Tensors are {"shape": [...], "data": [...]} with numbers or the strings "nan", "inf", "-inf",
// or {"shape": [...], "b64": "..."} = base64 of little-endian float32 (exact). The writer uses
// b64 by default so that write -> read -> write is bit-identical; `plain` writes data arrays,
// which are also exact: floats are printed with enough digits to round-trip.
#pragma once

#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "ir/graph.h"
#include "ir/limits.h"

namespace fusefuzz {

struct WriteOptions {
  bool plain = false;  // data arrays instead of base64
  int indent = 1;      // -1: one line
};

// Parse errors and structure errors throw InputError whose location is
// "<source>: <JSON pointer>" (e.g. "g.json: /nodes/2/attrs/group"). Sizes are checked against
// `limits` before any tensor storage is allocated. ReadGraph also verifies the graph
// (VerifyGraph), so a returned graph is valid.
Graph ReadGraph(const nlohmann::json& j, const std::string& source, const Limits& limits = {});
Graph ReadGraphFile(const std::string& path, const Limits& limits = {});
Graph ParseGraph(const std::string& text, const std::string& source = "<string>",
                 const Limits& limits = {});
nlohmann::json GraphToJson(const Graph& g, const WriteOptions& opts = {});
std::string WriteGraph(const Graph& g, const WriteOptions& opts = {});

Tensor ReadTensor(const nlohmann::json& j, const std::string& source, const std::string& pointer,
                  const Limits& limits = {});
nlohmann::json TensorToJson(const Tensor& t, const WriteOptions& opts = {});

// Tensors file: {"x": tensor, ...}.
TensorMap ReadTensors(const nlohmann::json& j, const std::string& source,
                      const Limits& limits = {});
TensorMap ReadTensorsFile(const std::string& path, const Limits& limits = {});
std::string WriteTensors(const TensorMap& tensors, const WriteOptions& opts = {});

// Reads a whole file, or throws InputError naming it. Parses JSON with a clear message
// (line/byte of a syntax error).
// Files: only regular files (a FIFO or device is refused without reading: it could block or never
// end), at most limits.max_file_bytes (checked before reading), and a byte that cannot occur in
// a fusefuzz file (a control character such as NUL, or a first character other than '{') is
// refused as soon as it is read, not after reading the rest.
// Documents: nesting at most 64 deep, at most limits.max_json_values values, and no object may
// repeat a key (JSON's "last one wins" would silently drop the first).
nlohmann::json ReadJsonFile(const std::string& path, const Limits& limits = {});
nlohmann::json ParseJson(const std::string& text, const std::string& source,
                         const Limits& limits = {});

// Every graph input has a tensor of its shape and every tensor is a graph input (an extra tensor
// is refused: it is usually a misspelt or stale input). Errors name `source` and the JSON pointer
// `prefix + "/" + name` of the tensor ("in.json: /x", "r.json: /inputs/x").
void CheckTensorsForGraph(const Graph& g, const TensorMap& tensors, const std::string& source,
                          const std::string& prefix = "");

// Writes `content` to `path` so that a crash never leaves half a file (ir/write_file.cc):
// a regular file (or a new one) is replaced atomically (temp file in the same folder, fsync,
// rename); a symlink is followed and its target replaced, the link kept; a character device or
// FIFO (/dev/null, /dev/stdout, a pipe) is written directly. Anything else (a folder, a socket,
// a block device) is refused. Every failure, including close/fsync errors, throws OutputError
// naming the path and the reason; no temp file is left behind.
void WriteFileAtomic(const std::string& path, const std::string& content);

}  // namespace fusefuzz
