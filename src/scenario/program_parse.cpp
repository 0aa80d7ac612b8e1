// SPDX-License-Identifier: GPL-2.0-only
// [workload] type = "program": reads the kernel objects, the groups' programs and the score
// (layout: scenario/program.hpp, docs/guide/programs.md), resolves every name, and checks
// each program statically -- loops closed, locks released, nothing that may sleep inside a
// spinlock or with IRQs off -- so that every mistake is reported at its file:line:col.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pvlock/env/native.hpp"
#include "pvlock/lock/registry.hpp"
#include "scenario/program.hpp"
#include "scenario/sections.hpp"

namespace pvlock::scenario::detail {

namespace {

using Op = ProgramStep::Op;

constexpr int kMaxLoopDepth = 8;
constexpr std::int64_t kMaxCount = 1'000'000'000;
constexpr int kMaxTasks = 4096;

Dist constant(double ns) {
  Dist d;
  d.mean = ns;
  return d;
}

// The lock kinds a program may name, and what they are.
LockKind kind_of(const std::string& kind) {
  if (kind == "spinlock") return LockKind::spin;
  for (const LockInfo& i : lock_infos<NativeEnv>())
    if (i.name == kind) return i.kind;
  return LockKind::spin;  // unreachable: kinds are checked when read
}

std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none)" : out;
}

// A duration: a number of ns or a {dist = ...} table.
Dist read_duration(Section& s, std::string_view key) {
  const toml::node* n = s.take(key);
  if (const auto* t = n->as_table()) return read_dist(s.reader(), *t, s.path_of(key));
  if (n->as_integer() == nullptr && n->as_floating_point() == nullptr)
    s.fail(key, "expected a duration in ns (a number or a {dist = ...} table), got " +
                    std::string(type_name(*n)));
  const double v = s.finite_number(key, *n);
  if (v < 0 || v > 1e12) s.fail(key, fmt::format("must be in [0, 1e12] ns, got {}", v));
  return constant(v);
}

std::optional<Dist> optional_duration(Section& s, std::string_view key) {
  if (!s.table().contains(key)) return std::nullopt;
  return read_duration(s, key);
}

std::string read_name(Section& s, std::string_view key) {
  std::string v;
  const toml::node* n = s.take(key);
  if (n->as_string() == nullptr)
    s.fail(key, "expected a name (a string), got " + std::string(type_name(*n)));
  s.read(key, v);
  return v;
}

int index_of(const std::vector<std::string>& names, const std::string& n) {
  const auto it = std::find(names.begin(), names.end(), n);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

// Names used before the tables that declare them are resolved: counters and sections are
// declared by use.
int intern(std::vector<std::string>& names, const std::string& n) {
  const int i = index_of(names, n);
  if (i >= 0) return i;
  names.push_back(n);
  return static_cast<int>(names.size()) - 1;
}

struct Names {
  std::vector<std::string> locks, queues, pipes, groups;
};

class ProgramReader {
 public:
  ProgramReader(const Reader& r, ProgramSpec& p, const Names& names)
      : r_(r), p_(p), names_(names) {}

  void read_steps(const toml::array& arr, const std::string& path, ProgramGroup& g) {
    if (arr.empty()) fail_node(path, arr, "a program needs at least one step");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string sp = fmt::format("{}[{}]", path, i);
      const toml::table* t = arr[i].as_table();
      if (t == nullptr)
        fail_node(sp, arr[i],
                  "expected a step (an inline table such as { compute = 500 }), got " +
                      std::string(type_name(arr[i])));
      Section s(r_, *t, sp, "a program step");
      g.steps.push_back(read_step(s));
    }
  }

 private:
  [[noreturn]] void fail_node(const std::string& path, const toml::node& n,
                              const std::string& msg) const {
    r_.fail(path, n.source(), msg);
  }

  int resolve(Section& s, std::string_view key, const std::vector<std::string>& names,
              const char* what, const char* table) {
    const std::string n = read_name(s, key);
    const int i = index_of(names, n);
    if (i < 0)
      s.fail(key, fmt::format("no {} named '{}' (declare it in {}); {}s: {}", what, n, table, what,
                              list_names(names)));
    return i;
  }

  std::int64_t read_count(Section& s, std::string_view key, std::int64_t fallback,
                          std::int64_t lo) {
    std::int64_t v = fallback;
    s.read(key, v, lo, kMaxCount);
    return v;
  }

  ProgramStep read_step(Section& s) {
    static constexpr std::array<std::pair<std::string_view, Op>, 21> kOps = {{
        {"compute", Op::compute},  {"kernel", Op::kernel},   {"lock", Op::lock},
        {"unlock", Op::unlock},    {"fault", Op::fault},     {"ipi", Op::ipi},
        {"shootdown", Op::ipi},    {"wait", Op::wait},       {"wake", Op::wake},
        {"write", Op::pipe_write}, {"read", Op::pipe_read},  {"fork", Op::fork},
        {"exec", Op::exec},        {"reap", Op::reap},       {"sleep", Op::sleep},
        {"count", Op::count},      {"section", Op::section}, {"section_end", Op::section_end},
        {"loop", Op::loop},        {"end", Op::end},         {"vfork", Op::vfork},
    }};
    ProgramStep st;
    st.where = s.where_table();
    std::string_view found;
    for (const auto& [key, op] : kOps) {
      if (!s.table().contains(key)) continue;
      if (!found.empty())
        s.fail(key,
               fmt::format("a step does one thing; this one has both '{}' and '{}'", found, key));
      found = key;
      st.op = op;
    }
    if (found.empty()) {
      std::string ops;
      for (const auto& [key, op] : kOps) ops += (ops.empty() ? "" : ", ") + std::string(key);
      s.fail_table("a step needs one operation key; operations: " + ops);
    }
    st.where = s.where(found);
    switch (st.op) {
      case Op::compute:
      case Op::kernel:
      case Op::exec:
      case Op::sleep:
        st.dist = read_duration(s, found);
        break;
      case Op::fault:
        st.dist = read_duration(s, found);
        st.n = read_count(s, "n", 1, 1);
        break;
      case Op::lock: {
        st.object = resolve(s, found, names_.locks, "lock", "[workload.locks]");
        const ProgramLock& l = p_.locks[static_cast<std::size_t>(st.object)];
        const LockKind k = kind_of(l.kind);
        if (s.table().contains("irqs_off")) {
          if (k != LockKind::spin)
            s.fail("irqs_off", fmt::format("only a spinlock is taken with IRQs off; '{}' is a {}",
                                           l.name, l.kind));
          s.read("irqs_off", st.flag);
        }
        if (s.table().contains("mode")) {
          if (k != LockKind::rw)
            s.fail("mode", fmt::format("only an rwsem has read and write modes; '{}' is a {}",
                                       l.name, l.kind));
          bool read = false;
          s.read_enum("mode", read, {{"read", true}, {"write", false}});
          st.flag = read;
        }
        break;
      }
      case Op::unlock:
        st.object = resolve(s, found, names_.locks, "lock", "[workload.locks]");
        break;
      case Op::ipi: {
        st.flag = found == "shootdown";
        st.hold = optional_duration(s, "handler");
        const toml::node* n = s.take(found);
        if (const auto* str = n->as_string()) {
          if (str->get() != "others")
            s.fail(found,
                   "expected \"others\" (every other vCPU) or an array of vCPU numbers, "
                   "got '" +
                       unguard(str->get()) + "'");
        } else if (const auto* a = n->as_array()) {
          if (a->empty()) s.fail(found, "an empty set of target vCPUs");
          for (const toml::node& e : *a) {
            const auto* i = e.as_integer();
            if (i == nullptr || i->get() < 0 || i->get() >= 4096)
              fail_node(s.path_of(found), e, "a target vCPU must be an integer in [0, 4095]");
            if (std::find(st.cpus.begin(), st.cpus.end(), static_cast<int>(i->get())) !=
                st.cpus.end())
              fail_node(s.path_of(found), e, fmt::format("vCPU {} is listed twice", i->get()));
            st.cpus.push_back(static_cast<int>(i->get()));
          }
        } else {
          s.fail(found, "expected \"others\" or an array of vCPU numbers, got " +
                            std::string(type_name(*n)));
        }
        if (s.table().contains("wait")) s.read("wait", st.flag);
        break;
      }
      case Op::wait:
        st.object = resolve(s, found, names_.queues, "queue", "[workload.queues]");
        if (s.table().contains("latency"))
          st.section = intern(p_.sections, read_name(s, "latency"));
        break;
      case Op::wake:
        st.object = resolve(s, found, names_.queues, "queue", "[workload.queues]");
        st.n = read_count(s, "n", 1, 1);
        if (s.table().contains("all")) {
          if (s.table().contains("n")) s.fail("all", "'all' wakes every waiter; drop 'n'");
          s.read("all", st.flag);
        }
        break;
      case Op::pipe_write:
      case Op::pipe_read:
        st.object = resolve(s, found, names_.pipes, "pipe", "[workload.pipes]");
        st.hold = optional_duration(s, "hold");
        break;
      case Op::fork:
      case Op::vfork:
        st.object = resolve(s, found, names_.groups, "group", "[[workload.group]]");
        st.n = read_count(s, "n", 1, 1);
        break;
      case Op::reap: {
        const toml::node* n = s.take(found);
        if (const auto* str = n->as_string()) {
          if (str->get() != "all")
            s.fail(found,
                   "expected \"all\" or a number of children, got '" + unguard(str->get()) + "'");
          st.n = 0;
        } else {
          st.n = read_count(s, found, 1, 1);
        }
        break;
      }
      case Op::count:
        st.object = intern(p_.counters, read_name(s, found));
        st.n = read_count(s, "n", 1, 1);
        break;
      case Op::section:
      case Op::section_end:
        st.object = intern(p_.sections, read_name(s, found));
        break;
      case Op::loop:
        st.n = read_count(s, found, 1, 0);
        break;
      case Op::end: {
        bool v = true;
        s.read(found, v);
        if (!v) s.fail(found, "write { end = true } to close the loop");
        break;
      }
    }
    s.finish();
    return st;
  }

  const Reader& r_;
  ProgramSpec& p_;
  const Names& names_;
};

// ---- Static checks ---------------------------------------------------------------------------

struct Held {
  int lock;
  bool flag;
  const ProgramStep* at;
};

bool may_sleep(const ProgramSpec& p, const ProgramStep& st) {
  switch (st.op) {
    case Op::wait:
    case Op::sleep:
    case Op::fork:
    case Op::vfork:
    case Op::reap:
    case Op::exec:
    case Op::pipe_write:
    case Op::pipe_read:
    case Op::fault:
      return true;
    case Op::lock:
      return kind_of(p.locks[static_cast<std::size_t>(st.object)].kind) != LockKind::spin;
    default:
      return false;
  }
}

// Whether a task of `g` releases a vfork parent: an exec step, or a program that ends, i.e.
// one without a loop = 0 (steps after such a loop are an error of their own, so any of
// them makes the program run forever). Loop jumps of a later group are not resolved yet.
bool execs_or_ends(const ProgramGroup& g) {
  bool forever = false;
  for (const ProgramStep& st : g.steps) {
    if (st.op == Op::exec) return true;
    forever = forever || (st.op == Op::loop && st.n == 0);
  }
  return !forever;
}

const char* op_name(const ProgramStep& st) {
  switch (st.op) {
    case Op::wait:
      return "wait";
    case Op::sleep:
      return "sleep";
    case Op::fork:
      return "fork";
    case Op::vfork:
      return "vfork";
    case Op::reap:
      return "reap";
    case Op::exec:
      return "exec";
    case Op::pipe_write:
      return "write";
    case Op::pipe_read:
      return "read";
    case Op::fault:
      return "fault";
    case Op::lock:
      return "lock";
    default:
      return "step";
  }
}

void check_group(ProgramSpec& p, ProgramGroup& g) {
  std::vector<Held> held;
  std::vector<std::pair<int, std::vector<Held>>> loops;  // loop step index, held at its start
  bool forks = false;
  auto lock_name = [&](int l) { return p.locks[static_cast<std::size_t>(l)].name; };
  for (std::size_t i = 0; i < g.steps.size(); ++i) {
    ProgramStep& st = g.steps[i];
    const std::string& lname = st.object >= 0 && (st.op == Op::lock || st.op == Op::unlock)
                                   ? lock_name(st.object)
                                   : g.name;
    // An earlier loop = 0 runs forever.
    if (i > 0 && g.steps[i - 1].op == Op::end &&
        g.steps[static_cast<std::size_t>(g.steps[i - 1].jump)].n == 0)
      fail_at(st.where, "this step never runs: the loop before it (loop = 0) runs forever");
    if (may_sleep(p, st))
      for (const Held& h : held)
        if (kind_of(p.locks[static_cast<std::size_t>(h.lock)].kind) == LockKind::spin)
          fail_at(st.where, fmt::format("'{}' may sleep, but spinlock '{}' (taken at line {}) is "
                                        "held here: sleeping in atomic context",
                                        op_name(st), lock_name(h.lock), h.at->where.line));
    const bool irqs_off =
        std::any_of(held.begin(), held.end(), [](const Held& h) { return h.flag; }) &&
        std::any_of(held.begin(), held.end(), [&](const Held& h) {
          return h.flag &&
                 kind_of(p.locks[static_cast<std::size_t>(h.lock)].kind) == LockKind::spin;
        });
    switch (st.op) {
      case Op::lock:
        for (const Held& h : held)
          if (h.lock == st.object)
            fail_at(st.where, fmt::format("lock '{}' is already held here (taken at line {}): "
                                          "the task would deadlock on itself",
                                          lname, h.at->where.line));
        held.push_back({st.object, st.flag, &st});
        break;
      case Op::unlock: {
        const auto it = std::find_if(held.begin(), held.end(),
                                     [&](const Held& h) { return h.lock == st.object; });
        if (it == held.end())
          fail_at(st.where, fmt::format("unlock of '{}', which is not held here", lname));
        st.flag = it->flag;  // the unlock matches its lock: irq-enable, or up_read
        held.erase(it);
        break;
      }
      case Op::ipi:
        if (st.flag && irqs_off)
          fail_at(st.where,
                  "waits for IPIs with IRQs off (smp_call_function_many() would "
                  "deadlock against a CPU doing the same)");
        break;
      case Op::vfork:
        if (const ProgramGroup& into = p.groups[static_cast<std::size_t>(st.object)];
            !execs_or_ends(into))
          fail_at(st.where, fmt::format("group '{}' neither execs nor ends: a vfork parent "
                                        "waits for that and would never resume",
                                        into.name));
        [[fallthrough]];
      case Op::fork:
        forks = true;
        if (const ProgramGroup& into = p.groups[static_cast<std::size_t>(st.object)];
            into.max == 0 && into.max_per_vcpu == 0)
          fail_at(st.where, fmt::format("group '{}' has no task slots to fork into: give it "
                                        "max = <children at once> or max_per_vcpu = <per vCPU>",
                                        p.groups[static_cast<std::size_t>(st.object)].name));
        break;
      case Op::loop:
        if (loops.size() >= static_cast<std::size_t>(kMaxLoopDepth))
          fail_at(st.where, fmt::format("loops nest at most {} deep", kMaxLoopDepth));
        loops.emplace_back(static_cast<int>(i), held);
        break;
      case Op::end: {
        if (loops.empty()) fail_at(st.where, "{ end = true } without a loop to close");
        const auto& [start, before] = loops.back();
        auto same = [](const std::vector<Held>& a, const std::vector<Held>& b) {
          if (a.size() != b.size()) return false;
          for (const Held& x : a)
            if (std::none_of(b.begin(), b.end(), [&](const Held& y) { return y.lock == x.lock; }))
              return false;
          return true;
        };
        if (!same(before, held))
          fail_at(st.where, fmt::format("the loop that starts at line {} does not hold the same "
                                        "locks at its end as at its start; a loop body must "
                                        "release what it takes",
                                        g.steps[static_cast<std::size_t>(start)].where.line));
        st.jump = start;
        g.steps[static_cast<std::size_t>(start)].jump = static_cast<int>(i);
        loops.pop_back();
        break;
      }
      default:
        break;
    }
  }
  if (!loops.empty())
    fail_at(g.steps[static_cast<std::size_t>(loops.back().first)].where,
            "this loop has no { end = true }");
  if (!held.empty())
    fail_at(held.back().at->where, fmt::format("lock '{}' is still held when the program ends",
                                               lock_name(held.back().lock)));
  for (const ProgramStep& st : g.steps)
    if (st.op == Op::reap && !forks)
      fail_at(st.where,
              fmt::format("group '{}' never forks, so it has no children to reap", g.name));
}

// Every wait queue waited on is woken somewhere, every pipe read is written somewhere
// (and the other way round): otherwise a task sleeps forever.
void check_pairs(const ProgramSpec& p) {
  std::vector<const ProgramStep*> waits(p.queues.size()), wakes(p.queues.size());
  std::vector<const ProgramStep*> reads(p.pipes.size()), writes(p.pipes.size());
  for (const ProgramGroup& g : p.groups)
    for (const ProgramStep& st : g.steps) {
      const auto o = static_cast<std::size_t>(st.object);
      if (st.op == Op::wait && waits[o] == nullptr) waits[o] = &st;
      if (st.op == Op::wake && wakes[o] == nullptr) wakes[o] = &st;
      if (st.op == Op::pipe_read && reads[o] == nullptr) reads[o] = &st;
      if (st.op == Op::pipe_write && writes[o] == nullptr) writes[o] = &st;
    }
  for (std::size_t q = 0; q < p.queues.size(); ++q)
    if (waits[q] != nullptr && wakes[q] == nullptr)
      fail_at(waits[q]->where, fmt::format("no step wakes queue '{}': its waiters would sleep "
                                           "forever",
                                           p.queues[q]));
  for (std::size_t q = 0; q < p.pipes.size(); ++q) {
    if (reads[q] != nullptr && writes[q] == nullptr)
      fail_at(reads[q]->where,
              fmt::format("no step writes pipe '{}': its readers would sleep forever",
                          p.pipes[q].name));
    if (writes[q] != nullptr && reads[q] == nullptr)
      fail_at(writes[q]->where,
              fmt::format("no step reads pipe '{}': its writers would sleep once it is full",
                          p.pipes[q].name));
  }
}

void read_score(Section& s, ProgramSpec& p) {
  ProgramScore& sc = p.score;
  sc.where = s.where_table();
  int kinds = 0;
  for (const char* k : {"rate", "wall", "latency"}) kinds += s.table().contains(k) ? 1 : 0;
  if (kinds != 1)
    s.fail_table(
        "the score is one of rate = \"<counter>\" (per second), wall = \"<counter>\" "
        "with jobs = N (time until it reaches N), or latency = \"<section>\" with "
        "percentile = P");
  auto counter = [&](std::string_view key) {
    const std::string n = read_name(s, key);
    const int i = index_of(p.counters, n);
    if (i < 0)
      s.fail(key, fmt::format("no step counts '{}'; counters: {}", n, list_names(p.counters)));
    sc.where = s.where(key);
    return i;
  };
  if (s.table().contains("rate")) {
    sc.kind = ProgramScore::Kind::rate;
    sc.counter = counter("rate");
  } else if (s.table().contains("wall")) {
    sc.kind = ProgramScore::Kind::wall;
    sc.counter = counter("wall");
    s.require("jobs");
    s.read("jobs", sc.target, 1, kMaxCount);
  } else {
    sc.kind = ProgramScore::Kind::latency;
    const std::string n = read_name(s, "latency");
    sc.section = index_of(p.sections, n);
    if (sc.section < 0)
      s.fail("latency",
             fmt::format("no step measures section '{}'; sections: {}", n, list_names(p.sections)));
    sc.where = s.where("latency");
    s.read("percentile", sc.percentile, 0, 100);
    if (sc.percentile <= 0 || sc.percentile >= 100)
      s.fail("percentile", fmt::format("must be in (0, 100), got {}", sc.percentile));
  }
  s.finish();
}

void read_costs(Section& s, ProgramCosts& c) {
  c.fork_work = optional_duration(s, "fork_ns");
  c.dup_mmap_hold = optional_duration(s, "dup_mmap_ns");
  c.anon_vma_hold = optional_duration(s, "anon_vma_hold_ns");
  c.tasklist_hold = optional_duration(s, "tasklist_hold_ns");
  c.exec_work = optional_duration(s, "exec_ns");
  c.exit_work = optional_duration(s, "exit_ns");
  c.reap_work = optional_duration(s, "reap_ns");
  s.finish();
}

}  // namespace

void read_program(Section& s, WorkloadSpec& w) {
  auto p = std::make_shared<ProgramSpec>();
  const Reader& r = s.reader();
  Names names;
  if (const toml::table* t = s.subtable("locks")) {
    Section ls(r, *t, s.path_of("locks"), "[workload.locks]");
    for (const auto& [key, node] : *t) {
      const std::string name = unguard(key.str());
      std::string kind;
      if (node.as_string() == nullptr)
        ls.fail(name, "expected a lock kind (a string), got " + std::string(type_name(node)));
      ls.read(name, kind);
      std::string valid = "spinlock";
      bool known = kind == "spinlock";
      for (const LockInfo& i : lock_infos<NativeEnv>()) {
        valid += ", " + std::string(i.name);
        known = known || i.name == kind;
      }
      if (!known) ls.fail(name, "unknown lock kind '" + kind + "'; kinds: " + valid);
      p->locks.push_back({name, kind, ls.where(name)});
      names.locks.push_back(name);
    }
    ls.finish();
  }
  if (const toml::table* t = s.subtable("queues")) {
    Section qs(r, *t, s.path_of("queues"), "[workload.queues]");
    for (const auto& [key, node] : *t) {
      const std::string name = unguard(key.str());
      bool b = true;
      if (node.as_boolean() == nullptr)
        qs.fail(name, "declare a wait queue as <name> = true, got " + std::string(type_name(node)));
      qs.read(name, b);
      if (!b) qs.fail(name, "declare a wait queue as <name> = true");
      p->queues.push_back(name);
    }
    qs.finish();
  }
  if (const toml::table* t = s.subtable("pipes")) {
    Section ps(r, *t, s.path_of("pipes"), "[workload.pipes]");
    for (const auto& [key, node] : *t) {
      const std::string name = unguard(key.str());
      ProgramPipe pipe;
      pipe.name = name;
      if (node.as_integer() == nullptr)
        ps.fail(name, "expected the pipe's capacity in messages (an integer), got " +
                          std::string(type_name(node)));
      ps.read(name, pipe.capacity, 1, kMaxCount);
      p->pipes.push_back(pipe);
      names.pipes.push_back(name);
    }
    ps.finish();
  }
  names.queues = p->queues;
  if (const toml::table* t = s.subtable("costs")) {
    Section cs(r, *t, s.path_of("costs"), "[workload.costs]");
    read_costs(cs, p->costs);
  }
  const toml::node* gn = s.take("group");
  if (gn == nullptr) s.fail_table("a program workload needs at least one [[workload.group]]");
  const toml::array* ga = gn->as_array();
  if (ga == nullptr || !ga->is_array_of_tables() || ga->empty())
    s.fail("group", "expected [[workload.group]] tables, got " + std::string(type_name(*gn)));
  // Group names first, so that a program may fork a group declared after it.
  std::vector<Section> sections;
  for (std::size_t i = 0; i < ga->size(); ++i) {
    Section gs(r, *(*ga)[i].as_table(), fmt::format("{}[{}]", s.path_of("group"), i),
               "[[workload.group]]");
    gs.require("name");
    ProgramGroup g;
    g.where = gs.where_table();
    g.name = read_name(gs, "name");
    if (index_of(names.groups, g.name) >= 0)
      gs.fail("name", "group name '" + g.name + "' is used twice");
    gs.read("tasks", g.tasks, 0, kMaxTasks);
    gs.read("tasks_per_vcpu", g.tasks_per_vcpu, 0, 64);
    gs.read("max", g.max, 0, kMaxTasks);
    gs.read("max_per_vcpu", g.max_per_vcpu, 0, 64);
    names.groups.push_back(g.name);
    p->groups.push_back(std::move(g));
    sections.push_back(std::move(gs));
  }
  bool starts = false;
  ProgramReader pr(r, *p, names);
  for (std::size_t i = 0; i < ga->size(); ++i) {
    Section& gs = sections[i];
    ProgramGroup& g = p->groups[i];
    if (g.tasks == 0 && g.tasks_per_vcpu == 0 && g.max == 0 && g.max_per_vcpu == 0)
      gs.fail_table("group '" + g.name +
                    "' has no tasks: give it tasks, tasks_per_vcpu or (for "
                    "a group that is forked) max or max_per_vcpu");
    starts = starts || g.tasks > 0 || g.tasks_per_vcpu > 0;
    gs.require("program");
    const toml::node* pn = gs.take("program");
    const toml::array* steps = pn->as_array();
    if (steps == nullptr)
      gs.fail("program", "expected an array of steps, got " + std::string(type_name(*pn)));
    pr.read_steps(*steps, gs.path_of("program"), g);
    gs.finish();
  }
  if (!starts)
    s.fail("group", "no group has a task at time 0 (tasks or tasks_per_vcpu): nothing would run");
  for (ProgramGroup& g : p->groups) check_group(*p, g);
  check_pairs(*p);
  if (const toml::table* t = s.subtable("score")) {
    Section ss(r, *t, s.path_of("score"), "[workload.score]");
    read_score(ss, *p);
  } else {
    s.fail_table("a program workload needs a [workload.score] (rate, wall or latency)");
  }
  s.finish();
  w.program = std::move(p);
}

}  // namespace pvlock::scenario::detail
