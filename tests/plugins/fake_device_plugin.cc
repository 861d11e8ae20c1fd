// A working backend for a second device type (20) with two devices in host memory, and kernels
// for copy and relu only: lets the tests route between device types without a GPU. It also offers
// device extensions that the CUDA plugin offers on its type ("dlarray.graph.v1",
// "dlarray.mem_info.v1"), which proves that they are looked up on the arrays' device type: a
// "graph" here records relu calls instead of running them and replays them on launch.
#include <algorithm>
#include <mutex>
#include <vector>

#include "dlarray/ext/graph.h"
#include "dlarray/ext/mem_info.h"
#include "test_plugin_util.h"

namespace {

struct ReluCall {
  const float* x;
  float* y;
  int64_t n;
};

void RunRelu(const ReluCall& c) {
  for (int64_t i = 0; i < c.n; ++i) c.y[i] = std::max(c.x[i], 0.0f);
}

}  // namespace

// The recorded calls of one graph (the extension's opaque type).
struct DLArrayGraphExec {
  std::vector<ReluCall> calls;
};

namespace {

constexpr int kDevices = 2;
std::mutex g_mu;
DLArrayGraphExec* g_recording[kDevices] = {};  // guarded by g_mu

int Fail(const std::string& message) {
  dlarray::PluginCoreApi()->set_error(kDLArrayErrValue, message.c_str());
  return -1;
}

bool BadId(int32_t id) { return id < 0 || id >= kDevices; }

int BeginCapture(int32_t id) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (BadId(id) || g_recording[id] != nullptr) return Fail("fake graph: cannot begin here");
  g_recording[id] = new DLArrayGraphExec();
  return 0;
}

int EndCapture(int32_t id, DLArrayGraphExec** out) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (BadId(id) || g_recording[id] == nullptr) return Fail("fake graph: nothing is recording");
  *out = g_recording[id];
  g_recording[id] = nullptr;
  return 0;
}

int AbortCapture(int32_t id) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (BadId(id) || g_recording[id] == nullptr) return Fail("fake graph: nothing is recording");
  delete g_recording[id];
  g_recording[id] = nullptr;
  return 0;
}

int32_t IsCapturing(int32_t id) {
  std::lock_guard<std::mutex> lock(g_mu);
  return !BadId(id) && g_recording[id] != nullptr ? 1 : 0;
}

int Launch(DLArrayGraphExec* exec) {
  for (const ReluCall& c : exec->calls) RunRelu(c);
  return 0;
}

int64_t NumNodes(const DLArrayGraphExec* exec) { return static_cast<int64_t>(exec->calls.size()); }

void Destroy(DLArrayGraphExec* exec) { delete exec; }

const DLArrayGraphExtV1 kGraph{sizeof(DLArrayGraphExtV1),
                               &BeginCapture,
                               &EndCapture,
                               &AbortCapture,
                               &IsCapturing,
                               &Launch,
                               &NumNodes,
                               &Destroy};

int MemInfo(void*, int32_t id, uint64_t* free_bytes, uint64_t* total_bytes) {
  if (BadId(id)) return Fail("fake mem_info: no such device");
  *free_bytes = 1000 + static_cast<uint64_t>(id);
  *total_bytes = 2000;
  return 0;
}

const DLArrayMemInfoExtV1 kMemInfo{sizeof(DLArrayMemInfoExtV1), nullptr, &MemInfo};

class FakeDevice final : public HostMemoryDevice {
 public:
  FakeDevice() : HostMemoryDevice(kDevices, "") {}
  const void* extension(const std::string& name) override {
    if (name == DLARRAY_EXT_GRAPH_V1) return &kGraph;
    if (name == DLARRAY_EXT_MEM_INFO_V1) return &kMemInfo;
    return HostMemoryDevice::extension(name);
  }
};

dlarray::Device* CreateDevice() { return new FakeDevice(); }

void Relu(const dlarray::KernelContext& c) {
  const ReluCall call{dlarray::Data<const float>(c.inputs[0]), dlarray::Data<float>(c.outputs[0]),
                      dlarray::NumElements(c.outputs[0])};
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (DLArrayGraphExec* g = g_recording[c.device_id]) return g->calls.push_back(call);
  }
  RunRelu(call);
}

void Copy(const dlarray::KernelContext& c) {
  std::memcpy(dlarray::Data<float>(c.outputs[0]), dlarray::Data<const float>(c.inputs[0]),
              static_cast<size_t>(dlarray::NumElements(c.outputs[0])) * sizeof(float));
}

void Register(dlarray::Registry* r) {
  r->register_kernel("relu", kTestDeviceType, &Relu);
  r->register_kernel("copy", kTestDeviceType, &Copy);
}

}  // namespace

DLARRAY_DEFINE_PLUGIN("fake_device", kTestDeviceType, &CreateDevice, &Register)
