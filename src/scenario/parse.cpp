// SPDX-License-Identifier: GPL-2.0-only
// Scenario files: the top level (which sections, bare metal vs virtualized) and the checks
// that span sections. Section contents are read in sections.cpp.
#include "scenario/parse.hpp"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "scenario/overrides.hpp"
#include "scenario/profile.hpp"
#include "scenario/reader.hpp"
#include "scenario/sections.hpp"
#include "scenario/toml_guard.hpp"

namespace pvlock::scenario {

namespace {

using detail::Reader;
using detail::Section;

constexpr std::uintmax_t kMaxFileBytes = 16u << 20;
constexpr long kMaxTotalVcpus = 65536;

template <class F>
void read_optional(Section& top, std::string_view key, const std::string& title, F&& f) {
  if (const toml::table* t = top.subtable(key)) {
    Section s(top.reader(), *t, std::string(key), title);
    f(s);
  }
}

void read_vms(Section& top, const toml::node& node, Scenario& sc) {
  const auto* arr = node.as_array();
  if (arr != nullptr && arr->empty())
    top.fail("vm", "a scenario with [host] needs at least one [[vm]] table");
  if (arr == nullptr || !arr->is_array_of_tables())
    top.fail("vm", "expected [[vm]] tables, got " + std::string(detail::type_name(node)) +
                       (arr ? " with non-table elements" : ""));
  for (std::size_t i = 0; i < arr->size(); ++i) {
    Section s(top.reader(), *(*arr)[i].as_table(), fmt::format("vm[{}]", i), "[[vm]]");
    VmSpec v;
    detail::read_vm(s, v);
    if (v.name.empty()) v.name = arr->size() == 1 ? "vm" : fmt::format("vm{}", i);
    sc.vms.push_back(std::move(v));
  }
  // Checks across VMs: distinct names, pinned vCPUs fit the machine.
  std::set<std::string> names;
  long pinned = 0, total = 0;
  for (std::size_t i = 0; i < sc.vms.size(); ++i) {
    const VmSpec& v = sc.vms[i];
    Section s(top.reader(), *(*arr)[i].as_table(), fmt::format("vm[{}]", i), "[[vm]]");
    for (int c = 0; c < v.count; ++c) {
      const std::string name = v.count == 1 ? v.name : fmt::format("{}{}", v.name, c);
      if (!names.insert(name).second)
        s.fail("name", "VM name '" + name + "' is used twice (copies of a VM with count = k " +
                           "are named name0..name{k-1}); give each [[vm]] a distinct name");
    }
    total += static_cast<long>(v.count) * v.vcpus;
    if (total > kMaxTotalVcpus)
      s.fail("count", fmt::format("{} vCPUs in total; the simulator supports at most {}", total,
                                  kMaxTotalVcpus));
    if (v.placement == VmSpec::Placement::pinned) {
      pinned += static_cast<long>(v.count) * v.vcpus;
      if (pinned > sc.machine.cpus())
        s.fail("placement", fmt::format("pinned vCPUs need a pCPU each: {} pinned vCPUs in "
                                        "total (count x vcpus), the machine has {} pCPUs",
                                        pinned, sc.machine.cpus()));
    }
  }
}

// Bare metal: top-level [guest] and [workload] become one VM on every machine CPU.
void read_bare_metal(Section& top, Scenario& sc) {
  VmSpec v;
  v.name = "machine";
  v.vcpus = sc.machine.cpus();
  v.placement = VmSpec::Placement::pinned;
  if (const toml::table* g = top.subtable("guest")) {
    toml::table storage;
    const toml::table& t = detail::with_profile(top.reader(), *g, "guest", "[guest]",
                                                eras::Side::guest, storage, v.guest.kernel);
    Section s(top.reader(), t, "guest", "[guest]");
    detail::read_guest(s, v.guest);
  }
  if (top.take("workload") == nullptr) {
    SourceRef ref = top.where_table();
    ref.key_path = "workload";
    fail_at(ref, "a bare-metal scenario (no [host]) needs a [workload] section");
  }
  read_optional(top, "workload", "[workload]",
                [&](Section& s) { detail::read_workload(s, v.workload); });
  v.where = v.workload.where;
  sc.vms.push_back(std::move(v));
}

// A file that is not a scenario at all gets said so, not "missing [workload]": an empty
// file, or an experiment of `pvlock reproduce` (its [[cell]] tables name scenarios).
void reject_non_scenario(std::string_view text, const std::string& path) {
  bool content = false;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    content = true;
    const std::string_view rest = line.substr(first);
    if (rest.starts_with("[[cell]]") || rest.starts_with("[[effect]]"))
      throw ScenarioError(path +
                          ": an experiment file of `pvlock reproduce` ([[cell]] tables), not a "
                          "scenario; run it with `pvlock reproduce --experiments DIR --only ID`, "
                          "or run one of the scenario files its cells name");
  }
  if (!content)
    throw ScenarioError(path +
                        ": the file is empty; a scenario needs at least a [workload] table (see "
                        "examples/)");
}

}  // namespace

Scenario parse_scenario(std::string_view toml_text, const std::string& source_name,
                        const std::vector<std::string>& overrides) {
  std::string guarded;  // what toml++ may safely see (toml_guard.hpp)
  if (const auto p = detail::guard(toml_text, guarded))
    throw ScenarioError(
        fmt::format("{}:{}:{}: syntax error: {}", source_name, p->line, p->column, p->message));
  toml::table root;
  try {
    root = toml::parse(guarded, std::string_view(source_name));
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw ScenarioError(fmt::format("{}:{}:{}: syntax error: {}", source_name, b.line, b.column,
                                    detail::unguard(e.description())));
  }
  Reader reader(source_name, detail::apply_overrides(root, overrides));
  Section top(reader, root, "", "the top level");

  Scenario sc;
  sc.path = source_name;
  sc.name = std::filesystem::path(source_name).stem().string();
  read_optional(top, "run", "[run]", [&](Section& s) { detail::read_run(s, sc.run); });
  read_optional(top, "machine", "[machine]",
                [&](Section& s) { detail::read_machine(s, sc.machine); });
  read_optional(top, "costs", "[costs]", [&](Section& s) { detail::read_costs(s, sc.costs); });
  if (const toml::table* t = top.subtable("host")) {
    HostSpec h;
    toml::table storage;
    const toml::table& ht =
        detail::with_profile(reader, *t, "host", "[host]", eras::Side::host, storage, h.kernel);
    Section s(reader, ht, "host", "[host]");
    detail::read_host(s, h);
    sc.host = h;
  }
  const toml::node* vm = top.take("vm");
  if (sc.host) {
    // If an override created [host], the override is what to blame.
    const bool host_from_set = root.get("host")->source().begin.line == 0;
    for (const char* key : {"guest", "workload"})
      if (top.take(key) != nullptr)
        top.fail(host_from_set ? "host" : key,
                 fmt::format("a top-level [{0}] is for bare-metal scenarios (no [host]); "
                             "with [host], put it in each [[vm]] as [vm.{0}]",
                             key));
    if (vm == nullptr) top.fail("host", "a scenario with [host] needs at least one [[vm]] table");
    read_vms(top, *vm, sc);
  } else {
    if (vm != nullptr)
      top.fail("vm",
               "[[vm]] needs a [host] section; a bare-metal scenario (no [host]) has "
               "top-level [guest] and [workload] instead");
    read_bare_metal(top, sc);
  }
  read_optional(top, "faults", "[faults]",
                [&](Section& s) { detail::read_faults(s, sc.faults, sc.host.has_value()); });
  top.finish();
  return sc;
}

Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ScenarioError(path + ": a directory, not a scenario file");
  if (!std::filesystem::is_regular_file(path, ec))
    throw ScenarioError(
        path + ": cannot read scenario: " +
        (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  if (std::filesystem::file_size(path, ec) > kMaxFileBytes)
    throw ScenarioError(path + ": cannot read scenario: larger than 16 MiB");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw ScenarioError(path + ": cannot read scenario: read error");
  reject_non_scenario(text.view(), path);
  return parse_scenario(text.str(), path, overrides);
}

}  // namespace pvlock::scenario
