#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Fails if any tracked C++ file differs from what clang-format (.clang-format) would write.
# Fix with: git ls-files '*.cpp' '*.hpp' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run -Werror
echo "check-format: $(git ls-files '*.cpp' '*.hpp' | wc -l) files formatted"
