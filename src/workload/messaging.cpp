// SPDX-License-Identifier: GPL-2.0-only
#include "workload/messaging.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pvlock/lock/registry.hpp"
#include "pvlock/lock/rwsem.hpp"
#include "pvlock/stat/lock_stat.hpp"
#include "scenario/parse.hpp"
#include "sim/guest/sim_env.hpp"
#include "workload/estimates.hpp"
#include "workload/guest_api.hpp"
#include "workload/lock_watch.hpp"

namespace pvlock::workload {
namespace {

struct MessagingParams {
  int groups = 10;
  int senders = 20;
  int receivers = 20;
  int loops = 100;
  scenario::Dist send_compute{}, send_hold{}, recv_compute{}, recv_hold{};
  int capacity = 10000;
  // Process lifecycle (fork, exit, wait), off by default. Durations: see make_messaging.
  bool lifecycle = false;
  bool lifecycle_runs = false;  // whole runs back to back instead of the steady state
  scenario::Dist fork_work{}, fork_anon_vma_hold{}, exit_work{}, exit_anon_vma_hold{},
      tasklist_hold{};
  double reap_scan_ns = 20;
  // File-backed VMAs of every process (the binary's and its shared libraries' mappings), in
  // address order, mapping `mapped_files` files in consecutive runs; fork and exit take the
  // file's i_mmap_rwsem for write once per VMA. 0: not modelled.
  int file_vmas = 0;
  int mapped_files = 1;
  scenario::Dist i_mmap_hold{};
};

using Env = sim::SimEnv;

// tasklist_lock. In the kernel a qrwlock: fork and exit take it for write with IRQs off
// (write_lock_irq), the parent's wait() for read. pvlock has no rwlock, so this is the
// guest's spinlock (the qrwlock's own wait_lock is one) taken exclusively by both sides.
// With a single reader in this workload -- the benchmark's parent -- nothing is lost but
// qrwlock's reader/writer queueing order. Type-erased so that the workload is not
// instantiated once per (pipe lock x spinlock) pair; the virtual call allocates nothing.
class TasklistLock {
 public:
  virtual ~TasklistLock() = default;
  virtual void lock() = 0;
  virtual void unlock() = 0;
  LockStat stat;
  sim::LockWatch watch;

 protected:
  std::int64_t stamp_ = 0;  // one holder at a time
};

template <class Spinlock>
class alignas(64) TasklistLockOf final : public TasklistLock {
 public:
  explicit TasklistLockOf(const std::string& vm) {
    stat.name = "messaging.tasklist_lock";
    watch = make_lock_watch(lock_,
                            std::string(Spinlock::kName) + " messaging.tasklist_lock (" + vm + ")");
  }
  void lock() override {
    api::lock_waiting(watch);
    stamp_ = stat_lock<Env>(lock_, stat);
    api::lock_acquired(watch);
  }
  void unlock() override {
    api::lock_releasing(watch);
    stat_unlock<Env>(lock_, stat, stamp_);
  }

 private:
  alignas(64) Spinlock lock_;
};

// An rwsem that every process of the benchmark takes for write at fork and exit, with its
// lock_stat row, its watchdog view and a self-check count of its writers.
struct alignas(64) SharedRwsem {
  RwSem<Env> sem;
  LockStat stat;
  sim::LockWatch watch;
  int holders = 0;  // more than one: the lock did not exclude

  void set_up(std::string name, sim::Guest& g) {
    stat.name = std::move(name);
    g.register_lock_stat(stat);
    stat_wait_lock(sem, stat);
    watch = make_lock_watch(
        sem, std::string(RwSem<Env>::kName) + " " + stat.name + " (" + g.name() + ")");
  }
};

template <class Mutex>
class Messaging final : public Workload {
 public:
  Messaging(const MessagingParams& p, sim::Guest& g, std::unique_ptr<TasklistLock> tasklist)
      : p_(p), guest_(g) {
    const int pipes = p.groups * p.receivers;
    pipes_.reserve(static_cast<std::size_t>(pipes));
    for (int i = 0; i < pipes; ++i) {
      pipes_.push_back(std::make_unique<Pipe>());
      Pipe& pipe = *pipes_.back();
      pipe.stat.name = "messaging.pipe_mutex[" + std::to_string(i) + "]";
      g.register_lock_stat(pipe.stat);
      stat_wait_lock(pipe.mutex, pipe.stat);
      pipe.watch = make_lock_watch(pipe.mutex, pipe.stat.name + " (" + g.name() + ")");
    }
    for (auto& pipe : pipes_) pipe->blocked_writers.reserve(static_cast<std::size_t>(p.senders));
    received_.assign(static_cast<std::size_t>(pipes), 0);
    if (p.lifecycle) set_up_lifecycle(g, std::move(tasklist));
    // Tasks are spread over the vCPUs in creation order (fork() + the scheduler's balancing).
    int next_cpu = 0;
    for (int grp = 0; grp < p.groups; ++grp) {
      for (int r = 0; r < p.receivers; ++r) {
        const int pipe = grp * p.receivers + r;
        const int cpu = next_cpu++ % g.vcpu_count();
        const std::string name = "receiver/" + std::to_string(pipe);
        if (p.lifecycle) {
          const int c = grp * per_group() + r;
          children_[static_cast<std::size_t>(c)].task = &g.create_task(
              name, cpu, [this, c] { child(c); }, true);
        } else {
          g.create_task(name, cpu, [this, pipe] { receiver(pipe); });
        }
      }
      for (int s = 0; s < p.senders; ++s) {
        const int cpu = next_cpu++ % g.vcpu_count();
        const std::string name = "sender/" + std::to_string(grp) + "." + std::to_string(s);
        if (p.lifecycle) {
          const int c = grp * per_group() + p.receivers + s;
          children_[static_cast<std::size_t>(c)].task = &g.create_task(
              name, cpu, [this, c] { child(c); }, true);
        } else {
          g.create_task(name, cpu, [this, grp] { sender(grp); });
        }
      }
    }
    // The children are forked (`true`: under a CFS guest they start behind the parent,
    // START_DEBIT); the parent is not.
    if (p.lifecycle)
      life_->parent = &g.create_task("parent", next_cpu % g.vcpu_count(), [this] { parent(); });
  }
  double score() const override {
    std::uint64_t total = 0;
    for (auto x : received_) total += x;
    return static_cast<double>(total) / guest_.sim().measured_seconds();
  }
  std::string unit() const override { return "msgs/s"; }
  std::optional<double> done() const override { return static_cast<double>(all_received_); }
  void report(nlohmann::ordered_json& vm) const override {
    const double rate = score();
    const double msgs = static_cast<double>(p_.groups) * p_.senders * p_.receivers * p_.loops;
    // perf bench's "Total time" for -g groups and `loops` rounds at the measured rate.
    vm["equivalent_run_s"] = rate > 0 ? msgs / rate : 0.0;
    if (p_.lifecycle) {
      // Measured window only.
      vm["forks"] = life_->forks;
      vm["exits"] = life_->exits;
      vm["reaps"] = life_->reaps;
      vm["lifecycle_violations"] = life_->violations;
    }
  }

 private:
  struct alignas(64) Pipe {
    Mutex mutex;
    LockStat stat;
    sim::LockWatch watch;    // liveness watchdog: holder, waiters, last unlocker
    std::int64_t stamp = 0;  // hold stamp of the current holder (lock_stat's held_lock)
    // Protected by the mutex (plain: only touched by the holder).
    int count = 0;
    sim::Task* waiting_reader = nullptr;
    std::vector<sim::Task*> blocked_writers;
  };

  // One child process of the benchmark (a task_struct slot, reused by the next fork into
  // its group once the parent has reaped it). The flags are protected by tasklist_lock,
  // except `running`, which only the parent sets and the child clears at exit.
  struct Child {
    sim::Task* task = nullptr;
    int group = 0;
    int pipe = -1;             // receivers: the pipe they own; senders: -1
    int loops = 0;             // rounds of this incarnation
    bool running = false;      // forked and released by the group's "go"
    bool zombie = false;       // exited, not yet reaped
    int prev = -1, next = -1;  // the parent's children list, in fork order
  };
  struct alignas(64) Lifecycle {
    // The root anon_vma of the parent's (hence every child's) anonymous memory: taken for
    // write by anon_vma_fork() at fork and by unlink_anon_vmas() at exit.
    SharedRwsem anon_vma;
    // One address_space per mapped file: its i_mmap_rwsem, shared by every process that
    // maps the file (it guards the interval tree of all their VMAs of the file).
    std::vector<std::unique_ptr<SharedRwsem>> i_mmap;
    std::unique_ptr<TasklistLock> tasklist;
    sim::Task* parent = nullptr;
    bool parent_waiting = false;  // in wait(), asleep (tasklist_lock)
    int head = -1, tail = -1;     // the parent's children list (tasklist_lock)
    std::vector<int> live;        // per group slot: children forked and not yet reaped
    std::uint64_t forks = 0, exits = 0, reaps = 0;
    // Self-checks (whole run): two holders of a lock at once, or a group slot forked again
    // while one of its pipes still held messages or a sleeping reader.
    int tasklist_holders = 0;
    std::uint64_t violations = 0;
  };

  int per_group() const { return p_.receivers + p_.senders; }

  void set_up_lifecycle(sim::Guest& g, std::unique_ptr<TasklistLock> tasklist) {
    life_ = std::make_unique<Lifecycle>();
    Lifecycle& l = *life_;
    l.anon_vma.set_up("messaging.anon_vma_root", g);
    for (int f = 0; f < (p_.file_vmas > 0 ? p_.mapped_files : 0); ++f) {
      l.i_mmap.push_back(std::make_unique<SharedRwsem>());
      l.i_mmap.back()->set_up("messaging.i_mmap_rwsem[" + std::to_string(f) + "]", g);
    }
    l.tasklist = std::move(tasklist);
    g.register_lock_stat(l.tasklist->stat);
    l.live.assign(static_cast<std::size_t>(p_.groups), 0);
    children_.resize(static_cast<std::size_t>(p_.groups * per_group()));
    for (int grp = 0; grp < p_.groups; ++grp)
      for (int k = 0; k < per_group(); ++k) {
        Child& ch = children_[static_cast<std::size_t>(grp * per_group() + k)];
        ch.group = grp;
        ch.pipe = k < p_.receivers ? grp * p_.receivers + k : -1;
      }
    if (p_.lifecycle_runs) return;
    for (int grp = 0; grp < p_.groups; ++grp) {
      const long long share = static_cast<long long>(p_.loops) * (grp + 1) / p_.groups;
      for (int k = 0; k < per_group(); ++k)
        preforked(grp * per_group() + k, static_cast<int>(std::max(1LL, share)));
    }
  }

  // pipe_lock()/pipe_unlock(): mutex_lock/mutex_unlock through the lock_stat wrapper.
  static void lock(Pipe& p) {
    api::lock_waiting(p.watch);
    p.stamp = stat_lock<Env>(p.mutex, p.stat);
    api::lock_acquired(p.watch);
  }
  static void unlock(Pipe& p) {
    api::lock_releasing(p.watch);
    stat_unlock<Env>(p.mutex, p.stat, p.stamp);
  }

  // One message to each receiver of the group.
  void send_round(int grp) {
    for (int r = 0; r < p_.receivers; ++r) {
      Pipe& pipe = *pipes_[static_cast<std::size_t>(grp * p_.receivers + r)];
      api::kernel_enter();                         // write(2)
      api::compute(api::sample(p_.send_compute));  // syscall entry, copy from user
      for (;;) {
        lock(pipe);
        if (pipe.count < p_.capacity) break;
        // pipe_write(): full -> sleep on the pipe's wait queue until a reader drains it.
        pipe.blocked_writers.push_back(&Env::self());
        Env::prepare_block();
        unlock(pipe);
        Env::block();
      }
      api::compute(api::sample(p_.send_hold));  // copy into the pipe buffer
      ++pipe.count;
      sim::Task* reader = pipe.waiting_reader;
      pipe.waiting_reader = nullptr;
      unlock(pipe);
      if (reader != nullptr) Env::wake(reader);
      api::kernel_exit();
      api::progress();  // one message sent (a timestamp store, no simulated time)
    }
  }

  void sender(int grp) {
    for (;;) send_round(grp);
  }

  // One read(); false if the pipe was empty and we slept (the caller reads again).
  bool receive_one(int index) {
    Pipe& pipe = *pipes_[static_cast<std::size_t>(index)];
    api::compute(api::sample(p_.recv_compute));
    lock(pipe);
    if (pipe.count == 0) {
      // pipe_read(): empty -> wait_event on the pipe; set our state before dropping the
      // mutex so a writer's wake cannot be lost.
      pipe.waiting_reader = &Env::self();
      Env::prepare_block();
      unlock(pipe);
      Env::block();
      return false;
    }
    api::compute(api::sample(p_.recv_hold));  // copy out of the pipe buffer
    --pipe.count;
    sim::Task* writer = nullptr;
    if (!pipe.blocked_writers.empty()) {
      writer = pipe.blocked_writers.back();
      pipe.blocked_writers.pop_back();
    }
    unlock(pipe);
    if (writer != nullptr) Env::wake(writer);
    ++all_received_;
    if (api::measuring()) ++received_[static_cast<std::size_t>(index)];
    api::progress();  // one message received
    return true;
  }

  void receiver(int index) {
    for (;;) read_message(index);
  }

  // One read(2): pipe_read() sleeps on an empty pipe and reads again when woken, all
  // inside the system call.
  void read_message(int index) {
    api::kernel_enter();
    while (!receive_one(index)) {
    }
    api::kernel_exit();
  }

  // ---- Process lifecycle ------------------------------------------------------------------

  // down_write() ... up_write() of a shared rwsem, held for `hold` (anon_vma_lock_write()
  // of the root anon_vma, i_mmap_lock_write() of a file's mapping).
  void write_hold(SharedRwsem& r, const scenario::Dist& hold) {
    api::lock_waiting(r.watch);
    const std::int64_t stamp = stat_lock<Env>(r.sem, r.stat);
    api::lock_acquired(r.watch);
    if (++r.holders > 1) ++life_->violations;
    api::compute(api::sample(hold));
    --r.holders;
    api::lock_releasing(r.watch);
    stat_unlock<Env>(r.sem, r.stat, stamp);
  }

  // dup_mmap() at fork (vma_interval_tree_insert_after) and free_pgtables() ->
  // unlink_file_vma() at exit (vma_interval_tree_remove) take each file-backed VMA's
  // mapping->i_mmap_rwsem for write (i_mmap_lock_write), one VMA at a time in address order.
  // Every process of the benchmark maps the same files, so all forks and exits meet there.
  void file_vmas_write() {
    Lifecycle& l = *life_;
    for (int v = 0; v < p_.file_vmas; ++v)
      write_hold(*l.i_mmap[static_cast<std::size_t>(static_cast<long long>(v) * p_.mapped_files /
                                                    p_.file_vmas)],
                 p_.i_mmap_hold);
  }

  void tasklist_lock() {
    Lifecycle& l = *life_;
    l.tasklist->lock();
    if (++l.tasklist_holders > 1) ++l.violations;
  }
  void tasklist_unlock() {
    Lifecycle& l = *life_;
    --l.tasklist_holders;
    l.tasklist->unlock();
  }

  // A child slot's life, over and over: wait to be forked and released, run the
  // benchmark's sender or receiver for its loops, exit, stay a zombie until reaped.
  void child(int c) {
    Child& ch = children_[static_cast<std::size_t>(c)];
    for (;;) {
      while (!ch.running) {
        Env::prepare_block();
        if (ch.running) break;
        Env::block();
      }
      api::set_symbol(sim::Sym::workload);
      api::kernel_exit();  // ret_from_fork (a preforked child starts in user mode too)
      if (ch.pipe >= 0) {
        // A receiver reads what its group's senders write: senders x loops messages.
        const long long want = static_cast<long long>(p_.senders) * ch.loops;
        for (long long got = 0; got < want; ++got) read_message(ch.pipe);
      } else {
        for (int i = 0; i < ch.loops; ++i) send_round(ch.group);
      }
      exit_child(ch);
    }
  }

  // What fork and exit share: `work` outside the locks, the root anon_vma for write for
  // `anon_hold`, then tasklist_lock for write with IRQs off, held for its critical section's
  // time and left held for the caller's list update (it unlocks and enables IRQs).
  void work_anon_vma_then_tasklist(const scenario::Dist& work, const scenario::Dist& anon_hold) {
    api::compute(api::sample(work));
    write_hold(life_->anon_vma, anon_hold);
    file_vmas_write();
    api::irq_disable();
    tasklist_lock();
    api::compute(api::sample(p_.tasklist_hold));
  }

  // do_exit() of a child.
  void exit_child(Child& ch) {
    Lifecycle& l = *life_;
    api::kernel_enter();  // exit(2); do_exit() never returns to user mode
    api::set_symbol(sim::Sym::kernel);
    // The rest of do_exit() outside these locks; exit_mm() -> exit_mmap() ->
    // free_pgtables() -> unlink_anon_vmas(); then exit_notify(): under
    // write_lock_irq(&tasklist_lock) become a zombie and wake the parent sleeping in wait()
    // (do_notify_parent).
    work_anon_vma_then_tasklist(p_.exit_work, p_.exit_anon_vma_hold);
    ch.running = false;
    ch.zombie = true;
    sim::Task* parent = l.parent_waiting ? l.parent : nullptr;
    l.parent_waiting = false;
    if (parent != nullptr) Env::wake(parent);
    tasklist_unlock();
    api::irq_enable();
    if (api::measuring()) ++l.exits;
    api::set_symbol(sim::Sym::workload);
    // A zombie does nothing until its slot is forked again: not stuck.
    Env::self().progress_tracked = false;
  }

  // fork() of child slot c by the parent: copy_process().
  void fork_child(int c, int loops) {
    Lifecycle& l = *life_;
    Child& ch = children_[static_cast<std::size_t>(c)];
    // Dup task_struct, mm, files outside these locks; dup_mmap() -> anon_vma_fork(): the
    // child's anon_vmas join the parent's tree; copy_process(): link the child into the
    // parent's children under write_lock_irq(&tasklist_lock).
    api::kernel_enter();  // fork(2)
    work_anon_vma_then_tasklist(p_.fork_work, p_.fork_anon_vma_hold);
    ch.loops = loops;
    ch.zombie = false;
    link_child(c);
    tasklist_unlock();
    api::irq_enable();
    ++l.live[static_cast<std::size_t>(ch.group)];
    if (api::measuring()) ++l.forks;
    api::kernel_exit();
    api::progress();
  }

  void fork_group(int grp, int loops) {
    for (int r = 0; r < p_.receivers; ++r) {
      const Pipe& pipe = *pipes_[static_cast<std::size_t>(grp * p_.receivers + r)];
      if (pipe.count != 0 || pipe.waiting_reader != nullptr || !pipe.blocked_writers.empty())
        ++life_->violations;
    }
    for (int k = 0; k < per_group(); ++k) fork_child(grp * per_group() + k, loops);
  }
  // The "go" byte on the wake-up pipe: the group's children start.
  void start_group(int grp) {
    for (int k = 0; k < per_group(); ++k) {
      Child& ch = children_[static_cast<std::size_t>(grp * per_group() + k)];
      ch.running = true;
      Env::wake(ch.task);
    }
  }

  // wait(): scan the children list for a zombie under read_lock(&tasklist_lock)
  // (wait_consider_task per child), reap it (release_task: write_lock_irq), or sleep until
  // an exiting child wakes us. Returns the reaped slot.
  int wait_child() {
    Lifecycle& l = *life_;
    api::kernel_enter();  // wait4(2)
    for (;;) {
      tasklist_lock();  // read_lock(): IRQs stay on
      int examined = 0;
      int found = -1;
      for (int c = l.head; c >= 0; c = children_[static_cast<std::size_t>(c)].next) {
        ++examined;
        if (children_[static_cast<std::size_t>(c)].zombie) {
          found = c;
          break;
        }
      }
      api::compute(std::llround(p_.reap_scan_ns * examined));
      if (found >= 0) {
        tasklist_unlock();
        api::irq_disable();
        tasklist_lock();
        api::compute(api::sample(p_.tasklist_hold));
        Child& ch = children_[static_cast<std::size_t>(found)];
        if (ch.prev >= 0)
          children_[static_cast<std::size_t>(ch.prev)].next = ch.next;
        else
          l.head = ch.next;
        if (ch.next >= 0)
          children_[static_cast<std::size_t>(ch.next)].prev = ch.prev;
        else
          l.tail = ch.prev;
        ch.prev = ch.next = -1;
        ch.zombie = false;
        tasklist_unlock();
        api::irq_enable();
        if (api::measuring()) ++l.reaps;
        api::kernel_exit();
        api::progress();
        return found;
      }
      l.parent_waiting = true;
      Env::prepare_block();
      tasklist_unlock();
      // Waiting for children that are still running is not being stuck.
      Env::self().progress_tracked = false;
      Env::block();
    }
  }

  // The benchmark's parent. Steady state (default): the groups exist from the start, as
  // forked before the window, group g's first incarnation running (g + 1)/groups of the
  // loops so that group turnovers are spread as in the steady state; each group slot whose
  // children are all reaped is forked again. Whole runs (lifecycle_runs): fork every group,
  // one "go", reap them all, and again -- perf bench run back to back.
  void parent() {
    api::set_symbol(sim::Sym::kernel);
    if (p_.lifecycle_runs) {
      for (;;) {
        for (int grp = 0; grp < p_.groups; ++grp) fork_group(grp, p_.loops);
        for (int grp = 0; grp < p_.groups; ++grp) start_group(grp);
        for (int n = 0; n < p_.groups * per_group(); ++n) {
          const int c = wait_child();
          --life_->live[static_cast<std::size_t>(children_[static_cast<std::size_t>(c)].group)];
        }
      }
    }
    for (;;) {
      const int c = wait_child();
      const int grp = children_[static_cast<std::size_t>(c)].group;
      if (--life_->live[static_cast<std::size_t>(grp)] == 0) {
        fork_group(grp, p_.loops);
        start_group(grp);
      }
    }
  }

  // The steady state's initial children: linked into the parent's list and running, with
  // none of the parent's fork work (it happened before the run).
  void preforked(int c, int loops) {
    Lifecycle& l = *life_;
    Child& ch = children_[static_cast<std::size_t>(c)];
    ch.loops = loops;
    ch.running = true;
    link_child(c);
    ++l.live[static_cast<std::size_t>(ch.group)];
  }

  // Appends child slot c to the parent's children list (fork order); the caller holds
  // tasklist_lock, or the run has not started.
  void link_child(int c) {
    Lifecycle& l = *life_;
    Child& ch = children_[static_cast<std::size_t>(c)];
    ch.next = -1;
    ch.prev = l.tail;
    if (l.tail >= 0)
      children_[static_cast<std::size_t>(l.tail)].next = c;
    else
      l.head = c;
    l.tail = c;
  }

  MessagingParams p_;
  sim::Guest& guest_;
  std::vector<std::unique_ptr<Pipe>> pipes_;
  std::vector<std::uint64_t> received_;  // measured window, per receiver
  std::uint64_t all_received_ = 0;       // since time 0
  std::unique_ptr<Lifecycle> life_;
  std::vector<Child> children_;
};

scenario::Dist constant(double ns) {
  scenario::Dist d;
  d.mean = ns;
  return d;
}

}  // namespace

std::unique_ptr<Workload> make_messaging(const scenario::WorkloadSpec& spec, sim::Guest& guest) {
  static constexpr std::array<std::string_view, 21> kKnown = {
      "groups",           "senders",
      "receivers",        "loops",
      "send_compute_ns",  "send_hold_ns",
      "recv_compute_ns",  "recv_hold_ns",
      "pipe_capacity",    "lock",
      "lifecycle",        "lifecycle_runs",
      "fork_ns",          "fork_anon_vma_hold_ns",
      "exit_ns",          "exit_anon_vma_hold_ns",
      "tasklist_hold_ns", "reap_scan_ns",
      "file_vmas",        "mapped_files",
      "i_mmap_hold_ns"};
  namespace E = estimates::messaging;
  MessagingParams p;
  p.groups = static_cast<int>(scenario::param_int(spec, "groups", 10, 1, 4000));
  p.senders = static_cast<int>(scenario::param_int(spec, "senders", 20, 1, 1000));
  p.receivers = static_cast<int>(scenario::param_int(spec, "receivers", 20, 1, 1000));
  p.loops = static_cast<int>(scenario::param_int(spec, "loops", 100, 1, 1'000'000));
  // Costs: estimates (workload/estimates.hpp, docs/costs.md).
  p.send_compute = scenario::param_dist(spec, "send_compute_ns", constant(E::send_compute_ns));
  p.send_hold = scenario::param_dist(spec, "send_hold_ns", constant(E::send_hold_ns));
  p.recv_compute = scenario::param_dist(spec, "recv_compute_ns", constant(E::recv_compute_ns));
  p.recv_hold = scenario::param_dist(spec, "recv_hold_ns", constant(E::recv_hold_ns));
  p.capacity = static_cast<int>(scenario::param_int(spec, "pipe_capacity", 10000, 1, 1 << 24));
  // Process lifecycle. Lock holds are estimates for exit (anon_vma root
  // 2 us, tasklist_lock 1 us, wait() 0.02 us per child scanned), used for fork's holds too.
  // fork_ns and exit_ns, the work outside these locks, are estimates of this model (the
  // order of lmbench's ~100 us fork+exit of a small process), not from the seed.
  p.lifecycle = scenario::param_bool(spec, "lifecycle", false);
  p.lifecycle_runs = scenario::param_bool(spec, "lifecycle_runs", false);
  p.fork_work = scenario::param_dist(spec, "fork_ns", constant(E::fork_ns));
  p.fork_anon_vma_hold =
      scenario::param_dist(spec, "fork_anon_vma_hold_ns", constant(E::fork_anon_vma_hold_ns));
  p.exit_work = scenario::param_dist(spec, "exit_ns", constant(E::exit_ns));
  p.exit_anon_vma_hold =
      scenario::param_dist(spec, "exit_anon_vma_hold_ns", constant(E::exit_anon_vma_hold_ns));
  p.tasklist_hold = scenario::param_dist(spec, "tasklist_hold_ns", constant(E::tasklist_hold_ns));
  p.reap_scan_ns = scenario::param_double(spec, "reap_scan_ns", E::reap_scan_ns, 0, 1e6);
  p.file_vmas = static_cast<int>(scenario::param_int(spec, "file_vmas", 0, 0, 4096));
  p.mapped_files = static_cast<int>(scenario::param_int(spec, "mapped_files", 1, 1, 4096));
  p.i_mmap_hold = scenario::param_dist(spec, "i_mmap_hold_ns", constant(E::i_mmap_hold_ns));
  const std::string lock = scenario::param_string(spec, "lock", "mutex", {});
  scenario::reject_unknown_params(spec, kKnown);
  if (p.file_vmas > 0 && !p.lifecycle)
    scenario::fail_at(spec.params.at("file_vmas").where,
                      "file_vmas needs lifecycle = true (fork and exit take the i_mmap_rwsem)");
  if (p.file_vmas > 0 && p.mapped_files > p.file_vmas)
    scenario::fail_at(spec.params.at("mapped_files").where,
                      "mapped_files (" + std::to_string(p.mapped_files) +
                          ") cannot exceed file_vmas (" + std::to_string(p.file_vmas) + ")");
  std::unique_ptr<TasklistLock> tasklist;
  if (p.lifecycle) {
    with_lock<sim::SimEnv>(guest.lock_name, [&]<class L>(const LockInfo& info) {
      if (info.kind != LockKind::spin)
        scenario::fail_at(
            spec.params.at("lifecycle").where,
            "tasklist_lock is a spinning lock; guest lock '" + guest.lock_name + "' is not one");
      tasklist = std::make_unique<TasklistLockOf<L>>(guest.name());
    });
    if (tasklist == nullptr)
      scenario::fail_at(spec.where, "no lock named '" + guest.lock_name + "'");
  }
  std::unique_ptr<Workload> out;
  const bool found = with_lock<sim::SimEnv>(lock, [&]<class L>(const LockInfo& info) {
    if (info.kind == LockKind::spin && !info.negative_control)
      scenario::fail_at(spec.params.at("lock").where,
                        "pipe->mutex must be a sleeping lock (e.g. mutex), not " + lock);
    out = std::make_unique<Messaging<L>>(p, guest, std::move(tasklist));
  });
  if (!found) scenario::fail_at(spec.where, "no lock named '" + lock + "'");
  return out;
}

}  // namespace pvlock::workload
