// SPDX-License-Identifier: GPL-2.0-only
// The progress of many runs (harness/point_progress.hpp) off a terminal: one line per tenth
// of the runs and one at the last, never one per run.
#include "harness/point_progress.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace pvlock::harness {
namespace {

int lines_for(std::size_t total) {
  std::FILE* f = std::tmpfile();
  PointProgress p(f, total, false, "test");
  for (std::size_t i = 0; i < total; ++i) p.point_done("point");
  p.finish();
  std::rewind(f);
  int lines = 0;
  for (int c; (c = std::fgetc(f)) != EOF;) lines += c == '\n';
  std::fclose(f);
  return lines;
}

TEST(PointProgress, PlainOutputHasALinePerTenth) {
  EXPECT_EQ(lines_for(126), 11);  // 12, 24, ..., 120 and 126
  EXPECT_EQ(lines_for(100), 10);
  EXPECT_EQ(lines_for(7), 7);  // fewer than ten runs: each one
}

}  // namespace
}  // namespace pvlock::harness
