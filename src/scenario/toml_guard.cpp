// SPDX-License-Identifier: GPL-2.0-only
#include "scenario/toml_guard.hpp"

#include <fmt/core.h>

namespace pvlock::scenario::detail {

namespace {

// toml++ 3.3 is_non_ascii_horizontal_whitespace(): code points from U+00A0 are grouped in
// blocks of 0x3FA; blocks 0, 11 and 63 fall through to __builtin_unreachable() except for
// the three whitespace characters below.
constexpr char32_t kBase = 0xA0;
constexpr char32_t kBlock = 0x3FA;
constexpr int kBadBlocks[] = {0, 11, 63};
constexpr char32_t kStandIn = 0xE000;  // Private Use Area: 3 slots of 0x400
constexpr char32_t kStandInEnd = kStandIn + 3 * 0x400;

int bad_slot(char32_t c) {
  if (c < kBase || c > 0xFEFF || c == 0xA0 || c == 0x3000 || c == 0xFEFF) return -1;
  const int block = static_cast<int>((c - kBase) / kBlock);
  for (int s = 0; s < 3; ++s)
    if (kBadBlocks[s] == block) return s;
  return -1;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

bool continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// Decodes a 2- or 3-byte sequence at s[i] leniently (overlong forms too, as a decoder might);
// returns its length, or 0 if it is not one.
std::size_t decode(std::string_view s, std::size_t i, char32_t& c) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if ((b0 & 0xE0) == 0xC0 && i + 1 < s.size() && continuation(s[i + 1])) {
    c = (static_cast<char32_t>(b0 & 0x1F) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3F);
    return 2;
  }
  if ((b0 & 0xF0) == 0xE0 && i + 2 < s.size() && continuation(s[i + 1]) && continuation(s[i + 2])) {
    c = (static_cast<char32_t>(b0 & 0x0F) << 12) |
        (static_cast<char32_t>(static_cast<unsigned char>(s[i + 1]) & 0x3F) << 6) |
        (static_cast<unsigned char>(s[i + 2]) & 0x3F);
    return 3;
  }
  return 0;
}

}  // namespace

std::optional<TextProblem> guard(std::string_view text, std::string& out) {
  out.clear();
  out.reserve(text.size() + text.size() / 8);
  int line = 1, column = 1;
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const std::size_t n = decode(text, i, c);
    if (n == 0) {
      const auto b = static_cast<unsigned char>(text[i]);
      out += text[i];
      if (b == '\n') {
        ++line;
        column = 1;
      } else if (!continuation(b)) {
        ++column;
      }
      ++i;
      continue;
    }
    if (c >= kStandIn && c < kStandInEnd)
      return TextProblem{
          line, column,
          fmt::format("unsupported private-use character U+{:04X}", static_cast<unsigned>(c))};
    if (const int slot = bad_slot(c); slot >= 0) {
      const char32_t base = kBase + static_cast<char32_t>(kBadBlocks[slot]) * kBlock;
      append_utf8(out, kStandIn + static_cast<char32_t>(slot) * 0x400 + (c - base));
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
    ++column;
  }
  return std::nullopt;
}

std::string unguard(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    char32_t c = 0;
    const std::size_t n = decode(s, i, c);
    if (n == 3 && c >= kStandIn && c < kStandInEnd && (c - kStandIn) % 0x400 < kBlock) {
      const int slot = static_cast<int>((c - kStandIn) / 0x400);
      append_utf8(
          out, kBase + static_cast<char32_t>(kBadBlocks[slot]) * kBlock + (c - kStandIn) % 0x400);
      i += 3;
      continue;
    }
    out += s[i];
    ++i;
  }
  return out;
}

}  // namespace pvlock::scenario::detail
