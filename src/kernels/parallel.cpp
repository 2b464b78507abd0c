// The worker pool behind parallel_for / parallel_each (parallel.h).
//
// One job at a time: the caller publishes a job (a task count and a function of the task index) under the mutex,
// bumps the generation and wakes the workers; every thread, the caller included, claims task indices from one
// atomic counter until none are left. Which thread runs a task never changes what the task computes (chunk bounds
// are a function of the task index), so results do not depend on the schedule. Workers spin for up to kSpin after
// a job before sleeping on the condition variable (spin_while below).
#include "kernels/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define ATTNLENS_NO_THREADS 1
#endif

namespace attnlens::kernels {
namespace {

thread_local bool t_in_task = false;  // set while this thread runs a task: nested calls run inline

#ifdef ATTNLENS_NO_THREADS

std::size_t g_threads = 1;

}  // namespace

bool threads_supported() { return false; }
std::size_t hardware_threads() { return 1; }
std::size_t set_threads(std::size_t) { return g_threads; }
std::size_t threads() { return g_threads; }

namespace {
void run_tasks(std::size_t count, FunctionRef<void(std::size_t)> fn) {
  for (std::size_t i = 0; i < count; ++i) fn(i);
}
}  // namespace

#else

// Runs tasks [0, count) of fn inline, marking the thread as inside a task.
void run_inline(std::size_t count, FunctionRef<void(std::size_t)> fn) {
  const bool outer = t_in_task;
  t_in_task = true;
  try {
    for (std::size_t i = 0; i < count; ++i) fn(i);
  } catch (...) {
    t_in_task = outer;
    throw;
  }
  t_in_task = outer;
}

// Spins while busy() holds, for at most kSpin, then returns (the caller then sleeps on a condition variable).
// Models issue kernel calls back to back (a MobileNetV2 encoder ~60 in 15 ms, a decoder step a few), and waking
// a sleeping thread costs tens of microseconds (a futex, or Atomics.wait/notify between Web Workers).
constexpr std::chrono::microseconds kSpin{500};
template <class Busy>
void spin_while(Busy busy) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  while (busy()) {
    for (int i = 0; i < 64; ++i) {
      if (!busy()) return;
      std::this_thread::yield();
    }
    if (std::chrono::steady_clock::now() >= until) return;
  }
}

class Pool {
 public:
  ~Pool() { resize(0); }

  // Grows or shrinks the pool to `n` workers; returns how many it has (creation may fail, e.g. a WebAssembly
  // build whose Web Worker pool is smaller than asked).
  std::size_t resize(std::size_t n) {
    if (n < workers_.size()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        keep_ = n;
        generation_.fetch_add(1);
      }
      wake_.notify_all();
      for (std::size_t i = n; i < workers_.size(); ++i) workers_[i].join();
      workers_.resize(n);
    }
    while (workers_.size() < n) {
      try {
        const std::size_t index = workers_.size();
        {
          std::lock_guard<std::mutex> lock(mutex_);
          keep_ = std::max(keep_, index + 1);
        }
        workers_.emplace_back([this, index] { work(index); });
      } catch (const std::exception&) {
        std::lock_guard<std::mutex> lock(mutex_);
        keep_ = workers_.size();
        break;
      }
    }
    return workers_.size();
  }

  void run(std::size_t count, FunctionRef<void(std::size_t)> fn) {
    std::lock_guard<std::mutex> call(call_mutex_);  // one job at a time (native callers may share the pool)
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn_ = &fn;
      count_ = count;
      error_ = nullptr;
      failed_.store(false);
      next_.store(0);
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    claim(&fn, count);
    // Every task is claimed; wait until the workers that joined this job have finished theirs. A worker joins
    // only under the mutex while fn_ is set, so once fn_ is cleared below no worker can still be on this job.
    spin_while([this] { return active_.load() != 0; });
    std::exception_ptr error;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [this] { return active_.load() == 0; });
      fn_ = nullptr;
      error = error_;
      error_ = nullptr;
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  // Claims and runs tasks of the current job until none are left.
  void claim(const FunctionRef<void(std::size_t)>* fn, std::size_t count) {
    t_in_task = true;
    for (;;) {
      const std::size_t i = next_.fetch_add(1);
      if (i >= count) break;
      try {
        if (!failed_.load()) (*fn)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
        failed_.store(true);
      }
    }
    t_in_task = false;
  }

  void work(std::size_t index) {
    std::size_t seen = generation_.load();
    for (;;) {
      // Spin a little for the next job, then sleep.
      spin_while([&] { return generation_.load() == seen; });
      const FunctionRef<void(std::size_t)>* fn;
      std::size_t count;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        // (A worker that starts after a shrink already asked it to leave sees keep_ first.)
        wake_.wait(lock, [&] { return generation_.load() != seen || index >= keep_; });
        seen = generation_.load();
        if (index >= keep_) return;
        if (fn_ == nullptr) continue;
        fn = fn_;
        count = count_;
        active_.fetch_add(1);
      }
      claim(fn, count);
      if (active_.fetch_sub(1) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_all();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex call_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<std::size_t> generation_{0};
  std::size_t keep_ = 0;  // workers with index ≥ keep_ exit
  const FunctionRef<void(std::size_t)>* fn_ = nullptr;
  std::size_t count_ = 0;
  std::atomic<std::size_t> next_{0}, active_{0};
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

Pool& pool() {
  static Pool p;
  return p;
}

std::atomic<std::size_t> g_threads{1};

}  // namespace

bool threads_supported() { return true; }

std::size_t hardware_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return std::clamp<std::size_t>(hw == 0 ? 1 : hw, 1, kMaxThreads);
}

std::size_t set_threads(std::size_t n) {
  const std::size_t want = n == 0 ? hardware_threads() : std::min(n, kMaxThreads);
  const std::size_t have = pool().resize(want - 1) + 1;
  g_threads.store(have, std::memory_order_release);
  return have;
}

std::size_t threads() { return g_threads.load(std::memory_order_acquire); }

namespace {
void run_tasks(std::size_t count, FunctionRef<void(std::size_t)> fn) {
  if (count == 1) return fn(0);  // a list of one: its kernels may still split
  if (count == 0 || t_in_task || threads() <= 1) return run_inline(count, fn);
  pool().run(count, fn);
}
}  // namespace

#endif  // ATTNLENS_NO_THREADS

void parallel_for(std::size_t n, std::size_t grain, FunctionRef<void(std::size_t, std::size_t)> fn,
                  std::size_t max_chunks) {
  if (n == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t units = (n + grain - 1) / grain;
  const std::size_t chunks = std::min({units, max_chunks, t_in_task ? std::size_t{1} : threads()});
  if (chunks <= 1) return fn(0, n);
  // Chunk c covers units [c·units/chunks, (c+1)·units/chunks).
  run_tasks(chunks, [&](std::size_t c) {
    const std::size_t begin = c * units / chunks * grain;
    const std::size_t end = std::min(n, (c + 1) * units / chunks * grain);
    if (begin < end) fn(begin, end);
  });
}

void parallel_each(std::size_t n, FunctionRef<void(std::size_t)> fn) { run_tasks(n, fn); }

std::size_t useful_chunks(std::size_t work) {
  if (t_in_task) return 1;
  return std::max<std::size_t>(1, std::min(threads(), work / kParallelMinWork));
}

}  // namespace attnlens::kernels
