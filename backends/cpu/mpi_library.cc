// Opening MPI at run time: where to look, which symbols, and MPI_Init (mpi_library.h).
#include "mpi_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <memory>
#include <mutex>

#include "dlarray/errors.h"

namespace dlarray::cpu::mpi {
namespace {

constexpr const char* kSoname = "libmpi.so.40";  // Open MPI 3.0 to 5.x
constexpr const char* kInstall =
    "install Open MPI (Debian/Ubuntu: apt-get install openmpi-bin; Fedora: dnf install openmpi) "
    "or set DLARRAY_MPI_LIBRARY to its libmpi.so.40";

std::mutex& Mutex() {
  static std::mutex mu;
  return mu;
}
Library*& Loaded() {
  static Library* lib = nullptr;
  return lib;
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The symbol, or a BackendError naming it (a library that is not Open MPI's lacks the ompi_*).
void* Symbol(void* handle, const std::string& path, const char* name) {
  void* p = dlsym(handle, name);
  if (p == nullptr) {
    throw BackendError(path + " has no " + name +
                       ": dlarray.distributed reaches MPI through "
                       "Open MPI's ABI (libmpi.so.40); MPICH and others are not supported yet");
  }
  return p;
}

template <typename F>
void Bind(void* handle, const std::string& path, const char* name, F* out) {
  *out = reinterpret_cast<F>(Symbol(handle, path, name));
}

void BindAll(void* h, Library* lib) {
  const std::string& p = lib->path;
  Bind(h, p, "MPI_Initialized", &lib->Initialized);
  Bind(h, p, "MPI_Finalized", &lib->Finalized);
  Bind(h, p, "MPI_Init_thread", &lib->InitThread);
  Bind(h, p, "MPI_Finalize", &lib->Finalize);
  Bind(h, p, "MPI_Get_library_version", &lib->GetLibraryVersion);
  Bind(h, p, "MPI_Error_string", &lib->ErrorString);
  Bind(h, p, "MPI_Comm_rank", &lib->CommRank);
  Bind(h, p, "MPI_Comm_size", &lib->CommSize);
  Bind(h, p, "MPI_Comm_dup", &lib->CommDup);
  Bind(h, p, "MPI_Comm_split", &lib->CommSplit);
  Bind(h, p, "MPI_Comm_free", &lib->CommFree);
  Bind(h, p, "MPI_Comm_set_errhandler", &lib->CommSetErrhandler);
  Bind(h, p, "MPI_Open_port", &lib->OpenPort);
  Bind(h, p, "MPI_Comm_accept", &lib->CommAccept);
  Bind(h, p, "MPI_Comm_connect", &lib->CommConnect);
  Bind(h, p, "MPI_Intercomm_merge", &lib->IntercommMerge);
  Bind(h, p, "MPI_Comm_disconnect", &lib->CommDisconnect);
  Bind(h, p, "MPI_Op_create", &lib->OpCreate);
  Bind(h, p, "MPI_Allreduce", &lib->Allreduce);
  Bind(h, p, "MPI_Bcast", &lib->Bcast);
  Bind(h, p, "MPI_Allgather", &lib->Allgather);
  Bind(h, p, "MPI_Reduce_scatter_block", &lib->ReduceScatterBlock);
  Bind(h, p, "MPI_Barrier", &lib->Barrier);
  Bind(h, p, "MPI_Iallreduce", &lib->Iallreduce);
  Bind(h, p, "MPI_Wait", &lib->Wait);
  struct Object {
    const char* name;
    Handle* out;
  };
  const Object objects[] = {
      {"ompi_mpi_comm_world", &lib->comm_world},
      {"ompi_mpi_info_null", &lib->info_null},
      {"ompi_mpi_errors_return", &lib->errors_return},
      {"ompi_mpi_op_sum", &lib->op_sum},
      {"ompi_mpi_op_prod", &lib->op_prod},
      {"ompi_mpi_op_max", &lib->op_max},
      {"ompi_mpi_op_min", &lib->op_min},
      {"ompi_mpi_op_lor", &lib->op_lor},
      {"ompi_mpi_op_land", &lib->op_land},
      {"ompi_mpi_float", &lib->t_float},
      {"ompi_mpi_double", &lib->t_double},
      {"ompi_mpi_int8_t", &lib->t_int8},
      {"ompi_mpi_int16_t", &lib->t_int16},
      {"ompi_mpi_int32_t", &lib->t_int32},
      {"ompi_mpi_int64_t", &lib->t_int64},
      {"ompi_mpi_uint8_t", &lib->t_uint8},
      {"ompi_mpi_uint16_t", &lib->t_uint16},
      {"ompi_mpi_uint32_t", &lib->t_uint32},
      {"ompi_mpi_uint64_t", &lib->t_uint64},
      {"ompi_mpi_c_bool", &lib->t_bool},
      {"ompi_mpi_c_float_complex", &lib->t_cfloat},
      {"ompi_mpi_c_double_complex", &lib->t_cdouble},
      {"ompi_mpi_byte", &lib->t_byte},
  };
  for (const Object& o : objects) *o.out = Symbol(h, p, o.name);
}

// Opens the first place that works; `tried` gets "place: why" for each that did not.
void* OpenFirst(const std::vector<std::string>& places, std::string* path,
                std::vector<std::string>* tried) {
  for (const std::string& place : places) {
    const std::string file = IsDirectory(place) ? place + "/" + kSoname : place;
    // RTLD_GLOBAL: Open MPI's own plugins (mca_*.so) resolve their calls into libmpi.
    void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (h != nullptr) {
      char resolved[4096] = {0};
      void* any = dlsym(h, "MPI_Init_thread");
      Dl_info info{};
      if (any != nullptr && dladdr(any, &info) != 0 && info.dli_fname != nullptr) {
        *path = info.dli_fname;
      } else {
        *path = realpath(file.c_str(), resolved) != nullptr ? resolved : file;
      }
      return h;
    }
    const char* why = dlerror();
    tried->push_back(file + ": " + (why != nullptr ? why : "not found"));
  }
  return nullptr;
}

void Initialise(Library* lib) {
  int done = 0;
  lib->Initialized(&done);
  if (done == 0) {
    int provided = 0;
    const int r = lib->InitThread(nullptr, nullptr, kThreadSerialized, &provided);
    if (r != kSuccess) throw BackendError(ErrorText(*lib, "MPI_Init_thread", r));
    lib->initialised_here = true;
  }
  char text[kMaxLibraryVersion + 1] = {0};
  int len = 0;
  if (lib->GetLibraryVersion(text, &len) == kSuccess) {
    std::string v(text, static_cast<size_t>(len > 0 ? len : 0));
    lib->version = v.substr(0, v.find_first_of("\r\n"));
    while (!lib->version.empty() && (lib->version.back() == ',' || lib->version.back() == ' ')) {
      lib->version.pop_back();
    }
  }
}

}  // namespace

std::string ErrorText(const Library& lib, const char* call, int code) {
  char text[kMaxErrorString + 1] = {0};
  int len = 0;
  std::string what = "error " + std::to_string(code);
  if (lib.ErrorString != nullptr && lib.ErrorString(code, text, &len) == kSuccess && len > 0) {
    what = std::string(text, static_cast<size_t>(len));
  }
  return std::string(call) + " failed: " + what;
}

const Library& Load(const std::vector<std::string>& candidates) {
  std::lock_guard<std::mutex> lock(Mutex());
  if (Loaded() != nullptr) return *Loaded();
  std::vector<std::string> places;
  const char* env = std::getenv("DLARRAY_MPI_LIBRARY");
  if (env != nullptr && *env != '\0') {
    places.emplace_back(env);  // alone: the user chose
  } else {
    places = candidates;
    places.emplace_back(kSoname);  // the loader's search: LD_LIBRARY_PATH, ld.so.cache
  }
  auto lib = std::make_unique<Library>();
  std::vector<std::string> tried;
  void* h = OpenFirst(places, &lib->path, &tried);
  if (h == nullptr) {
    std::string list;
    for (const std::string& t : tried) list += "\n  " + t;
    throw BackendError(std::string("MPI was not found: ") + kInstall + ". Tried:" + list);
  }
  BindAll(h, lib.get());
  Initialise(lib.get());
  Loaded() = lib.release();  // valid until exit: MPI may be finalized, never unloaded
  return *Loaded();
}

const Library& Lib() {
  {
    std::lock_guard<std::mutex> lock(Mutex());
    if (Loaded() != nullptr) return *Loaded();
  }
  return Load({});
}

}  // namespace dlarray::cpu::mpi
