// Threads for the kernels and for lists of inputs: one small pool of workers that the calling thread joins.
//
// The engine is single-threaded unless a caller asks (set_threads). The native build and the threaded WebAssembly
// build (wasm/CMakeLists.txt, ATTNLENS_WASM_THREADS) can use up to max_threads(); the default WebAssembly build
// has no threads and max_threads() is 1 there.
//
// Results never depend on the thread count. parallel_for splits a range into chunks that are a pure function of
// the range, the grain and threads(); the kernels split only where every output element is computed by exactly the
// code a single thread would run (whole GEMM register tiles, whole weight panels, whole output rows), so one thread
// and eight give the same bits (tests/cpp/test_parallel.cpp checks it).
//
// A call made from inside a task (a list of sentences whose kernels would split again) runs on the calling thread:
// one level of parallelism at a time, never oversubscription. An exception thrown by a task is rethrown on the
// caller once every task of the call has finished.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace attnlens::kernels {

// Whether this build has threads (false for the default WebAssembly module), and the hardware's thread count.
constexpr std::size_t kMaxThreads = 16;
bool threads_supported();
std::size_t hardware_threads();
// Sets the threads the engine uses from now on, the calling thread included: 0 means hardware_threads(), values
// above kMaxThreads are capped, and a build without threads stays at 1. Returns the count in force (fewer when
// the platform refuses to start a thread). Not to be called while a parallel call is running.
std::size_t set_threads(std::size_t n);
std::size_t threads();

// A non-owning reference to a callable (valid for the duration of the call it is passed to).
template <class Signature>
class FunctionRef;
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same<std::decay_t<F>, FunctionRef>::value>>
  FunctionRef(F&& f)  // NOLINT: implicit on purpose, like std::function
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, Args... args) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(args...); }) {}
  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

// Runs fn(begin, end) over [0, n) in at most min(threads(), max_chunks) contiguous chunks whose bounds are
// multiples of `grain` (except the end). Returns when every chunk is done.
void parallel_for(std::size_t n, std::size_t grain, FunctionRef<void(std::size_t, std::size_t)> fn,
                  std::size_t max_chunks = kMaxThreads);

// Runs fn(i) for every i in [0, n), each index once, on up to threads() threads taking the next index as they
// free up (for items of uneven cost, such as sentences). Returns when all are done.
void parallel_each(std::size_t n, FunctionRef<void(std::size_t)> fn);

// How many chunks a product of `work` multiply-adds is worth splitting into: threads() when each chunk keeps at
// least kParallelMinWork, fewer otherwise, 1 inside a task. Waking a worker costs microseconds; below that size
// the split would cost more than it saves.
constexpr std::size_t kParallelMinWork = std::size_t{1} << 17;
std::size_t useful_chunks(std::size_t work);

}  // namespace attnlens::kernels
