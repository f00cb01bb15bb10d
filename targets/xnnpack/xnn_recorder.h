// The XNNPACK pack's reproducer writer records the subgraph the adapter defines (repro_writer.cc):
// fusefuzz-xnnpack-target is linked with `-Wl,--wrap=` for every xnn_create_subgraph /
// xnn_define_* call that builder*.cc makes (cmake/mobile_targets.cmake), so each call goes
// through xnn_wrappers.cc, which writes it out as a C++ statement with its arguments as literals
// (static data as byte arrays) and then makes the real call. The recording is the adapter's own
// translation, call by call, so the reproducer cannot drift from it. Nothing is recorded unless
// a Recording is alive (one request at a time: the server is single-threaded).
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fusefuzz::xnnpack {

// One value the subgraph defined.
struct RecordedValue {
  uint32_t id = 0;
  int datatype = 0;  // enum xnn_datatype
  std::vector<size_t> dims;
  uint32_t flags = 0;  // XNN_VALUE_FLAG_EXTERNAL_INPUT / _OUTPUT
  bool is_static = false;
};

struct Recording {
  Recording();
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  // Of the last subgraph created while this recording was alive (the one the adapter ran).
  uint32_t external_value_ids = 0;
  std::ostringstream statics;  // static arrays: weights, biases, constants, shapes
  std::ostringstream calls;    // the define calls, in order
  std::map<uint32_t, RecordedValue> values;
  int next_array = 0;
};

// The live recording, or null.
Recording* ActiveRecording();

}  // namespace fusefuzz::xnnpack
