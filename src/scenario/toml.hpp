// SPDX-License-Identifier: GPL-2.0-only
// The one place the scenario layer includes toml++ (a shared library in the normal build,
// header-only in the fuzz build, which defines TOML_HEADER_ONLY=1 itself).
#pragma once

#include <toml++/toml.h>
