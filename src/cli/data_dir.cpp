// SPDX-License-Identifier: GPL-2.0-only
#include "cli/data_dir.hpp"

#include <fmt/core.h>
#include <sys/wait.h>

#include <cstdio>
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

namespace {

std::string shell_quote(const std::string& s) {
  std::string q;
  q.reserve(s.size() + 2);
  q.push_back('\'');
  for (char c : s) {
    if (c == '\'') {
      q.append("'\\''");  // end the quote, an escaped quote, quote again
    } else {
      q.push_back(c);
    }
  }
  q.push_back('\'');
  return q;
}

}  // namespace

bool run_tool(std::string_view script, const std::vector<std::string>& args) {
  const std::string path = (data_dir("tools") / script).string();
  std::string cmd = "python3 ";
  cmd.append(shell_quote(path));
  for (const std::string& a : args) {
    cmd.push_back(' ');
    cmd.append(shell_quote(a));
  }
  cmd.append(" 1>&2");
  std::fflush(stdout);
  const int st = std::system(cmd.c_str());
  if (st == 0) return true;
  // sh exits 127 when it finds no python3 on PATH; the tool itself explains a missing
  // matplotlib or a bad input before exiting non-zero.
  if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 127)
    fmt::print(stderr, "pvlock: cannot run {}: no python3 on PATH\n", path);
  else
    fmt::print(stderr, "pvlock: {} failed (its message is above)\n", path);
  return false;
}

}  // namespace pvlock::cli
