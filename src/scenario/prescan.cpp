#include "scenario/prescan.hpp"

namespace pvlock::scenario::detail {

namespace {

bool non_ascii(char c) { return static_cast<unsigned char>(c) >= 0x80; }
bool ascii_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

class Scanner {
 public:
  explicit Scanner(std::string_view t) : t_(t) {}

  std::optional<TextProblem> run() {
    if (t_.substr(0, 3) == "\xEF\xBB\xBF") advance(3);  // UTF-8 byte order mark
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '#') {
        skip_to_line_end();
      } else if (starts("\"\"\"")) {
        if (auto p = multi_line(true)) return p;
      } else if (starts("'''")) {
        if (auto p = multi_line(false)) return p;
      } else if (c == '"' || c == '\'') {
        single_line(c);
      } else if (non_ascii(c)) {
        return problem("non-ASCII character outside a string or comment");
      } else {
        advance(1);
      }
    }
    return std::nullopt;
  }

 private:
  bool starts(std::string_view s) const { return t_.substr(i_, s.size()) == s; }

  void advance(std::size_t n) {
    for (; n > 0 && i_ < t_.size(); --n, ++i_) {
      const char c = t_[i_];
      if (c == '\n') {
        ++line_;
        column_ = 1;
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
        ++column_;  // count code points, not continuation bytes
      }
    }
  }

  TextProblem problem(std::string message) const {
    // The column of the character at i_ (advance() already counted code points before it).
    return TextProblem{line_, column_, std::move(message)};
  }

  void skip_to_line_end() {
    while (i_ < t_.size() && t_[i_] != '\n') advance(1);
  }

  // "..." or '...': ends at the closing quote or (an error toml++ reports) the line end.
  void single_line(char quote) {
    advance(1);
    while (i_ < t_.size() && t_[i_] != '\n') {
      if (quote == '"' && t_[i_] == '\\') {
        advance(2);
        continue;
      }
      const bool close = t_[i_] == quote;
      advance(1);
      if (close) return;
    }
  }

  // """...""" (basic: escapes, line-ending backslashes) or '''...'''.
  std::optional<TextProblem> multi_line(bool basic) {
    const char quote = basic ? '"' : '\'';
    advance(3);
    while (i_ < t_.size()) {
      if (basic && t_[i_] == '\\') {
        advance(1);
        if (i_ < t_.size() && non_ascii(t_[i_]))
          return problem("non-ASCII character right after a backslash");
        if (i_ < t_.size() && ascii_space(t_[i_])) {
          while (i_ < t_.size() && ascii_space(t_[i_])) advance(1);
          if (i_ < t_.size() && non_ascii(t_[i_]))
            return problem(
                "a non-ASCII character right after a line-ending backslash is not supported "
                "(toml++ 3.3 bug marzer/tomlplusplus#190); start the line with an ASCII "
                "character or an escape");
          continue;
        }
        advance(1);
        continue;
      }
      if (t_[i_] == quote && starts(std::string(3, quote))) {
        // A closing delimiter may be preceded by up to two quotes that belong to the string.
        std::size_t n = 0;
        while (i_ + n < t_.size() && t_[i_ + n] == quote && n < 5) ++n;
        advance(n);
        return std::nullopt;
      }
      advance(1);
    }
    return std::nullopt;
  }

  std::string_view t_;
  std::size_t i_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

std::optional<TextProblem> find_unsupported_text(std::string_view text) {
  return Scanner(text).run();
}

}  // namespace pvlock::scenario::detail
