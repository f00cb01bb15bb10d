// Entry point of the `fusefuzz` tool: parses the command line and maps errors to exit status 2.
#include <iostream>

#include "cli/cli.h"
#include "ir/error.h"

int main(int argc, char** argv) {
  fusefuzz::Cli cli;
  CLI::App& app = cli.app;
  app.set_version_flag("--version", std::string("fusefuzz ") + FUSEFUZZ_VERSION);
  app.require_subcommand(1);
  fusefuzz::RegisterRun(cli);
  fusefuzz::RegisterShow(cli);
  fusefuzz::RegisterList(cli);
  fusefuzz::RegisterGen(cli);
  fusefuzz::RegisterFuzz(cli);
  fusefuzz::RegisterReplay(cli);
  fusefuzz::RegisterMinimize(cli);
  fusefuzz::RegisterBench(cli);
  fusefuzz::RegisterExport(cli);
  fusefuzz::RegisterCompare(cli);
  fusefuzz::RegisterImport(cli);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
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
