// The GIL around long work, interpreter exit, and objects that were never initialised.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>

#include "binding.h"

namespace dlarray {
namespace {

std::mutex in_flight_mu;
std::condition_variable in_flight_done;
int in_flight = 0;                 // threads inside a ReleaseGil scope
std::atomic<bool> exiting{false};  // set by the exit hook (with the GIL held)

// Python's atexit runs this before finalization begins, with the GIL held.
void WaitForReleasedScopes() {
  exiting.store(true);
  py::gil_scoped_release release;  // let the waited-for threads take the GIL back
  std::unique_lock<std::mutex> lock(in_flight_mu);
  in_flight_done.wait(lock, [] { return in_flight == 0; });
}

}  // namespace

ReleaseGil::ReleaseGil() {
  if (exiting.load()) return;  // exiting: keep the GIL, finalization waits for this op instead
  {
    std::lock_guard<std::mutex> lock(in_flight_mu);
    ++in_flight;
  }
  state_ = PyEval_SaveThread();
}

ReleaseGil::~ReleaseGil() {
  if (state_ == nullptr) return;
  // Finalization cannot have begun: the exit hook waits for this scope before it returns.
  PyEval_RestoreThread(state_);
  {
    std::lock_guard<std::mutex> lock(in_flight_mu);
    --in_flight;
  }
  in_flight_done.notify_all();
}

void RegisterExitHook() {
  py::module_::import("atexit").attr("register")(py::cpp_function(&WaitForReleasedScopes));
}

void ThrowNotConstructed(const char* type_name) {
  throw py::type_error(std::string("this ") + type_name +
                       " was made by __new__ without __init__ and holds nothing; make arrays "
                       "with dlarray.empty() or dlarray.array() and contexts with dlarray.cpu() "
                       "or dlarray.gpu()");
}

}  // namespace dlarray
