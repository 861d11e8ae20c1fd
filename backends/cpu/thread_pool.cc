/*!
 * \file thread_pool.cc
 * \brief The CPU backend's thread pool (parallel.h), built to share the machine.
 *
 * A loop is published as one 64-bit ticket: (generation, participants, units, next unit). Threads
 * claim units with a compare-and-swap of the whole ticket, so a claim succeeds only on the loop
 * that is current, and the caller (slot 0) claims like everyone else. The caller then waits only
 * for units that were claimed and are still running: a worker the OS has not scheduled yet (its
 * core busy with another process, or with another library's spinning threads) holds nothing, so
 * it delays nobody. That is what OpenMP's fork-join cannot do: its barrier waits for every
 * thread of the team, which on a busy core means waiting for a time slice.
 *
 * Idle workers spin for a short time (the gap between two ops of a training step), then sleep on
 * a futex; OMP_WAIT_POLICY=passive makes them sleep at once, =active spin for longer. A child
 * forked while the pool existed gets a new pool (the old one's threads do not exist in it).
 */
#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "parallel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DLARRAY_CPU_RELAX() _mm_pause()
#else
#define DLARRAY_CPU_RELAX() std::atomic_signal_fence(std::memory_order_seq_cst)
#endif

namespace dlarray::cpu {
namespace {

// Ticket layout: generation (20 bits) | participants (12) | units (16) | next unit (16).
constexpr int kUnitBits = 16;
constexpr int kParticipantBits = 12;
constexpr uint64_t kUnitMask = (uint64_t{1} << kUnitBits) - 1;
constexpr uint64_t kParticipantMask = (uint64_t{1} << kParticipantBits) - 1;
constexpr int64_t kMaxUnits = static_cast<int64_t>(kUnitMask);
constexpr int kMaxThreads = static_cast<int>(kParticipantMask);
// Long enough to bridge the Python between two ops of a training step, short enough that a
// worker sharing its core with another process sleeps (and is woken with priority) instead of
// being time-sliced with it.
constexpr long kDefaultSpinUs = 50;
// A worker preempted twice within kContendedWindow sleeps at once (no spinning) for
// kContendedPause.
constexpr std::chrono::milliseconds kContendedWindow(20);
constexpr std::chrono::milliseconds kContendedPause(50);

uint64_t MakeTicket(uint64_t generation, uint64_t participants, uint64_t units) {
  return (generation << (2 * kUnitBits + kParticipantBits)) | (participants << (2 * kUnitBits)) |
         (units << kUnitBits);
}
uint64_t TicketParticipants(uint64_t t) { return (t >> (2 * kUnitBits)) & kParticipantMask; }
uint64_t TicketUnits(uint64_t t) { return (t >> kUnitBits) & kUnitMask; }
uint64_t TicketNext(uint64_t t) { return t & kUnitMask; }

void FutexWait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

// First number of OMP_NUM_THREADS ("4" or "4,2"), or 0.
int ThreadsFromEnvironment() {
  const char* text = std::getenv("OMP_NUM_THREADS");
  if (text == nullptr) return 0;
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (end == text || n < 1) return 0;
  return static_cast<int>(std::min<long>(n, kMaxThreads));
}

int DefaultThreads() {
  if (const int n = ThreadsFromEnvironment()) return n;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return std::min(n, kMaxThreads);
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(std::min<unsigned>(n, kMaxThreads));
}

// How long an idle worker spins before it sleeps: DLARRAY_SPIN_US (microseconds), else from
// OMP_WAIT_POLICY, else kDefaultSpinUs.
std::chrono::nanoseconds SpinTime() {
  if (const char* us = std::getenv("DLARRAY_SPIN_US")) {
    char* end = nullptr;
    const long n = std::strtol(us, &end, 10);
    if (end != us && *end == '\0' && n >= 0) {
      return std::chrono::microseconds(std::min<long>(n, 1000000));
    }
  }
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  if (policy != nullptr && strcasecmp(policy, "passive") == 0) return std::chrono::nanoseconds(0);
  if (policy != nullptr && strcasecmp(policy, "active") == 0) return std::chrono::milliseconds(2);
  return std::chrono::microseconds(kDefaultSpinUs);
}

// Keeps this library mapped for the life of the process: the pool's threads run its code, so a
// dlclose (at exit, or of a failed load) must not unmap it under them.
void PinThisLibrary() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&PinThisLibrary), &info) != 0 && info.dli_fname != nullptr) {
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
}

// Static TLS (initial-exec): a dlopen'ed library's dynamic TLS is what LeakSanitizer (GCC 12)
// misreads in threads that outlive main, crashing its leak check; one flag fits in the static
// TLS that glibc keeps for dlopen'ed libraries.
__attribute__((tls_model("initial-exec"))) thread_local bool t_inside_task = false;

class ThreadPool {
 public:
  explicit ThreadPool(int threads) : threads_(threads), spin_(SpinTime()) {}

  // Never destroyed: workers sleep until the process ends (see PinThisLibrary).
  ~ThreadPool() = delete;

  int threads() const { return threads_.load(std::memory_order_relaxed); }
  std::chrono::nanoseconds spin() const { return spin_; }

  void SetThreads(int threads) {
    std::lock_guard<std::mutex> lock(run_mutex_);
    threads_.store(threads, std::memory_order_relaxed);
  }

  // Lock taken around a loop; fork's prepare handler takes it too (no loop is cut in two).
  std::mutex& run_mutex() { return run_mutex_; }

  void Run(int64_t num_tasks, int threads, TaskFn fn, void* context) {
    std::unique_lock<std::mutex> lock(run_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) {  // another thread's loop has the pool: run this one here
      RunSerially(num_tasks, fn, context);
      return;
    }
    threads = std::min(threads, threads_.load(std::memory_order_relaxed));
    const int64_t units = std::min<int64_t>(num_tasks, kMaxUnits);
    if (threads <= 1 || units <= 1) {
      lock.unlock();
      RunSerially(num_tasks, fn, context);
      return;
    }
    threads = static_cast<int>(std::min<int64_t>(threads, units));
    StartWorkers(threads - 1);
    fn_ = fn;
    context_ = context;
    num_tasks_ = num_tasks;
    units_ = units;
    done_.store(0, std::memory_order_relaxed);
    generation_ = (generation_ + 1) & ((uint64_t{1} << 20) - 1);
    ticket_.store(
        MakeTicket(generation_, static_cast<uint64_t>(threads), static_cast<uint64_t>(units)),
        std::memory_order_release);
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) FutexWakeAll(&epoch_);
    // The caller works as slot 0, then waits for the units still running elsewhere.
    t_inside_task = true;
    int64_t finished = 0;
    int64_t unit;
    while ((unit = Claim(0)) >= 0) {
      RunUnit(unit, 0);
      ++finished;
    }
    done_.fetch_add(finished, std::memory_order_acq_rel);
    t_inside_task = false;
    for (int spins = 0; done_.load(std::memory_order_acquire) < units; ++spins) {
      if (spins < 2000) {
        DLARRAY_CPU_RELAX();
      } else {
        sched_yield();  // a preempted worker holds a unit: let it run
      }
    }
  }

 private:
  static void RunSerially(int64_t num_tasks, TaskFn fn, void* context) {
    const bool nested = t_inside_task;
    t_inside_task = true;
    for (int64_t t = 0; t < num_tasks; ++t) fn(context, t, 0);
    t_inside_task = nested;
  }

  // Claims the next unit of the current loop for the thread of this slot; -1 when none is left
  // (or the slot does not take part in it).
  int64_t Claim(int slot) {
    uint64_t t = ticket_.load(std::memory_order_acquire);
    for (;;) {
      if (static_cast<uint64_t>(slot) >= TicketParticipants(t) || TicketNext(t) >= TicketUnits(t))
        return -1;
      if (ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel,
                                        std::memory_order_acquire)) {
        return static_cast<int64_t>(TicketNext(t));
      }
    }
  }

  // Unit u runs tasks [u * n / units, (u + 1) * n / units): one task per unit unless there are
  // more than kMaxUnits tasks.
  void RunUnit(int64_t unit, int slot) {
    const int64_t begin = unit * num_tasks_ / units_;
    const int64_t end = (unit + 1) * num_tasks_ / units_;
    for (int64_t t = begin; t < end; ++t) fn_(context_, t, slot);
  }

  void StartWorkers(int wanted) {
    if (static_cast<int>(workers_started_) >= wanted) return;
    if (workers_started_ == 0) PinThisLibrary();
    while (static_cast<int>(workers_started_) < wanted) {
      const int slot = static_cast<int>(++workers_started_);
      std::thread(&ThreadPool::WorkerLoop, this, slot).detach();
    }
  }

  void WorkerLoop(int slot) {
    t_inside_task = true;  // loops inside a task run serially
    uint32_t seen = epoch_.load(std::memory_order_acquire);
    long switches = InvoluntarySwitches();
    auto quiet_from = std::chrono::steady_clock::time_point{};
    auto last_preempted = std::chrono::steady_clock::time_point{};
    for (;;) {
      int64_t unit = Claim(slot);
      if (unit >= 0) {
        int64_t finished = 0;
        do {
          RunUnit(unit, slot);
          ++finished;
        } while ((unit = Claim(slot)) >= 0);
        done_.fetch_add(finished, std::memory_order_acq_rel);
        // Preempted since the last loop: the core is shared with another busy thread. Spinning
        // would then only compete with it (and make the OS slice this thread like a CPU hog,
        // so that it holds up loops); sleeping keeps its wake-ups prompt. Spin again once a
        // while has passed without preemption.
        const long now_switches = InvoluntarySwitches();
        if (now_switches != switches) {
          // One preemption now and then is the OS's other work; two close together mean a
          // thread that wants this core all the time.
          const auto now = std::chrono::steady_clock::now();
          if (now_switches - switches >= 2 || now - last_preempted < kContendedWindow) {
            quiet_from = now + kContendedPause;
          }
          switches = now_switches;
          last_preempted = now;
        }
      }
      const bool contended = std::chrono::steady_clock::now() < quiet_from;
      seen = WaitForEpoch(seen, contended ? std::chrono::nanoseconds(0) : spin_);
    }
  }

  // This thread's involuntary context switches so far (preemptions by the OS).
  static long InvoluntarySwitches() {
    struct rusage usage;
    return getrusage(RUSAGE_THREAD, &usage) == 0 ? usage.ru_nivcsw : 0;
  }

  // Waits until epoch_ differs from seen (a new loop): spins for `spin`, then sleeps.
  uint32_t WaitForEpoch(uint32_t seen, std::chrono::nanoseconds spin) {
    uint32_t now = epoch_.load(std::memory_order_acquire);
    if (now != seen) return now;
    if (spin.count() > 0) {
      const auto until = std::chrono::steady_clock::now() + spin;
      for (;;) {
        for (int i = 0; i < 64; ++i) {
          DLARRAY_CPU_RELAX();
          now = epoch_.load(std::memory_order_acquire);
          if (now != seen) return now;
        }
        if (std::chrono::steady_clock::now() >= until) break;
      }
    }
    for (;;) {
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      now = epoch_.load(std::memory_order_seq_cst);
      if (now == seen) FutexWait(&epoch_, seen);
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      now = epoch_.load(std::memory_order_acquire);
      if (now != seen) return now;
    }
  }

  std::atomic<int> threads_;
  const std::chrono::nanoseconds spin_;
  std::mutex run_mutex_;
  unsigned workers_started_ = 0;  // under run_mutex_
  uint64_t generation_ = 0;       // under run_mutex_
  // The current loop: written under run_mutex_ before the ticket is published, read by a thread
  // only after it claimed a unit (the loop cannot end while that unit is unfinished).
  TaskFn fn_ = nullptr;
  void* context_ = nullptr;
  int64_t num_tasks_ = 0;
  int64_t units_ = 0;
  alignas(64) std::atomic<uint64_t> ticket_{0};
  alignas(64) std::atomic<int64_t> done_{0};
  alignas(64) std::atomic<uint32_t> epoch_{0};
  std::atomic<int> sleepers_{0};
};

std::atomic<ThreadPool*> g_pool{nullptr};
std::mutex g_pool_mutex;  // creating the pool

ThreadPool* Pool() {
  ThreadPool* pool = g_pool.load(std::memory_order_acquire);
  if (pool != nullptr) return pool;
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  pool = g_pool.load(std::memory_order_relaxed);
  if (pool == nullptr) {
    pool = new ThreadPool(DefaultThreads());
    g_pool.store(pool, std::memory_order_release);
  }
  return pool;
}

// fork(): no loop may be half-published when the child is made; the child starts a new pool of
// the same size (the parent's workers do not exist in it) and abandons the old one.
ThreadPool* g_forking_pool = nullptr;

void BeforeFork() {
  g_pool_mutex.lock();
  g_forking_pool = g_pool.load(std::memory_order_relaxed);
  if (g_forking_pool != nullptr) g_forking_pool->run_mutex().lock();
}

void AfterForkParent() {
  if (g_forking_pool != nullptr) g_forking_pool->run_mutex().unlock();
  g_pool_mutex.unlock();
}

void AfterForkChild() {
  if (g_forking_pool != nullptr) {
    g_pool.store(new ThreadPool(g_forking_pool->threads()), std::memory_order_release);
  }
  g_pool_mutex.unlock();  // the forking thread is the child's only thread, and holds it
}

const bool g_fork_handlers = pthread_atfork(&BeforeFork, &AfterForkParent, &AfterForkChild) == 0;

}  // namespace

int ParallelThreads() {
  (void)g_fork_handlers;
  if (t_inside_task) return 1;
  return Pool()->threads();
}

int NumThreads() { return Pool()->threads(); }

void SetNumThreads(int threads) { Pool()->SetThreads(std::max(1, std::min(threads, kMaxThreads))); }

std::string WaitPolicy() {
  const auto spin = Pool()->spin();
  if (spin.count() == 0) return "sleep at once";
  return "spin " +
         std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(spin).count()) +
         " us, then sleep (at once while preempted: a core shared with a busy thread)";
}

void RunTasks(int64_t num_tasks, int threads, TaskFn fn, void* context) {
  if (num_tasks <= 0) return;
  Pool()->Run(num_tasks, threads, fn, context);
}

}  // namespace dlarray::cpu
