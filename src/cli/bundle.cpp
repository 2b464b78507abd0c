// attnlens-cli bundle check DIR: load and validate a model bundle, list its tensors.
#include <iostream>

#include "cli.h"

namespace attnlens::cli {

int bundle_command(int argc, char** argv) {
  subcommand(argc, argv, "bundle", {"check"});
  const Args args = parse_args(argc, argv, 3, {}, {}, "bundle check");
  if (args.positional.size() != 1) throw UsageError("bundle check: give exactly one bundle directory");
  const api::BundleSummary bundle = api::inspect_bundle(args.positional[0]);
  for (const auto& t : bundle.tensors) std::cout << t.name << "\t" << t.dtype << "\t" << t.shape_text << "\n";
  std::cout << "ok: " << args.positional[0] << ": architecture " << bundle.architecture << ", " << bundle.tensors.size()
            << " tensors, " << bundle.values << " values\n";
  return 0;
}

}  // namespace attnlens::cli
