#include "targets/target.h"

namespace fusefuzz {

std::string_view NodeFormName(NodeForm f) {
  switch (f) {
    case NodeForm::kQuantized:
      return "quantized";
    case NodeForm::kReference:
      return "reference";
    case NodeForm::kFloat:
      return "float";
    case NodeForm::kSimulated:
      return "simulated";
  }
  return "";
}

std::optional<NodeForm> ParseNodeForm(std::string_view name) {
  for (NodeForm f :
       {NodeForm::kQuantized, NodeForm::kReference, NodeForm::kFloat, NodeForm::kSimulated}) {
    if (NodeFormName(f) == name) return f;
  }
  return std::nullopt;
}

}  // namespace fusefuzz
