// SPDX-License-Identifier: GPL-2.0-only
#include "workload/program/program.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "scenario/parse.hpp"
#include "scenario/program.hpp"
#include "workload/estimates.hpp"
#include "workload/program/objects.hpp"

namespace pvlock::workload {
namespace {

using program::AnyLock;
using program::Env;
using program::Histogram;
using scenario::Dist;
using Op = scenario::ProgramStep::Op;

Dist constant(double ns) {
  Dist d;
  d.mean = ns;
  return d;
}

// A compiled step: the validated step with every default filled in.
struct Step {
  Op op;
  Dist dist;
  Dist hold;
  int object;
  std::int64_t n;
  bool flag;
  bool tlb;  // a TLB shootdown (PV TLB flush may skip preempted targets)
  int section;
  int jump;
  std::vector<std::uint8_t> targets;  // ipi: by vCPU
};

struct Costs {
  Dist fork_work, dup_mmap_hold, anon_vma_hold, tasklist_hold, exit_work, reap_work;
};

class ProgramWorkload;

// One task (a process: its own mm) and, for a forked group, the slot it reuses for each
// child forked into it. Protected by tasklist_lock where the kernel's are: parent, zombie
// list, children.
struct alignas(64) Proc {
  sim::Task* task = nullptr;
  int group = 0;
  int index = 0;                      // in its group
  std::unique_ptr<AnyLock> mm;        // mm->mmap_lock
  std::unique_ptr<AnyLock> own_anon;  // the root anon_vma of its own anonymous memory
  AnyLock* anon_root = nullptr;       // the root it shares (a forked child: its parent's)
  LockStat mm_stat, anon_stat;
  std::vector<std::int64_t> loop_left;  // per step
  std::vector<std::int64_t> stamps;     // per lock: the hold stamp of this task's hold
  std::vector<std::int64_t> section_start;
  std::int64_t woken_at = -1;  // when a waker released it from a wait queue
  // Process tree.
  Proc* parent = nullptr;
  int children = 0;  // forked and not yet reaped
  Proc* zombies = nullptr;
  Proc* next_zombie = nullptr;
  bool reaping = false;  // the parent is asleep in wait()
  // vfork: the child runs on its parent's mm (CLONE_VM) until it execs or exits, and the
  // parent sleeps until then (CLONE_VFORK's vfork_done).
  AnyLock* shared_mm = nullptr;  // the mm it borrows; null: its own
  Proc* vfork_parent = nullptr;  // the parent to release at exec or exit
  bool vfork_waiting = false;    // a parent: asleep until its vfork child lets go of the mm
  AnyLock& mm_now() { return shared_mm != nullptr ? *shared_mm : *mm; }
  bool forked = false;  // a slot: a child lives in it
  bool in_use = false;  // a slot: forked and not yet reaped
  bool ends = false;    // the program reaches its end (the task exits)
  // ipi: the call_single_data the targets count down.
  sim::SimAtomic<std::uint32_t> remaining{};
  std::vector<std::uint8_t> sent;
};

struct alignas(64) Queue {
  std::unique_ptr<AnyLock> lock;  // wq_head->lock (spin_lock_irqsave)
  std::int64_t tokens = 0;
  std::vector<Proc*> waiters;  // FIFO ring, capacity = every task
  std::size_t head = 0, len = 0;
  void push(Proc* p) { waiters[(head + len++) % waiters.size()] = p; }
  Proc* pop() {
    Proc* p = waiters[head];
    head = (head + 1) % waiters.size();
    --len;
    return p;
  }
};

struct alignas(64) Pipe {
  std::unique_ptr<AnyLock> mutex;  // pipe->mutex
  std::int64_t count = 0, capacity = 1;
  std::vector<Proc*> readers, writers;  // asleep on the pipe's wait queue (reserved)
};

struct Group {
  std::string name;
  std::vector<Step> steps;
  std::vector<Proc*> slots;         // forked groups: the task slots
  std::vector<Proc*> slot_waiters;  // parents waiting for a free slot (reserved)
  bool forked_group = false;
};

class ProgramWorkload final : public Workload {
 public:
  ProgramWorkload(const scenario::WorkloadSpec& spec, sim::Guest& g)
      : spec_(*spec.program), guest_(g) {
    const scenario::ProgramSpec& p = spec_;
    namespace M = estimates::messaging;
    auto cost = [](const std::optional<Dist>& d, double fallback) {
      return d ? *d : constant(fallback);
    };
    costs_.fork_work = cost(p.costs.fork_work, M::fork_ns);
    costs_.dup_mmap_hold = cost(p.costs.dup_mmap_hold, M::fork_ns / 2);
    costs_.anon_vma_hold = cost(p.costs.anon_vma_hold, M::fork_anon_vma_hold_ns);
    costs_.tasklist_hold = cost(p.costs.tasklist_hold, M::tasklist_hold_ns);
    costs_.exit_work = cost(p.costs.exit_work, M::exit_ns);
    costs_.reap_work = cost(p.costs.reap_work, M::reap_scan_ns);
    exec_work_ = p.costs.exec_work;
    // Declared locks first, in file order (their lock_stat rows and memory).
    lock_stats_ = std::make_unique<LockStat[]>(p.locks.size());
    for (std::size_t i = 0; i < p.locks.size(); ++i) {
      const scenario::ProgramLock& l = p.locks[i];
      lock_stats_[i].name = l.name;
      g.register_lock_stat(lock_stats_[i]);
      const std::string kind = l.kind == "spinlock" ? g.lock_name : l.kind;
      locks_.push_back(program::make_lock(kind, &lock_stats_[i], l.name + " (" + g.name() + ")"));
      if (!locks_.back()) scenario::fail_at(l.where, "no lock named '" + kind + "' in this build");
      bool rw = false;
      with_lock<Env>(kind, [&]<class L>(const LockInfo& i) { rw = i.kind == LockKind::rw; });
      rw_.push_back(rw);
    }
    int total = 0;
    for (const scenario::ProgramGroup& pg : p.groups)
      total += pg.tasks + pg.tasks_per_vcpu * g.vcpu_count() + slots_of(pg);
    bool process_steps = false;
    for (const scenario::ProgramGroup& pg : p.groups) {
      for (const scenario::ProgramStep& st : pg.steps)
        process_steps = process_steps || st.op == Op::fork || st.op == Op::vfork ||
                        st.op == Op::reap || st.op == Op::exec || st.op == Op::fault;
      process_steps = process_steps || !runs_forever(pg.steps);
    }
    if (process_steps) {
      tasklist_stat_.name = "tasklist_lock";
      g.register_lock_stat(tasklist_stat_);
      tasklist_ =
          program::make_lock(g.lock_name, &tasklist_stat_, "tasklist_lock (" + g.name() + ")");
    }
    queue_stats_ = std::make_unique<LockStat[]>(p.queues.size());
    for (std::size_t q = 0; q < p.queues.size(); ++q) {
      queues_.push_back(std::make_unique<Queue>());
      Queue& qu = *queues_.back();
      queue_stats_[q].name = p.queues[q] + ".wq_lock";
      g.register_lock_stat(queue_stats_[q]);
      qu.lock =
          program::make_lock(g.lock_name, &queue_stats_[q], p.queues[q] + " (" + g.name() + ")");
      qu.waiters.assign(static_cast<std::size_t>(std::max(total, 1)), nullptr);
    }
    pipe_stats_ = std::make_unique<LockStat[]>(p.pipes.size());
    for (std::size_t q = 0; q < p.pipes.size(); ++q) {
      pipes_.push_back(std::make_unique<Pipe>());
      Pipe& pi = *pipes_.back();
      pipe_stats_[q].name = p.pipes[q].name + ".mutex";
      g.register_lock_stat(pipe_stats_[q]);
      pi.mutex =
          program::make_lock("mutex", &pipe_stats_[q], p.pipes[q].name + " (" + g.name() + ")");
      pi.capacity = p.pipes[q].capacity;
      pi.readers.reserve(static_cast<std::size_t>(total));
      pi.writers.reserve(static_cast<std::size_t>(total));
    }
    counters_.assign(p.counters.size(), 0);
    all_counters_.assign(p.counters.size(), 0);
    sections_.resize(p.sections.size());
    for (const scenario::ProgramGroup& pg : p.groups) groups_.push_back(compile(pg, total));
    // The tasks: each group's tasks at time 0, then its fork slots, spread over the vCPUs
    // in creation order.
    int next_cpu = 0;
    for (std::size_t gi = 0; gi < p.groups.size(); ++gi) {
      const scenario::ProgramGroup& pg = p.groups[gi];
      const int start = pg.tasks + pg.tasks_per_vcpu * g.vcpu_count();
      for (int i = 0; i < start + slots_of(pg); ++i) {
        procs_.push_back(std::make_unique<Proc>());
        Proc& pr = *procs_.back();
        pr.group = static_cast<int>(gi);
        pr.index = i;
        const bool slot = i >= start;
        const std::string name = pg.name + "/" + std::to_string(i);
        set_up_proc(pr, name, !slot && process_steps);
        Group& gr = groups_[gi];
        pr.ends = !runs_forever(pg.steps);
        const int cpu = next_cpu++ % g.vcpu_count();
        if (slot) {
          gr.slots.push_back(&pr);
          pr.task = &g.create_task(
              name, cpu, [this, &pr] { slot_body(pr); }, true);
        } else {
          pr.task = &g.create_task(name, cpu, [this, &pr] { task_body(pr); });
        }
      }
    }
  }

  double score() const override {
    const scenario::ProgramScore& s = spec_.score;
    switch (s.kind) {
      case scenario::ProgramScore::Kind::rate:
        return static_cast<double>(counters_[static_cast<std::size_t>(s.counter)]) /
               guest_.sim().measured_seconds();
      case scenario::ProgramScore::Kind::wall:
        if (done_at_ < 0)
          scenario::fail_at(
              s.where,
              fmt::format("the job was not done by the end of the run: '{}' reached {} of {} in "
                          "{} ms of simulated time; lengthen [run] duration_ms",
                          spec_.counters[static_cast<std::size_t>(s.counter)],
                          all_counters_[static_cast<std::size_t>(s.counter)], s.target,
                          static_cast<double>(guest_.sim().now()) / 1e6));
        return static_cast<double>(done_at_) / 1e6;
      case scenario::ProgramScore::Kind::latency: {
        const Histogram& h = sections_[static_cast<std::size_t>(s.section)];
        if (h.count() == 0)
          scenario::fail_at(s.where,
                            fmt::format("section '{}' has no sample in the measured window",
                                        spec_.sections[static_cast<std::size_t>(s.section)]));
        return h.percentile(s.percentile) / 1e3;
      }
    }
    return 0;
  }
  std::string unit() const override {
    const scenario::ProgramScore& s = spec_.score;
    switch (s.kind) {
      case scenario::ProgramScore::Kind::rate:
        return spec_.counters[static_cast<std::size_t>(s.counter)] + "/s";
      case scenario::ProgramScore::Kind::wall:
        return "ms";
      case scenario::ProgramScore::Kind::latency:
        return fmt::format("us (p{})", s.percentile);
    }
    return "";
  }
  std::optional<double> done() const override {
    if (spec_.score.kind != scenario::ProgramScore::Kind::rate) return std::nullopt;
    return static_cast<double>(all_counters_[static_cast<std::size_t>(spec_.score.counter)]);
  }
  void report(nlohmann::ordered_json& vm) const override {
    nlohmann::ordered_json c = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < spec_.counters.size(); ++i)
      c[spec_.counters[i]] = {{"window", counters_[i]}, {"total", all_counters_[i]}};
    vm["counters"] = c;
    nlohmann::ordered_json s = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < spec_.sections.size(); ++i) {
      const Histogram& h = sections_[i];
      s[spec_.sections[i]] = {{"samples", h.count()},
                              {"mean_us", h.mean() / 1e3},
                              {"p50_us", h.percentile(50) / 1e3},
                              {"p99_us", h.percentile(99) / 1e3},
                              {"p99.9_us", h.percentile(99.9) / 1e3}};
    }
    vm["sections"] = s;
    if (tasklist_)
      vm["processes"] = {
          {"forks", forks_}, {"exits", exits_}, {"reaps", reaps_}, {"execs", execs_}};
    if (spec_.score.kind == scenario::ProgramScore::Kind::wall)
      vm["job"] = {{"counter", spec_.counters[static_cast<std::size_t>(spec_.score.counter)]},
                   {"jobs", spec_.score.target},
                   {"done_ms", done_at_ < 0 ? 0.0 : static_cast<double>(done_at_) / 1e6}};
  }

 private:
  // A group's fork slots: max, plus max_per_vcpu for each vCPU of this VM.
  int slots_of(const scenario::ProgramGroup& pg) const {
    return pg.max + pg.max_per_vcpu * guest_.vcpu_count();
  }

  static bool runs_forever(const std::vector<scenario::ProgramStep>& steps) {
    // The parser rejects steps after a loop = 0, so a program that never ends closes one
    // last.
    return !steps.empty() && steps.back().op == Op::end &&
           steps[static_cast<std::size_t>(steps.back().jump)].n == 0;
  }

  Group compile(const scenario::ProgramGroup& pg, int total) {
    namespace M = estimates::messaging;
    Group gr;
    gr.name = pg.name;
    gr.forked_group = slots_of(pg) > 0;
    gr.slot_waiters.reserve(static_cast<std::size_t>(total));
    for (const scenario::ProgramStep& st : pg.steps) {
      Step s{st.op, st.dist, {}, st.object, st.n, st.flag, false, st.section, st.jump, {}};
      switch (st.op) {
        case Op::ipi:
          s.hold = st.hold ? *st.hold : constant(estimates::ebizzy::flush_handler_ns);
          s.tlb = st.flag;
          s.targets.assign(static_cast<std::size_t>(guest_.vcpu_count()), st.cpus.empty() ? 1 : 0);
          for (int c : st.cpus) {
            if (c >= guest_.vcpu_count())
              scenario::fail_at(st.where, fmt::format("vCPU {} is not in this VM (it has {} vCPUs)",
                                                      c, guest_.vcpu_count()));
            s.targets[static_cast<std::size_t>(c)] = 1;
          }
          break;
        case Op::pipe_write:
          s.hold = st.hold ? *st.hold : constant(M::send_hold_ns);
          break;
        case Op::pipe_read:
          s.hold = st.hold ? *st.hold : constant(M::recv_hold_ns);
          break;
        case Op::exec:
          s.hold = exec_work_ ? *exec_work_ : constant(0);
          break;
        default:
          break;
      }
      gr.steps.push_back(std::move(s));
    }
    return gr;
  }

  void set_up_proc(Proc& pr, const std::string& name, bool register_stats) {
    pr.mm_stat.name = name + ".mmap_lock";
    pr.anon_stat.name = name + ".anon_vma";
    pr.mm = program::make_lock("rwsem", &pr.mm_stat, name + ".mmap_lock (" + guest_.name() + ")");
    pr.own_anon =
        program::make_lock("rwsem", &pr.anon_stat, name + ".anon_vma (" + guest_.name() + ")");
    if (register_stats) {
      guest_.register_lock_stat(pr.mm_stat);
      guest_.register_lock_stat(pr.anon_stat);
    }
    pr.anon_root = pr.own_anon.get();
    const Group& gr = groups_[static_cast<std::size_t>(pr.group)];
    pr.loop_left.assign(gr.steps.size(), 0);
    pr.stamps.assign(locks_.size(), 0);
    pr.section_start.assign(sections_.size(), 0);
    pr.sent.assign(static_cast<std::size_t>(guest_.vcpu_count()), 0);
  }

  // ---- Tasks -----------------------------------------------------------------------------

  void task_body(Proc& pr) {
    run(pr);
    do_exit(pr);
  }

  // A fork slot: asleep until a parent forks a child into it, then the child's life.
  void slot_body(Proc& pr) {
    sim::Task& t = Env::self();
    for (;;) {
      t.progress_tracked = false;  // no process lives here: nothing for the watchdog
      while (!pr.forked) {
        Env::prepare_block();
        if (pr.forked) break;
        Env::block();
      }
      api::set_symbol(sim::Sym::workload);
      api::kernel_exit();  // ret_from_fork
      api::progress();
      run(pr);
      do_exit(pr);
    }
  }

  // Voluntary sleeps (a wait, a timer, wait()) are not a lack of progress.
  static void asleep(bool on) {
    sim::Task& t = Env::self();
    if (on) {
      t.progress_tracked = false;
    } else {
      api::progress();
    }
  }

  void run(Proc& pr) {
    const std::vector<Step>& steps = groups_[static_cast<std::size_t>(pr.group)].steps;
    const std::size_t n = steps.size();
    for (std::size_t pc = 0; pc < n; ++pc) {
      const Step& s = steps[pc];
      switch (s.op) {
        case Op::compute:
          api::compute(api::sample(s.dist));
          break;
        case Op::kernel:
          api::kernel_enter();
          api::set_symbol(sim::Sym::kernel);
          api::compute(api::sample(s.dist));
          api::set_symbol(sim::Sym::workload);
          api::kernel_exit();
          break;
        case Op::lock: {
          const bool spin_irq = s.flag && !is_rw(s.object);
          if (spin_irq) api::irq_disable();
          api::set_symbol(sim::Sym::lock_ops);
          pr.stamps[static_cast<std::size_t>(s.object)] =
              locks_[static_cast<std::size_t>(s.object)]->lock(s.flag && is_rw(s.object));
          api::set_symbol(sim::Sym::workload);
          break;
        }
        case Op::unlock: {
          api::set_symbol(sim::Sym::lock_ops);
          locks_[static_cast<std::size_t>(s.object)]->unlock(
              s.flag && is_rw(s.object), pr.stamps[static_cast<std::size_t>(s.object)]);
          api::set_symbol(sim::Sym::workload);
          if (s.flag && !is_rw(s.object)) api::irq_enable();
          break;
        }
        case Op::fault:
          fault(pr, s);
          break;
        case Op::ipi:
          ipi(pr, s);
          break;
        case Op::wait:
          wait(pr, s);
          break;
        case Op::wake:
          wake(s);
          break;
        case Op::pipe_write:
          pipe_write(pr, *pipes_[static_cast<std::size_t>(s.object)], s);
          break;
        case Op::pipe_read:
          pipe_read(pr, *pipes_[static_cast<std::size_t>(s.object)], s);
          break;
        case Op::fork:
        case Op::vfork:
          for (std::int64_t k = 0; k < s.n; ++k)
            fork(pr, groups_[static_cast<std::size_t>(s.object)], s.op == Op::vfork);
          break;
        case Op::exec:
          exec(pr, s);
          break;
        case Op::reap:
          reap(pr, s.n);
          break;
        case Op::sleep:
          asleep(true);
          guest_.sleep(Env::self(), api::sample(s.dist));
          asleep(false);
          break;
        case Op::count: {
          const auto c = static_cast<std::size_t>(s.object);
          all_counters_[c] += static_cast<std::uint64_t>(s.n);
          if (api::measuring()) counters_[c] += static_cast<std::uint64_t>(s.n);
          if (static_cast<int>(c) == spec_.score.counter && done_at_ < 0 &&
              spec_.score.kind == scenario::ProgramScore::Kind::wall &&
              all_counters_[c] >= static_cast<std::uint64_t>(spec_.score.target))
            done_at_ = api::now();
          api::progress();
          break;
        }
        case Op::section:
          pr.section_start[static_cast<std::size_t>(s.object)] = api::now();
          break;
        case Op::section_end:
          if (api::measuring())
            sections_[static_cast<std::size_t>(s.object)].add(
                api::now() - pr.section_start[static_cast<std::size_t>(s.object)]);
          break;
        case Op::loop:
          pr.loop_left[pc] = s.n;  // 0: forever
          break;
        case Op::end: {
          const auto start = static_cast<std::size_t>(s.jump);
          std::int64_t& left = pr.loop_left[start];
          if (steps[start].n == 0 || --left > 0) pc = start;  // the body again
          break;
        }
      }
    }
  }

  bool is_rw(int lock) const { return rw_[static_cast<std::size_t>(lock)]; }

  // do_user_addr_fault(): mmap_lock for read around handle_mm_fault().
  void fault(Proc& pr, const Step& s) {
    for (std::int64_t k = 0; k < s.n; ++k) {
      api::kernel_enter();
      api::set_symbol(sim::Sym::lock_ops);
      AnyLock& mm = pr.mm_now();
      const std::int64_t stamp = mm.lock(true);
      api::set_symbol(sim::Sym::kernel);
      api::compute(api::sample(s.dist));
      api::set_symbol(sim::Sym::lock_ops);
      mm.unlock(true, stamp);
      api::set_symbol(sim::Sym::workload);
      api::kernel_exit();
    }
  }

  // smp_call_function_many() (flush_tlb_mm_range for a shootdown): IPIs to the targets,
  // then, if the step waits, spin until every handler has run, preemption off.
  void ipi(Proc& pr, const Step& s) {
    sim::Task& self = Env::self();
    const int me = self.vcpu->id;
    Env::preempt_disable();
    for (int c = 0; c < guest_.vcpu_count(); ++c) {
      pr.sent[static_cast<std::size_t>(c)] = 0;
      if (c == me || s.targets[static_cast<std::size_t>(c)] == 0) continue;
      if (s.tlb && guest_.spec().pv_tlb_flush && api::vcpu_preempted(c)) continue;
      if (s.flag) pr.remaining.hw_store(pr.remaining.raw() + 1);
      const bool sent = api::send_ipi(c, static_cast<double>(api::sample(s.hold)),
                                      s.flag ? &pr.remaining : nullptr);
      pr.sent[static_cast<std::size_t>(c)] = sent ? 1 : 0;
    }
    api::call_function_ipis_sent(pr.sent);
    if (s.flag) {
      SpinBudget forever{std::numeric_limits<std::uint64_t>::max()};
      Env::spin_until(
          SpinSite::call_function,
          [&] { return pr.remaining.load(std::memory_order_acquire) == 0; }, forever, 0,
          [] { return false; });
    }
    Env::preempt_enable();
  }

  // A wait queue with a count of wake-ups nobody waited for yet (a completion): a wait
  // takes one or sleeps; a wake hands one to the oldest waiter or banks it.
  void wait(Proc& pr, const Step& s) {
    Queue& q = *queues_[static_cast<std::size_t>(s.object)];
    api::kernel_enter();
    api::irq_disable();
    std::int64_t stamp = q.lock->lock(false);
    if (q.tokens > 0) {
      --q.tokens;
      q.lock->unlock(false, stamp);
      api::irq_enable();
      api::kernel_exit();
      return;
    }
    q.push(&pr);
    pr.woken_at = -1;
    Env::prepare_block();
    q.lock->unlock(false, stamp);
    api::irq_enable();
    asleep(true);
    Env::block();
    asleep(false);
    if (s.section >= 0 && api::measuring() && pr.woken_at >= 0)
      sections_[static_cast<std::size_t>(s.section)].add(api::now() - pr.woken_at);
    api::kernel_exit();
  }

  void wake(const Step& s) {
    Queue& q = *queues_[static_cast<std::size_t>(s.object)];
    api::kernel_enter();
    api::irq_disable();
    const std::int64_t stamp = q.lock->lock(false);
    // __wake_up_common(): try_to_wake_up() of each waiter under the queue's lock.
    const std::int64_t n = s.flag ? static_cast<std::int64_t>(q.len) : s.n;
    for (std::int64_t k = 0; k < n; ++k) {
      if (q.len == 0) {
        ++q.tokens;
        continue;
      }
      Proc* w = q.pop();
      w->woken_at = api::now();
      Env::wake(w->task);
    }
    q.lock->unlock(false, stamp);
    api::irq_enable();
    api::kernel_exit();
  }

  // pipe_write()/pipe_read() under pipe->mutex, sleeping on a full/empty pipe.
  void pipe_write(Proc& pr, Pipe& p, const Step& s) {
    api::kernel_enter();
    std::int64_t stamp = p.mutex->lock(false);
    while (p.count >= p.capacity) {
      p.writers.push_back(&pr);
      Env::prepare_block();
      p.mutex->unlock(false, stamp);
      asleep(true);
      Env::block();
      asleep(false);
      stamp = p.mutex->lock(false);
    }
    api::compute(api::sample(s.hold));
    ++p.count;
    Proc* r = nullptr;
    if (!p.readers.empty()) {
      r = p.readers.back();
      p.readers.pop_back();
    }
    p.mutex->unlock(false, stamp);
    if (r != nullptr) Env::wake(r->task);
    api::kernel_exit();
  }

  void pipe_read(Proc& pr, Pipe& p, const Step& s) {
    api::kernel_enter();
    std::int64_t stamp = p.mutex->lock(false);
    while (p.count == 0) {
      p.readers.push_back(&pr);
      Env::prepare_block();
      p.mutex->unlock(false, stamp);
      asleep(true);
      Env::block();
      asleep(false);
      stamp = p.mutex->lock(false);
    }
    api::compute(api::sample(s.hold));
    --p.count;
    Proc* w = nullptr;
    if (!p.writers.empty()) {
      w = p.writers.back();
      p.writers.pop_back();
    }
    p.mutex->unlock(false, stamp);
    if (w != nullptr) Env::wake(w->task);
    api::kernel_exit();
  }

  // ---- Processes ---------------------------------------------------------------------------

  void tasklist_write_lock(std::int64_t& stamp) {
    api::irq_disable();  // write_lock_irq(&tasklist_lock)
    api::set_symbol(sim::Sym::lock_ops);
    stamp = tasklist_->lock(false);
    api::set_symbol(sim::Sym::kernel);
  }
  void tasklist_write_unlock(std::int64_t stamp) {
    api::set_symbol(sim::Sym::lock_ops);
    tasklist_->unlock(false, stamp);
    api::set_symbol(sim::Sym::kernel);
    api::irq_enable();
  }
  void write_hold(AnyLock& l, const Dist& hold) {
    api::set_symbol(sim::Sym::lock_ops);
    const std::int64_t stamp = l.lock(false);
    api::set_symbol(sim::Sym::kernel);
    api::compute(api::sample(hold));
    api::set_symbol(sim::Sym::lock_ops);
    l.unlock(false, stamp);
    api::set_symbol(sim::Sym::kernel);
  }

  Proc* free_slot(Group& g) {
    for (Proc* s : g.slots)
      if (!s->in_use) return s;
    return nullptr;
  }

  // fork(): copy_process() -- dup_mmap() with the parent's mmap_lock held for write, and
  // anon_vma_fork() under the parent's root anon_vma for write inside it; then the child
  // is linked under tasklist_lock for write (IRQs off) and woken (wake_up_new_task).
  // vfork() (CLONE_VM | CLONE_VFORK) copies no mm: the child borrows the parent's, and the
  // parent sleeps until the child's exec or exit hands it back (wait_for_vfork_done).
  void fork(Proc& parent, Group& g, bool vfork) {
    api::kernel_enter();
    api::set_symbol(sim::Sym::kernel);
    // All of the group's slots live: as make at -jN, wait for one of our children to exit
    // first; with none of ours among them, for another parent's reap.
    Proc* child = nullptr;
    while ((child = free_slot(g)) == nullptr) {
      if (parent.children > 0) {
        reap_one(parent);
        continue;
      }
      g.slot_waiters.push_back(&parent);
      Env::prepare_block();
      asleep(true);
      Env::block();
      asleep(false);
    }
    child->in_use = true;
    api::compute(api::sample(costs_.fork_work));
    if (!vfork) {
      AnyLock& pmm = parent.mm_now();
      api::set_symbol(sim::Sym::lock_ops);
      const std::int64_t mm = pmm.lock(false);
      api::set_symbol(sim::Sym::kernel);
      api::compute(api::sample(costs_.dup_mmap_hold));
      write_hold(*parent.anon_root, costs_.anon_vma_hold);
      api::set_symbol(sim::Sym::lock_ops);
      pmm.unlock(false, mm);
      api::set_symbol(sim::Sym::kernel);
    }
    std::int64_t tl = 0;
    tasklist_write_lock(tl);
    api::compute(api::sample(costs_.tasklist_hold));
    child->parent = &parent;
    child->anon_root = parent.anon_root;
    child->forked = true;
    if (vfork) {
      child->shared_mm = &parent.mm_now();
      child->vfork_parent = &parent;
      parent.vfork_waiting = true;
    }
    ++parent.children;
    tasklist_write_unlock(tl);
    Env::wake(child->task);
    if (api::measuring()) ++forks_;
    while (parent.vfork_waiting) {
      Env::prepare_block();
      if (!parent.vfork_waiting) break;
      asleep(true);
      Env::block();
      asleep(false);
    }
    api::set_symbol(sim::Sym::workload);
    api::kernel_exit();
  }

  // execve(): the old mm goes (exit_mmap -> unlink_anon_vmas under the root anon_vma it
  // shares with its parent, for write), the new image is set up with an anon_vma of its own.
  // A vfork child's old mm is its parent's: exec only hands it back (exec_mm_release).
  void exec(Proc& pr, const Step& s) {
    api::kernel_enter();
    api::set_symbol(sim::Sym::kernel);
    api::compute(api::sample(s.dist));
    if (pr.shared_mm == nullptr) write_hold(*pr.anon_root, costs_.anon_vma_hold);
    pr.anon_root = pr.own_anon.get();
    release_vfork(pr);
    api::compute(api::sample(s.hold));
    if (api::measuring()) ++execs_;
    api::set_symbol(sim::Sym::workload);
    api::kernel_exit();
  }

  // do_exit(): exit_mmap (unlink_anon_vmas under the root anon_vma, for write), then
  // exit_notify() under tasklist_lock for write with IRQs off: a zombie for the parent.
  // A vfork child that never exec'd drops only its reference to the parent's mm (exit_mm),
  // handing it back.
  void do_exit(Proc& pr) {
    if (!tasklist_) return;
    api::kernel_enter();
    api::set_symbol(sim::Sym::kernel);
    api::compute(api::sample(costs_.exit_work));
    if (pr.shared_mm == nullptr) write_hold(*pr.anon_root, costs_.anon_vma_hold);
    release_vfork(pr);
    std::int64_t tl = 0;
    tasklist_write_lock(tl);
    api::compute(api::sample(costs_.tasklist_hold));
    Proc* parent = pr.parent;
    pr.forked = false;
    // forget_original_parent(): the children go to init, which reaps them.
    for (Proc* z = pr.zombies; z != nullptr; z = z->next_zombie) {
      z->parent = nullptr;
      z->in_use = false;
    }
    pr.zombies = nullptr;
    if (pr.children > 0)
      for (auto& c : procs_)
        if (c->parent == &pr) c->parent = nullptr;
    pr.children = 0;
    if (parent != nullptr) {
      pr.next_zombie = parent->zombies;
      parent->zombies = &pr;
    }
    const bool wake_parent = parent != nullptr && parent->reaping;
    if (wake_parent) parent->reaping = false;
    tasklist_write_unlock(tl);
    if (wake_parent) Env::wake(parent->task);
    if (api::measuring()) ++exits_;
    api::set_symbol(sim::Sym::workload);
    // A child is reaped by its parent; one without a parent is gone.
    if (parent == nullptr) pr.in_use = false;
  }

  // complete_vfork_done(): the child lets go of the parent's mm, the parent runs again.
  void release_vfork(Proc& pr) {
    pr.shared_mm = nullptr;
    Proc* parent = pr.vfork_parent;
    if (parent == nullptr) return;
    pr.vfork_parent = nullptr;
    parent->vfork_waiting = false;
    Env::wake(parent->task);
  }

  // wait4(): scan the children under tasklist_lock; take a zombie (release_task: free its
  // slot, waking a parent that waits for one) or sleep until a child exits.
  void reap_one(Proc& pr) {
    for (;;) {
      std::int64_t tl = 0;
      tasklist_write_lock(tl);
      api::compute(api::sample(costs_.reap_work));
      if (Proc* z = pr.zombies) {
        pr.zombies = z->next_zombie;
        z->next_zombie = nullptr;
        z->parent = nullptr;
        z->in_use = false;
        --pr.children;
        tasklist_write_unlock(tl);
        if (api::measuring()) ++reaps_;
        Group& g = groups_[static_cast<std::size_t>(z->group)];
        if (!g.slot_waiters.empty()) {
          Proc* w = g.slot_waiters.back();
          g.slot_waiters.pop_back();
          Env::wake(w->task);
        }
        return;
      }
      pr.reaping = true;
      Env::prepare_block();
      tasklist_write_unlock(tl);
      asleep(true);
      Env::block();
      asleep(false);
    }
  }

  void reap(Proc& pr, std::int64_t n) {
    api::kernel_enter();
    api::set_symbol(sim::Sym::kernel);
    for (std::int64_t k = 0; (n == 0 || k < n) && pr.children > 0; ++k) reap_one(pr);
    api::set_symbol(sim::Sym::workload);
    api::kernel_exit();
  }

  const scenario::ProgramSpec& spec_;
  sim::Guest& guest_;
  Costs costs_;
  std::optional<Dist> exec_work_;
  std::unique_ptr<LockStat[]> lock_stats_, queue_stats_, pipe_stats_;
  std::vector<std::unique_ptr<AnyLock>> locks_;
  LockStat tasklist_stat_;
  std::unique_ptr<AnyLock> tasklist_;
  std::vector<std::unique_ptr<Queue>> queues_;
  std::vector<std::unique_ptr<Pipe>> pipes_;
  std::vector<Group> groups_;
  std::vector<std::unique_ptr<Proc>> procs_;
  std::vector<bool> rw_;  // per lock: an rwsem (read mode applies)
  std::vector<std::uint64_t> counters_, all_counters_;
  std::vector<Histogram> sections_;
  std::int64_t done_at_ = -1;
  std::uint64_t forks_ = 0, exits_ = 0, reaps_ = 0, execs_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_program(const scenario::WorkloadSpec& spec, sim::Guest& guest) {
  return std::make_unique<ProgramWorkload>(spec, guest);
}

}  // namespace pvlock::workload
