/*!
 * \file cpu_device.cc
 * \brief CpuDevice: host memory through posix_memalign (small blocks reused per thread),
 *        copies through memcpy.
 */
#include "cpu_device.h"

#include <sys/mman.h>
#include <sys/sysinfo.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <vector>

#include "blas.h"
#include "cpu_isa_level.h"
#include "cpu_kernels.h"
#include "dlarray/errors.h"
#include "large_blocks.h"
#include "parallel.h"
#include "vector_math.h"

namespace dlarray::cpu {
namespace {

// "model name" from /proc/cpuinfo, or "cpu".
std::string CpuModelName() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    const size_t begin = line.find_first_not_of(" \t", colon + 1);
    if (begin != std::string::npos) return line.substr(begin);
    break;
  }
  return "cpu";
}

// The large-block cache's default budget: an eighth of the RAM, at most 4 GiB.
uint64_t LargeBlockBudget() {
  struct sysinfo info;
  if (sysinfo(&info) != 0) return 0;
  const uint64_t ram = static_cast<uint64_t>(info.totalram) * info.mem_unit;
  return std::min<uint64_t>(ram / 8, uint64_t{4} << 30);
}

uint64_t PhysicalMemoryAndSwap() {
  struct sysinfo info;
  if (sysinfo(&info) != 0) return UINT64_MAX;
  return (static_cast<uint64_t>(info.totalram) + info.totalswap) * info.mem_unit;
}

std::string Bytes(uint64_t n) {
  char text[96];
  std::snprintf(text, sizeof(text), "%llu bytes (%.2f GiB)", static_cast<unsigned long long>(n),
                static_cast<double>(n) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

void CheckId(int id) {
  if (id != 0) {
    throw DeviceError("cpu device " + std::to_string(id) +
                      " does not exist: there is one cpu device, cpu(0)");
  }
}

size_t Rounded(size_t nbytes) {
  return (nbytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
}

// Small blocks are kept for reuse, per thread: a 1-element op's output otherwise costs a
// posix_memalign and a free, a third of the op's time. Blocks up to kCachedMax bytes, in classes
// of kAllocationAlignment, at most kCachedPerClass of each; a thread's blocks are freed when it
// ends. Large blocks (LargeBlocks::kMinBytes and up) are kept process-wide by large_blocks_.
constexpr size_t kCachedMax = 1024, kCachedPerClass = 32;
constexpr size_t kClasses = kCachedMax / kAllocationAlignment;

// The allocation and free counts of memory_stats, per thread: each is written by its thread
// alone (a load and a store, where a shared counter took a locked add: two of the four locked
// instructions of a 1-element op's result) and summed by memory_stats. A thread's counts move
// to `retired` when it ends. bytes_in_use stays one shared counter: its peak is of the sum.
struct SmallBlocks;
struct Counts {
  std::mutex mu;
  std::vector<const SmallBlocks*> threads;
  uint64_t retired_allocations = 0, retired_frees = 0;
};
Counts& AllCounts() {
  static Counts* counts = new Counts();  // never destroyed: threads may end after static dtors
  return *counts;
}

void Increment(std::atomic<uint64_t>& n) {
  n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

struct SmallBlocks {
  void* blocks[kClasses][kCachedPerClass] = {};
  size_t count[kClasses] = {};
  std::atomic<uint64_t> allocations{0}, frees{0};  // this thread's
  SmallBlocks() {
    Counts& all = AllCounts();
    std::lock_guard<std::mutex> lock(all.mu);
    all.threads.push_back(this);
  }
  ~SmallBlocks() {
    for (size_t c = 0; c < kClasses; ++c) {
      for (size_t i = 0; i < count[c]; ++i) std::free(blocks[c][i]);
    }
    Counts& all = AllCounts();
    std::lock_guard<std::mutex> lock(all.mu);
    all.retired_allocations += allocations.load(std::memory_order_relaxed);
    all.retired_frees += frees.load(std::memory_order_relaxed);
    all.threads.erase(std::find(all.threads.begin(), all.threads.end(), this));
  }
};
// On the heap: the library's TLS is static (thread_pool.cc), where space is scarce.
thread_local std::unique_ptr<SmallBlocks> t_small_blocks;

SmallBlocks& Blocks() {
  if (!t_small_blocks) t_small_blocks = std::make_unique<SmallBlocks>();
  return *t_small_blocks;
}

}  // namespace

CpuDevice::CpuDevice()
    : model_(CpuModelName()),
      memory_limit_(PhysicalMemoryAndSwap()),
      large_blocks_(std::make_unique<LargeBlocks>(LargeBlockBudget())) {}

CpuDevice::~CpuDevice() = default;

std::string CpuDevice::device_name(int id) {
  CheckId(id);
  return model_ + " (" + std::to_string(NumThreads()) + " threads)";
}

// Large blocks ask for transparent huge pages (as NumPy does for its arrays): a fresh 16 MB output
// then costs 8 page faults instead of 4096, which on a VM is most of a fast op's time. Only the
// whole 4 KiB pages inside the block are advised; where THP is off this does nothing.
static void AdviseHugePages(void* ptr, size_t size) {
  constexpr size_t kHugeAdviceMin = size_t{4} << 20, kPage = 4096;
  if (size < kHugeAdviceMin) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(ptr) + kPage - 1) & ~(kPage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(ptr) + size) & ~(kPage - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void* CpuDevice::allocate(int id, size_t nbytes) {
  CheckId(id);
  // Linux overcommits: a request larger than the whole machine would "succeed" and crash later.
  if (nbytes > memory_limit_ || nbytes > SIZE_MAX - kAllocationAlignment) {
    throw OutOfMemoryError("cpu: cannot allocate " + Bytes(nbytes) + ": the machine has " +
                           Bytes(memory_limit_) + " of memory and swap");
  }
  const size_t rounded = Rounded(nbytes);
  const bool large = rounded >= LargeBlocks::kMinBytes;
  const size_t size = large ? LargeBlocks::ClassSize(rounded) : rounded;
  void* ptr = nullptr;
  const size_t cls = size / kAllocationAlignment - 1;
  SmallBlocks& blocks = Blocks();
  if (size != 0 && size <= kCachedMax && blocks.count[cls] > 0) {
    ptr = blocks.blocks[cls][--blocks.count[cls]];
  } else if (large && (ptr = large_blocks_->Take(size)) != nullptr) {
    // reserved already
  } else {
    if (posix_memalign(&ptr, kAllocationAlignment, size) != 0 || ptr == nullptr) {
      // The kept blocks may be what the system lacks: give them back and try once more.
      bytes_reserved_.fetch_sub(large_blocks_->Release(), std::memory_order_relaxed);
      if (posix_memalign(&ptr, kAllocationAlignment, size) != 0 || ptr == nullptr) {
        throw OutOfMemoryError("cpu: out of memory allocating " + Bytes(nbytes));
      }
    }
    AdviseHugePages(ptr, size);
    bytes_reserved_.fetch_add(size, std::memory_order_relaxed);
  }
  Increment(blocks.allocations);
  const uint64_t in_use = bytes_in_use_.fetch_add(nbytes, std::memory_order_relaxed) + nbytes;
  uint64_t peak = peak_bytes_in_use_.load(std::memory_order_relaxed);
  while (in_use > peak &&
         !peak_bytes_in_use_.compare_exchange_weak(peak, in_use, std::memory_order_relaxed)) {
  }
  return ptr;
}

void CpuDevice::free(int id, void* ptr, size_t nbytes) noexcept {
  (void)id;
  if (ptr == nullptr) return;
  const size_t rounded = Rounded(nbytes);
  if (rounded >= LargeBlocks::kMinBytes) {
    const size_t released = large_blocks_->Put(ptr, LargeBlocks::ClassSize(rounded));
    bytes_reserved_.fetch_sub(released, std::memory_order_relaxed);
    Increment(Blocks().frees);
    bytes_in_use_.fetch_sub(nbytes, std::memory_order_relaxed);
    return;
  }
  const size_t size = rounded;
  const size_t cls = size / kAllocationAlignment - 1;
  // One look-up of the thread's cache: each is a __tls_get_addr call in this dlopen'ed plugin.
  SmallBlocks& blocks = Blocks();
  if (size != 0 && size <= kCachedMax && blocks.count[cls] < kCachedPerClass) {
    blocks.blocks[cls][blocks.count[cls]++] = ptr;  // stays reserved
  } else {
    std::free(ptr);
    bytes_reserved_.fetch_sub(size, std::memory_order_relaxed);
  }
  Increment(blocks.frees);
  bytes_in_use_.fetch_sub(nbytes, std::memory_order_relaxed);
}

void CpuDevice::copy(const void* src, uint64_t src_offset, DLDevice src_device, void* dst,
                     uint64_t dst_offset, DLDevice dst_device, size_t nbytes) {
  (void)src_device;
  (void)dst_device;
  const char* from = static_cast<const char*>(src) + src_offset;
  char* to = static_cast<char*>(dst) + dst_offset;
  if (from == to || nbytes == 0) return;
  if (from < to + nbytes && to < from + nbytes) {
    std::memmove(to, from, nbytes);
    return;
  }
  // Work counted in 16-byte units: copies below 512 KiB stay on the calling thread.
  const int64_t n = static_cast<int64_t>(nbytes);
  ParallelFor(n, n / 16, 64, [&](int64_t b, int64_t e) { std::memcpy(to + b, from + b, e - b); });
}

namespace {

// Stores the element v over [0, n) of y on the pool (regular stores, as array_set measured best).
template <typename T>
void FillElements(T* y, int64_t n, T v) {
  ParallelFor(n, n * static_cast<int64_t>(sizeof(T)) / 4, 64 / sizeof(T),
              [&](int64_t b, int64_t e) { std::fill(y + b, y + e, v); });
}

template <typename T>
void FillWith(void* to, size_t nbytes, const void* pattern) {
  T v;
  std::memcpy(&v, pattern, sizeof v);
  FillElements(static_cast<T*>(to), static_cast<int64_t>(nbytes / sizeof(T)), v);
}

}  // namespace

void CpuDevice::fill(void* dst, uint64_t dst_offset, DLDevice device, const void* pattern,
                     uint32_t pattern_size, size_t nbytes) {
  (void)device;
  char* to = static_cast<char*>(dst) + dst_offset;
  // The core checked that the offset is a multiple of the pattern size, and allocations are
  // aligned: the element stores below are aligned.
  switch (pattern_size) {
    case 1:
      return FillWith<uint8_t>(to, nbytes, pattern);
    case 2:
      return FillWith<uint16_t>(to, nbytes, pattern);
    case 4:
      return FillWith<uint32_t>(to, nbytes, pattern);
    case 8:
      return FillWith<uint64_t>(to, nbytes, pattern);
    default:
      throw Error(ErrorKind::kValue,
                  "fill: pattern size " + std::to_string(pattern_size) + " is not 1, 2, 4 or 8");
  }
}

void CpuDevice::synchronize(int id) { CheckId(id); }

void CpuDevice::empty_cache(int id) {
  CheckId(id);
  bytes_reserved_.fetch_sub(large_blocks_->Release(), std::memory_order_relaxed);
}

MemoryStats CpuDevice::memory_stats(int id) {
  CheckId(id);
  MemoryStats stats;
  stats.bytes_in_use = bytes_in_use_.load(std::memory_order_relaxed);
  stats.bytes_reserved = bytes_reserved_.load(std::memory_order_relaxed);
  Counts& all = AllCounts();
  std::lock_guard<std::mutex> lock(all.mu);
  stats.num_allocations = all.retired_allocations;
  stats.num_frees = all.retired_frees;
  for (const SmallBlocks* t : all.threads) {
    stats.num_allocations += t->allocations.load(std::memory_order_relaxed);
    stats.num_frees += t->frees.load(std::memory_order_relaxed);
  }
  stats.peak_bytes_in_use = peak_bytes_in_use_.load(std::memory_order_relaxed);
  return stats;
}

void CpuDevice::set_option(const std::string& key, const std::string& value) {
  if (key != "num_threads") {
    Device::set_option(key, value);
    return;
  }
  char* end = nullptr;
  const long n = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || n < 1 || n > 4095) {
    throw Error(ErrorKind::kValue,
                "num_threads must be an integer from 1 to 4095, got '" + value + "'");
  }
  SetNumThreads(static_cast<int>(n));
}

#ifndef DLARRAY_CPU_ISA_NAME
#define DLARRAY_CPU_ISA_NAME "native"
#define DLARRAY_CPU_ISA_MARCH "native"
#endif

namespace {

// The instruction set path of this library, how it was chosen, and the best this CPU runs.
std::string IsaDescription() {
  static const char* const kLevels[] = {"baseline", "avx2", "avx512"};
  const std::string best = kLevels[dlarray::cpu::CpuIsaLevel()];
  std::string text = DLARRAY_CPU_ISA_NAME " (-march=" DLARRAY_CPU_ISA_MARCH ")";
  if (std::string(DLARRAY_CPU_ISA_NAME) == "native") return text + ": built for the build machine";
  const char* forced = std::getenv("DLARRAY_CPU_ISA");
  if (forced != nullptr && *forced)
    return text + ": forced by DLARRAY_CPU_ISA; this CPU runs up to " + best;
  return text + ": the best this CPU runs";
}

}  // namespace

std::string CpuDevice::get_option(const std::string& key) {
  if (key == "num_threads") return std::to_string(NumThreads());
  if (key == "isa") return IsaDescription();
  if (key == "wait_policy") return WaitPolicy();
  if (key == "gemm") return GemmImplementation();
  if (key == "vector_math") return VectorMathStatus();
  if (key == "cache_limit") return std::to_string(large_blocks_->limit());
  if (key.rfind("blas", 0) == 0) {
    const BlasInfo blas = GetBlasInfo();
    if (key == "blas") return blas.name;
    if (key == "blas_path") return blas.path;
    if (key == "blas_config") return blas.version;
    if (key == "blas_core") return blas.core;
    if (key == "blas_threads") return std::to_string(blas.threads);
  }
  return Device::get_option(key);
}

const void* CpuDevice::extension(const std::string& name) { return FindExtension(name); }

void CpuDevice::MemInfo(uint64_t* free_bytes, uint64_t* total_bytes) {
  struct sysinfo info;
  if (sysinfo(&info) != 0) throw BackendError("mem_info on cpu: sysinfo() failed");
  *total_bytes = static_cast<uint64_t>(info.totalram) * info.mem_unit;
  *free_bytes = static_cast<uint64_t>(info.freeram) * info.mem_unit;
  // MemAvailable counts reclaimable caches too: what a new allocation can get.
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") {
      *free_bytes = kib * 1024;
      break;
    }
  }
}

}  // namespace dlarray::cpu
