// SPDX-License-Identifier: GPL-2.0-only
#include "scenario/profile.hpp"

#include <variant>

namespace pvlock::scenario::detail {

namespace {

void insert_value(toml::table& t, std::string_view key, const eras::Value& v) {
  std::visit(
      [&](const auto& x) {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::string_view>)
          t.insert(key, std::string(x));
        else
          t.insert(key, x);
      },
      v);
}

}  // namespace

const toml::table& with_profile(const Reader& r, const toml::table& t, const std::string& path,
                                const std::string& title, eras::Side side, toml::table& storage,
                                std::string& kernel) {
  const toml::node* n = t.get("kernel");
  if (n == nullptr) return t;
  const Section s(r, t, path, title);
  const char* what = side == eras::Side::guest ? "guest" : "host";
  const auto* str = n->as_string();
  if (str == nullptr)
    s.fail("kernel", std::string("expected a string naming a ") + what +
                         " kernel profile (kernel = \"5.3\"; on the command line --set '" +
                         s.path_of("kernel") + "=\"5.3\"'), got " + std::string(type_name(*n)));
  const std::string name = unguard(str->get());
  const auto version = eras::find_profile(name);
  if (!version)
    s.fail("kernel", "unknown " + std::string(what) + " kernel profile '" + name +
                         "'; profiles: " + eras::profile_range());
  kernel = name;
  storage = t;
  for (const eras::EraSwitch& sw : eras::switches(side)) {
    toml::table* target = &storage;
    std::string_view key = sw.key;
    if (const auto dot = key.find('.'); dot != std::string_view::npos) {
      const std::string_view sub = key.substr(0, dot);
      key = key.substr(dot + 1);
      if (!storage.contains(sub)) storage.insert(sub, toml::table{});
      target = storage.get_as<toml::table>(sub);
      // Not a table: reading the section reports that, naming the key.
      if (target == nullptr) continue;
    }
    if (!target->contains(key)) insert_value(*target, key, eras::value_in(sw, *version));
  }
  return storage;
}

}  // namespace pvlock::scenario::detail
