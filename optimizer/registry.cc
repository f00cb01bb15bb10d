#include "optimizer/registry.h"

#include <cstdlib>
#include <iostream>
#include <set>

#include "optimizer/faults/faults.h"
#include "optimizer/rules/rules.h"

namespace fusefuzz {
namespace {

// A broken table is a code bug, found by the first test that touches the registry.
[[noreturn]] void TableBug(const std::string& what) {
  std::cerr << "fusefuzz: optimizer registry: " << what << "\n";
  std::abort();
}

struct Tables {
  std::vector<std::unique_ptr<Rule>> rule_storage;
  std::vector<FaultEntry> fault_storage;
  std::vector<const Rule*> rules;
  std::vector<FaultInfo> faults;
};

const Tables& GetTables() {
  static const Tables tables = [] {
    Tables t;
    t.fault_storage = MakeFaults();
    std::set<std::string, std::less<>> names;
    std::vector<RuleEntry> entries = MakeDefaultRules();
    for (auto& e : entries) {
      if (!e.rule) TableBug("null rule");
      if (e.rule->name() != e.declared_name) {
        TableBug("rules.def declares '" + std::string(e.declared_name) + "' but the rule says '" +
                 std::string(e.rule->name()) + "'");
      }
      t.rule_storage.push_back(std::move(e.rule));
    }
    for (const auto& r : t.rule_storage) {
      if (!names.insert(std::string(r->name())).second) {
        TableBug("duplicate rule name '" + std::string(r->name()) + "'");
      }
      t.rules.push_back(r.get());
    }
    std::set<std::string, std::less<>> rule_names = names;
    for (const auto& f : t.fault_storage) {
      if (!f.rule) TableBug("null fault");
      std::string name(f.rule->name());
      if (name != f.declared_name) {
        TableBug("faults.def declares '" + std::string(f.declared_name) + "' but the fault says '" +
                 name + "'");
      }
      if (!names.insert(name).second) TableBug("duplicate rule/fault name '" + name + "'");
      if (!rule_names.count(f.before)) {
        TableBug("fault '" + name + "' corrupts unknown rule '" + f.before + "'");
      }
      t.faults.push_back(FaultInfo{f.rule.get(), f.before});
    }
    return t;
  }();
  return tables;
}

}  // namespace

const std::vector<const Rule*>& AllRules() { return GetTables().rules; }
const std::vector<FaultInfo>& AllFaults() { return GetTables().faults; }

const Rule* FindRule(std::string_view name) {
  for (const Rule* r : AllRules())
    if (r->name() == name) return r;
  return nullptr;
}

const FaultInfo* FindFault(std::string_view name) {
  for (const FaultInfo& f : AllFaults())
    if (f.rule->name() == name) return &f;
  return nullptr;
}

}  // namespace fusefuzz
