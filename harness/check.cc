#include "harness/check.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace fusefuzz {
namespace {

Verdict VerdictOf(RunStatus s) {
  switch (s) {
    case RunStatus::kOk:
      return Verdict::kPass;
    case RunStatus::kUnsupported:
      return Verdict::kUnsupported;
    case RunStatus::kError:
      return Verdict::kTargetError;
    case RunStatus::kCrash:
      return Verdict::kCrash;
    case RunStatus::kTimeout:
      return Verdict::kTimeout;
  }
  return Verdict::kTargetError;
}

FindingKind KindOf(RunStatus s) {
  switch (s) {
    case RunStatus::kCrash:
      return FindingKind::kCrash;
    case RunStatus::kTimeout:
      return FindingKind::kTimeout;
    case RunStatus::kError:
      return FindingKind::kTargetError;
    case RunStatus::kOk:
    case RunStatus::kUnsupported:
      return FindingKind::kNone;
  }
  return FindingKind::kNone;
}

}  // namespace

namespace {

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

// "RuntimeError: ...", "torch.jit.Error: ...", "ValueError": a Python exception's own line (the
// last line of a traceback), after leading blanks. Returns where its type starts, or npos.
size_t ExceptionLineStart(const std::string& line) {
  size_t b = line.find_first_not_of(" \t");
  if (b == std::string::npos) return b;
  size_t e = b;
  while (e < line.size() && IsIdentChar(line[e])) ++e;
  const std::string type = line.substr(b, e - b);
  for (const char* suffix : {"Error", "Exception", "Exit", "Interrupt"}) {
    if (type.size() > std::string_view(suffix).size() && type.ends_with(suffix) &&
        (e == line.size() || line[e] == ':')) {
      return b;
    }
  }
  return std::string::npos;
}

bool HasQuantize(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (n.op == Op::QuantizeLinear) return true;
  }
  return false;
}

}  // namespace

std::string ErrorClass(const std::string& message) {
  // Which line says what failed: a traceback's last exception line (TorchScript's first line is
  // always "The following operation failed in the TorchScript interpreter."; the cause is at
  // the end), else the first line. fusefuzz's own prefix ("target error: ") is kept.
  std::vector<std::string> lines;
  for (size_t at = 0; at <= message.size();) {
    size_t nl = message.find('\n', at);
    if (nl == std::string::npos) nl = message.size();
    lines.push_back(message.substr(at, nl - at));
    at = nl + 1;
  }
  std::string line = lines.front();
  for (size_t i = lines.size(); i-- > 1;) {
    const size_t start = ExceptionLineStart(lines[i]);
    if (start == std::string::npos) continue;
    const size_t prefix = line.rfind("target error: ", 0) == 0 ? 14 : 0;
    line = line.substr(0, prefix) + lines[i].substr(start);
    break;
  }
  // A name in parentheses, "two nodes with same node name (n3/conv)": a word of letters with a
  // digit or a '/' (value and node names; op types such as "(QLinearAdd)" have neither, and a
  // bare number "(8)" is a number, below) is one name, whatever its numbers and parts.
  {
    std::string named;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '(') {
        const size_t end = line.find(')', i + 1);
        if (end != std::string::npos && end > i + 1) {
          const std::string word = line.substr(i + 1, end - i - 1);
          const bool plain = word.find_first_of(" \t,") == std::string::npos;
          const bool letter = std::any_of(word.begin(), word.end(), [](char c) {
            return std::isalpha(static_cast<unsigned char>(c)) != 0;
          });
          if (plain && letter && word.find_first_of("0123456789/") != std::string::npos) {
            named += "(*)";
            i = end;
            continue;
          }
        }
      }
      named += line[i];
    }
    line = named;
  }
  // What varies between cases of one failure is replaced: numbers (sizes, indices, ids,
  // addresses, hex too) by '#', quoted text (node, value and file names) by '*'; then a list
  // of numbers ("[1, 3, 8, 8]", "2x2") becomes one '#', so that shapes of any rank are alike.
  std::string out;
  for (size_t i = 0; i < line.size() && out.size() < 300; ++i) {
    const char c = line[i];
    if (c == '\'' || c == '"') {
      const size_t end = line.find(c, i + 1);
      if (end != std::string::npos) {
        out += '*';
        i = end;
        continue;
      }
    }
    if (c == '0' && i + 2 < line.size() && (line[i + 1] == 'x' || line[i + 1] == 'X') &&
        std::isxdigit(static_cast<unsigned char>(line[i + 2]))) {
      i += 2;
      while (i + 1 < line.size() && std::isxdigit(static_cast<unsigned char>(line[i + 1]))) ++i;
      if (out.empty() || out.back() != '#') out += '#';
      continue;
    }
    if (c >= '0' && c <= '9') {
      if (out.empty() || out.back() != '#') out += '#';
      continue;
    }
    // "1.5", "-3", "1e-05": the sign, point and exponent of a number go with it.
    auto digit_at = [&](size_t k) {
      return k < line.size() && std::isdigit(static_cast<unsigned char>(line[k]));
    };
    const bool after_number = !out.empty() && out.back() == '#';
    if (after_number && (c == '.' || c == 'e' || c == 'E') && digit_at(i + 1)) continue;
    if (after_number && (c == 'e' || c == 'E') && i + 1 < line.size() &&
        (line[i + 1] == '-' || line[i + 1] == '+') && digit_at(i + 2)) {
      ++i;
      continue;
    }
    if ((c == '-' || c == '+') && digit_at(i + 1) && (out.empty() || !IsIdentChar(out.back()))) {
      continue;
    }
    out += c;
  }
  // Collapse "#, #, #" and "#x#" into "#".
  std::string collapsed;
  for (size_t i = 0; i < out.size(); ++i) {
    collapsed += out[i];
    if (out[i] != '#') continue;
    size_t j = i + 1;
    while (true) {
      size_t k = j;
      while (k < out.size() && (out[k] == ' ' || out[k] == ',' || out[k] == 'x')) ++k;
      if (k == j || k >= out.size() || out[k] != '#') break;
      j = k + 1;
    }
    i = j - 1;
  }
  return collapsed;
}

bool IsOptimizedRunFailure(const CaseOutcome& o, const CheckOptions& opts) {
  switch (o.kind) {
    case FindingKind::kTargetError:
    case FindingKind::kCrash:
    case FindingKind::kTimeout:
      return o.optimized && opts.kernel_check;
    case FindingKind::kNone:
    case FindingKind::kFusion:
    case FindingKind::kKernel:
    case FindingKind::kUnquantized:
      return false;
  }
  return false;
}

std::vector<std::string> LeftUnquantized(const TargetResult& run) {
  std::vector<std::string> out;
  for (const std::string& node : run.backend_quantizes) {
    auto it = run.node_forms.find(node);
    if (it == run.node_forms.end()) continue;
    switch (it->second) {
      case NodeForm::kReference:
      case NodeForm::kFloat:
        out.push_back(node);
        break;
      case NodeForm::kQuantized:
      case NodeForm::kSimulated:
        break;
    }
  }
  return out;
}

bool SameFailure(const CaseOutcome& o, const CaseOutcome& failing) {
  if (o.kind != failing.kind) return false;
  switch (o.kind) {
    case FindingKind::kTargetError:
    case FindingKind::kCrash:
    case FindingKind::kTimeout:
      return ErrorClass(o.run.message) == ErrorClass(failing.run.message);
    case FindingKind::kUnquantized: {
      // The first node the failing run left unquantized is still left so (a shrinking graph
      // may lose the others).
      const std::vector<std::string> now = LeftUnquantized(o.run);
      const std::vector<std::string> then = LeftUnquantized(failing.run);
      return !then.empty() && std::find(now.begin(), now.end(), then.front()) != now.end();
    }
    case FindingKind::kNone:
    case FindingKind::kFusion:
    case FindingKind::kKernel:
      return true;
  }
  return true;
}

CaseOutcome RunAndJudge(Target& target, const Graph& g, const TensorMap& inputs,
                        const RefTensorMap& ref, const CheckOptions& opts, bool optimize,
                        const OptimizeOptions& opt) {
  CaseOutcome out;
  out.optimized = optimize;
  RunRequest req;
  req.optimize = optimize;
  req.opt = opt;
  req.threads = opts.threads;
  out.run = target.Run(g, inputs, req);
  if (out.run.status != RunStatus::kOk) {
    out.verdict = VerdictOf(out.run.status);
    out.kind = KindOf(out.run.status);
    return out;
  }
  // Each run is judged for the arithmetic its target declares (hello "precision").
  OracleOptions oracle = opts.oracle;
  oracle.precision = target.caps().precision;
  // And its QuantizeLinear for the rounding it declares (hello "quantize_rounding"): the
  // reference's grid facts then admit what that rule gives (ONNX's rule: `ref` as given).
  const QuantizeRounding rounding = target.caps().quantize_rounding;
  if (rounding != QuantizeRounding::kHalfEven && HasQuantize(g)) {
    out.oracle = Compare(g, RunReference(g, inputs, false, rounding), out.run.outputs, oracle);
  } else {
    out.oracle = Compare(g, ref, out.run.outputs, oracle);
  }
  out.verdict = out.oracle.verdict;
  if (out.verdict == Verdict::kMismatch)
    out.kind = optimize ? FindingKind::kFusion : FindingKind::kKernel;
  // Right numbers from a model that is not the int8 one asked for: promised nodes left in float
  // or reference form. Numbers the data cannot judge (MISTRUSTED) do not hide it.
  const std::vector<std::string> left =
      optimize ? LeftUnquantized(out.run) : std::vector<std::string>{};
  if (!left.empty() && (out.verdict == Verdict::kPass || out.verdict == Verdict::kMistrusted)) {
    out.kind = FindingKind::kUnquantized;
    out.verdict = Verdict::kMismatch;
    std::string nodes;
    for (const std::string& n : left) {
      nodes += (nodes.empty() ? "'" : ", '") + n + "' (" +
               std::string(NodeFormName(out.run.node_forms.at(n))) + ")";
    }
    out.oracle.detail = "unquantized: the backend's configuration quantizes " + nodes +
                        ", which ran in float or reference form; the numbers " +
                        (out.oracle.detail.empty() ? "pass" : "pass (" + out.oracle.detail + ")");
  }
  return out;
}

CaseOutcome CheckCase(Target& target, const Graph& g, const TensorMap& inputs,
                      const RefTensorMap& ref, const CheckOptions& opts) {
  // A target whose unoptimized run is optimized too (ONNX Runtime releases up to 1.16.0 ignore
  // the optimization level) has no kernel check to offer: comparing two optimized runs would
  // pretend one. Its optimized run is judged against the reference alone.
  if (opts.kernel_check && !target.caps().limits.contains("unoptimized_run")) {
    CaseOutcome plain = RunAndJudge(target, g, inputs, ref, opts, false, opts.opt);
    // Anything but a pass or a data-cannot-tell verdict decides the case already.
    if (plain.verdict != Verdict::kPass && plain.verdict != Verdict::kMistrusted) return plain;
    CaseOutcome optimized = RunAndJudge(target, g, inputs, ref, opts, true, opts.opt);
    optimized.unoptimized = plain.verdict;
    return optimized;
  }
  return RunAndJudge(target, g, inputs, ref, opts, true, opts.opt);
}

}  // namespace fusefuzz
