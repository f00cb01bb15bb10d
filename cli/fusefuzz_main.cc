// Entry point of the `fusefuzz` tool: parses the command line and maps errors to exit status 2.
#include <algorithm>
#include <cctype>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "ir/closest_name.h"
#include "ir/error.h"
#include "kernels/fast/executor.h"

namespace {

std::string Closest(const std::string& typed, const std::vector<std::string>& names) {
  return fusefuzz::ClosestName(typed, names);
}

bool LooksNumeric(const std::string& s) {
  return s.size() > 1 && s[0] == '-' &&
         (std::isdigit(static_cast<unsigned char>(s[1])) || s[1] == '.');
}

// Explains a parse error CLI11 words poorly: an unknown option (CLI11 reports it as
// "The following arguments were not expected: 10 --secs", listing values before names) or an
// unknown subcommand. Prints the message and returns true when it found such a word.
bool ExplainUnknown(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  CLI::App* sub = nullptr;
  std::vector<std::string> sub_names;
  for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; }))
    sub_names.push_back(s->get_name());
  for (const auto& a : args) {
    if (a == "--") break;
    if (!a.empty() && a[0] == '-') continue;
    for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; }))
      if (s->get_name() == a) sub = s;
    if (!sub) {
      std::string near = Closest(a, sub_names);
      std::cerr << "fusefuzz: error: unknown command '" << a << "'"
                << (near.empty() ? "" : "; did you mean '" + near + "'?") << "\n"
                << "Commands:";
      for (const auto& n : sub_names) std::cerr << " " << n;
      std::cerr << "\nRun with --help for more information.\n";
      return true;
    }
    break;
  }
  CLI::App* cmd = sub ? sub : &app;
  std::vector<std::string> known;
  for (const CLI::App* level :
       {static_cast<const CLI::App*>(cmd), static_cast<const CLI::App*>(&app)}) {
    for (const CLI::Option* o : level->get_options()) {
      for (const auto& l : o->get_lnames()) known.push_back("--" + l);
      for (const auto& s : o->get_snames()) known.push_back("-" + s);
    }
  }
  for (const auto& a : args) {
    if (a == "--") break;
    if (a.size() < 2 || a[0] != '-' || LooksNumeric(a)) continue;
    const std::string name = a.substr(0, a.find('='));
    if (a[1] != '-' && name.size() > 2) continue;  // -j4 style: CLI11 handles these
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string near = Closest(name, known);
    std::cerr << "fusefuzz: error: unknown option '" << name << "'"
              << (sub ? " for `fusefuzz " + sub->get_name() + "`" : std::string())
              << (near.empty() ? "" : "; did you mean '" + near + "'?") << "\n"
              << "Run `fusefuzz " << (sub ? sub->get_name() + " " : std::string())
              << "--help` for the options.\n";
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  fusefuzz::Cli cli;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    bool plain = !a.empty() && a.find_first_not_of(
                                   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789/._-+=:,@%") == std::string::npos;
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    cli.command_line += (i ? " " : "") + (plain ? a : q + "'");
  }
  CLI::App& app = cli.app;
  // The fast kernels' ISA level is a property of this process (CPU, FUSEFUZZ_ISA): say which.
  app.set_version_flag(
      "--version", std::string("fusefuzz ") + FUSEFUZZ_VERSION + "\n" + fusefuzz::FastIsaSummary());
  app.require_subcommand(1);
  fusefuzz::RegisterRun(cli);
  fusefuzz::RegisterShow(cli);
  fusefuzz::RegisterList(cli);
  fusefuzz::RegisterGen(cli);
  fusefuzz::RegisterCoverage(cli);
  fusefuzz::RegisterFuzz(cli);
  fusefuzz::RegisterMerge(cli);
  fusefuzz::RegisterReplay(cli);
  fusefuzz::RegisterMinimize(cli);
  fusefuzz::RegisterBench(cli);
  fusefuzz::RegisterExport(cli);
  fusefuzz::RegisterCompare(cli);
  fusefuzz::RegisterImport(cli);
  fusefuzz::RegisterCheck(cli);
  fusefuzz::RegisterQuantize(cli);
  try {
    fusefuzz::DefaultFastIsa();  // a bad FUSEFUZZ_ISA is an input error before anything runs
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (!ExplainUnknown(app, argc, argv)) app.exit(e);
    return 2;
  } catch (const fusefuzz::InputError& e) {
    std::cerr << "fusefuzz: error: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "fusefuzz: error: out of memory\n";
    return 2;
  }
  return cli.exit_code;
}
