// Interpreter exit with threads inside binding calls, and objects that were never initialised.
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "binding.h"

namespace dlarray {
namespace {

std::atomic<int> in_flight{0};     // guarded calls running, all threads
std::atomic<bool> exiting{false};  // the exit hook has begun
thread_local int depth = 0;        // guarded calls running on this thread (nested via Python)
thread_local bool exiting_thread = false;

// Python's atexit runs this before finalization begins, with the GIL held.
void WaitForGuardedCalls() {
  exiting_thread = true;
  exiting.store(true);
  py::gil_scoped_release release;  // the waited-for threads may need the GIL to finish
  while (in_flight.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

[[noreturn]] void Park() {
  (void)PyEval_SaveThread();
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// A forked child has only the forking thread: the parent's other calls are not its own.
void OnForkChild() { in_flight.store(depth); }

const bool fork_handler_registered = pthread_atfork(nullptr, nullptr, &OnForkChild) == 0;

}  // namespace

CallGuard::CallGuard() {
  (void)fork_handler_registered;
  if (depth == 0 && exiting.load() && !exiting_thread) Park();
  ++depth;
  in_flight.fetch_add(1);
}

CallGuard::~CallGuard() {
  in_flight.fetch_sub(1);
  --depth;
}

void RegisterExitHook() {
  py::module_::import("atexit").attr("register")(py::cpp_function(&WaitForGuardedCalls));
}

void ThrowNotConstructed(const char* type_name) {
  throw py::type_error(std::string("this ") + type_name +
                       " was made by __new__ without __init__ and holds nothing; make arrays "
                       "with dlarray.empty() or dlarray.array() and contexts with dlarray.cpu() "
                       "or dlarray.gpu()");
}

}  // namespace dlarray
