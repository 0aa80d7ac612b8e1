// SPDX-License-Identifier: GPL-2.0-only
// Where the files pvlock ships beside its binary are: the experiments reproduce runs and the
// plotting tools. No path is compiled in, so a build tree, an installed copy and a relocated
// one all find theirs.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace pvlock::cli {

// The folder `name` ("experiments", "tools"), the first that exists of:
//   $PVLOCK_DATA_DIR/<name>                  (an explicit choice),
//   <bindir>/../share/pvlock/<name>          (installed: <prefix>/bin/pvlock),
//   <bindir>/../<name>                       (a build tree in the source tree: build/pvlock),
//   ./<name>                                 (run from the repository root);
// the last one when none exists, so the caller's "not found" names a real candidate.
std::filesystem::path data_dir(std::string_view name);

// Runs tools/<script> with the first python3 on PATH (the tools say clearly when it cannot
// import matplotlib), its stdout sent to stderr so that a command's own stdout (--json)
// stays clean. On failure prints why on stderr and returns false.
bool run_tool(std::string_view script, const std::vector<std::string>& args);

}  // namespace pvlock::cli
