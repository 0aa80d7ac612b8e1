// SPDX-License-Identifier: GPL-2.0-only
// Input paths that name a directory: said so, instead of reading as an empty file; output
// folders made before any work, so a bad one fails at once, not after a long run.
#pragma once

#include <filesystem>
#include <string>

#include "cli/commands.hpp"

namespace pvlock::cli {

// `what` names the file the command wanted ("a scenario file", "a results file").
inline void reject_directory(const std::string& path, const char* what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UsageError(path + ": a directory, not " + what);
}

// The folder of --plot (made if missing), checked before the runs whose charts go there.
inline void make_plot_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec))
    throw UsageError("--plot: cannot create directory '" + dir + "'");
}

}  // namespace pvlock::cli
