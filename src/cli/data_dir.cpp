// SPDX-License-Identifier: GPL-2.0-only
#include "cli/data_dir.hpp"

#include <cstdlib>
#include <system_error>
#include <vector>

namespace pvlock::cli {

std::filesystem::path data_dir(std::string_view name) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("PVLOCK_DATA_DIR"); env != nullptr && *env != '\0')
    candidates.push_back(fs::path(env) / name);
  std::error_code ec;
  // Linux: the running binary, symlinks resolved (an installed bin/pvlock may be a link).
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path bindir = exe.parent_path();
    candidates.push_back(bindir / ".." / "share" / "pvlock" / name);
    candidates.push_back(bindir / ".." / name);
  }
  candidates.push_back(fs::path(name));
  for (const fs::path& c : candidates)
    if (fs::is_directory(c, ec)) return c.lexically_normal();
  return candidates.back();
}

}  // namespace pvlock::cli
