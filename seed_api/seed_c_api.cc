// libc_runtime_api.so: the seed's C API (seed layouts) as a thin shim over the runtime's C++ API.
// Arrays it allocates are runtime arrays; caller-made DLSeedArrays are wrapped as DLPack views of
// the caller's memory, without copies. Only the C++ API (namespace dlarray) is called here, never a
// C name, and every exported name is versioned (seed_c_api.map), so neither this library nor the
// core can be routed to the other's same-named functions. Handles come from the core C API's
// handle table (runtime/src/handle_table.cc, built into this library too: it is not exported),
// with a table of their own whose slots hold the seed's struct.
#define DLARRAY_SEED_NO_SEED_NAMES
#include "seed_c_api.h"

#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "c_api_ops.h"
#include "dlarray/errors.h"
#include "dlarray/runtime.h"
#include "handle_table.h"

namespace {

thread_local std::string last_error;

int Fail(const char* fn, const char* msg) noexcept {
  try {
    last_error = std::string(fn) + ": " + msg;
  } catch (...) {  // no memory even for the message
    last_error.clear();
  }
  return -1;
}

// Runs body; any C++ exception becomes -1 plus a message that starts with the C function's name.
template <typename Body>
int Guard(const char* fn, Body&& body) noexcept {
  try {
    body();
    return 0;
  } catch (const std::bad_alloc&) {
    return Fail(fn, "out of host memory");
  } catch (const std::exception& e) {
    return Fail(fn, e.what());
  } catch (...) {
    return Fail(fn, "unknown C++ exception");
  }
}

[[noreturn]] void Throw(const std::string& msg) {
  throw dlarray::Error(dlarray::ErrorKind::kValue, msg);
}

// One operand as the runtime sees it: a runtime array (held for the call) or a DLPack-layout view
// of a caller-made DLSeedArray.
struct Operand {
  std::shared_ptr<dlarray::Array> array;
  DLArray view{};
  DLArray* dl() { return array ? array->dl() : &view; }
};

static_assert(sizeof(DLSeedArray) <= dlarray::HandleTable::kSlotBytes,
              "the seed's struct must fit a handle slot");

// What a handle from DLArrayAlloc points to: the seed's struct, over the runtime array (whose
// shape the table keeps alive).
void WriteSeedSlot(void* slot, const dlarray::Array& array) {
  const DLArray* dl = array.dl();
  auto* seed = new (slot) DLSeedArray{};
  seed->data = static_cast<char*>(dl->data) + dl->byte_offset;
  seed->ctx.device_id = dl->ctx.device_id;
  seed->ctx.device_type = dl->ctx.device_type;
  seed->ndim = dl->ndim;
  seed->shape = dl->shape;
}

// The core C API's handle table, with slots of the seed's layout: a handle is never handed out
// again while the range lasts, so a freed handle is reported even after its memory was reused.
dlarray::HandleTable& Handles() {
  static auto* table = new dlarray::HandleTable(&WriteSeedSlot);  // handles may outlive exit
  return *table;
}

// A runtime array for handles from DLArrayAlloc, a view for caller-made arrays; rejects null and
// freed handles.
Operand Resolve(const DLSeedArray* h, const char* what) {
  Operand op;
  op.array = Handles().Find(h, what);
  if (op.array) return op;
  op.view.data = h->data;
  op.view.ctx.device_type = h->ctx.device_type;
  op.view.ctx.device_id = h->ctx.device_id;
  op.view.ndim = h->ndim;
  op.view.dtype = dlarray::kFloat32;
  op.view.shape = h->shape;
  op.view.strides = nullptr;
  op.view.byte_offset = 0;
  return op;
}

// Runs a core op by name on seed handles (inputs, one output, float attributes).
void RunOp(const char* op, std::initializer_list<const DLSeedArray*> inputs, DLSeedArray* output,
           std::initializer_list<double> attrs) {
  const char* names[] = {"input 0", "input 1"};
  std::vector<Operand> in;
  in.reserve(inputs.size());
  for (const DLSeedArray* h : inputs) in.push_back(Resolve(h, names[in.size()]));
  Operand out = Resolve(output, "output");
  std::vector<const DLArray*> in_dl;
  for (Operand& o : in) in_dl.push_back(o.dl());
  DLArray* out_dl[] = {out.dl()};
  dlarray::Invoke(dlarray::RequireOp(op), in_dl.data(), static_cast<int>(in_dl.size()), out_dl, 1,
                  attrs.begin(), static_cast<int>(attrs.size()));
}

}  // namespace

extern "C" {

const char* DLGetLastError(void) { return last_error.c_str(); }

int DLArrayAlloc(const int64_t* shape, int ndim, DLSeedContext ctx, DLSeedArrayHandle* out) {
  return Guard("DLArrayAlloc", [&] {
    if (out == nullptr) Throw("out is null");
    if (ndim < 0 || ndim > 64) Throw("ndim " + std::to_string(ndim) + " is not in [0, 64]");
    if (ndim > 0 && shape == nullptr) Throw("shape is null");
    std::vector<int64_t> dims(shape, shape + ndim);
    DLContext dl_ctx{ctx.device_type, ctx.device_id};
    *out = static_cast<DLSeedArray*>(
        Handles().AddSlot(dlarray::Array::Empty(dims, dl_ctx, dlarray::kFloat32)));
  });
}

int DLArrayFree(DLSeedArrayHandle handle) {
  return Guard("DLArrayFree", [&] { Handles().Remove(handle, ""); });
}

int DLArrayCopyFromTo(DLSeedArrayHandle from, DLSeedArrayHandle to, void* stream) {
  return Guard("DLArrayCopyFromTo", [&] {
    if (stream != nullptr) Throw("streams are not supported: pass NULL (None)");
    Operand src = Resolve(from, "copy source");
    Operand dst = Resolve(to, "copy target");
    dlarray::CopyFromTo(src.dl(), dst.dl());
  });
}

// The seed's per-op functions, from the table of c_api_ops.h, in the seed's signatures (its
// transposes are bool); errors start with the function's name.
#define DLARRAY_SEED_SET(fn, op)                             \
  int fn(DLSeedArrayHandle arr, float value) {               \
    return Guard(#fn, [&] { RunOp(op, {}, arr, {value}); }); \
  }
#define DLARRAY_SEED_UNARY(fn, op)                                  \
  int fn(const DLSeedArrayHandle input, DLSeedArrayHandle output) { \
    return Guard(#fn, [&] { RunOp(op, {input}, output, {}); });     \
  }
#define DLARRAY_SEED_BINARY(fn, op)                                                        \
  int fn(const DLSeedArrayHandle a, const DLSeedArrayHandle b, DLSeedArrayHandle output) { \
    return Guard(#fn, [&] { RunOp(op, {a, b}, output, {}); });                             \
  }
#define DLARRAY_SEED_BY_CONST(fn, op)                                            \
  int fn(const DLSeedArrayHandle input, float value, DLSeedArrayHandle output) { \
    return Guard(#fn, [&] { RunOp(op, {input}, output, {value}); });             \
  }
#define DLARRAY_SEED_MATMUL(fn, op)                                                        \
  int fn(const DLSeedArrayHandle a, bool trans_a, const DLSeedArrayHandle b, bool trans_b, \
         DLSeedArrayHandle output) {                                                       \
    return Guard(#fn, [&] {                                                                \
      RunOp(op, {a, b}, output, {trans_a ? 1.0 : 0.0, trans_b ? 1.0 : 0.0});               \
    });                                                                                    \
  }
#define DLARRAY_SEED_DEFINE(fn, op, pattern) DLARRAY_SEED_##pattern(fn, op)

DLARRAY_SEED_OPS(DLARRAY_SEED_DEFINE)

}  // extern "C"
