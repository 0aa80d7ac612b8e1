// SPDX-License-Identifier: GPL-2.0-only
// Where the files pvlock ships beside its binary are: the experiments reproduce runs and the
// plotting tools. No path is compiled in, so a build tree, an installed copy and a relocated
// one all find theirs.
#pragma once

#include <filesystem>
#include <string_view>

namespace pvlock::cli {

// The folder `name` ("experiments", "tools"), the first that exists of:
//   $PVLOCK_DATA_DIR/<name>                  (an explicit choice),
//   <bindir>/../share/pvlock/<name>          (installed: <prefix>/bin/pvlock),
//   <bindir>/../<name>                       (a build tree in the source tree: build/pvlock),
//   ./<name>                                 (run from the repository root);
// the last one when none exists, so the caller's "not found" names a real candidate.
std::filesystem::path data_dir(std::string_view name);

}  // namespace pvlock::cli
