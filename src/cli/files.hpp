// SPDX-License-Identifier: GPL-2.0-only
// Input paths that name a directory: said so, instead of reading as an empty file.
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

}  // namespace pvlock::cli
