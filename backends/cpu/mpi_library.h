/*!
 * \file mpi_library.h
 * \brief The MPI library, opened at run time (dlopen), with Open MPI's ABI spelt out here: no MPI
 *        header is needed to build the CPU plugin. Open MPI's handles are addresses of objects
 *        the library exports (ompi_mpi_comm_world, ompi_mpi_float, ...), read with dlsym.
 */
#ifndef DLARRAY_BACKENDS_CPU_MPI_LIBRARY_H_
#define DLARRAY_BACKENDS_CPU_MPI_LIBRARY_H_

#include <string>
#include <vector>

namespace dlarray::cpu::mpi {

using Handle = void*;  // MPI_Comm, MPI_Datatype, MPI_Op, MPI_Info, MPI_Errhandler
using UserFunction = void (*)(void* in, void* inout, int* len, Handle* type);

constexpr int kSuccess = 0;
constexpr int kThreadSerialized = 2;     // Open MPI's MPI_THREAD_SERIALIZED
constexpr int kMaxErrorString = 256;     // Open MPI's MPI_MAX_ERROR_STRING
constexpr int kMaxLibraryVersion = 256;  // Open MPI's MPI_MAX_LIBRARY_VERSION_STRING
inline void* InPlace() { return reinterpret_cast<void*>(1); }  // Open MPI's MPI_IN_PLACE

/*! \brief The functions and handles used (one per process, valid until exit). */
struct Library {
  std::string path;
  std::string version;  // first line of MPI_Get_library_version
  bool initialised_here = false;

  int (*Initialized)(int*) = nullptr;
  int (*Finalized)(int*) = nullptr;
  int (*InitThread)(int*, char***, int, int*) = nullptr;
  int (*Finalize)() = nullptr;
  int (*GetLibraryVersion)(char*, int*) = nullptr;
  int (*ErrorString)(int, char*, int*) = nullptr;
  int (*CommRank)(Handle, int*) = nullptr;
  int (*CommSize)(Handle, int*) = nullptr;
  int (*CommDup)(Handle, Handle*) = nullptr;
  int (*CommSplit)(Handle, int, int, Handle*) = nullptr;
  int (*CommFree)(Handle*) = nullptr;
  int (*CommSetErrhandler)(Handle, Handle) = nullptr;
  int (*OpenPort)(Handle, char*) = nullptr;
  int (*CommAccept)(const char*, Handle, int, Handle, Handle*) = nullptr;
  int (*CommConnect)(const char*, Handle, int, Handle, Handle*) = nullptr;
  int (*IntercommMerge)(Handle, int, Handle*) = nullptr;
  int (*CommDisconnect)(Handle*) = nullptr;
  int (*OpCreate)(UserFunction, int, Handle*) = nullptr;
  int (*Allreduce)(const void*, void*, int, Handle, Handle, Handle) = nullptr;
  int (*Bcast)(void*, int, Handle, int, Handle) = nullptr;
  int (*Allgather)(const void*, int, Handle, void*, int, Handle, Handle) = nullptr;
  int (*ReduceScatterBlock)(const void*, void*, int, Handle, Handle, Handle) = nullptr;
  int (*Barrier)(Handle) = nullptr;
  // MPI_Request is a handle too; MPI_STATUS_IGNORE is a null MPI_Status*.
  int (*Iallreduce)(const void*, void*, int, Handle, Handle, Handle, Handle*) = nullptr;
  int (*Wait)(Handle*, void*) = nullptr;

  Handle comm_world = nullptr, info_null = nullptr, errors_return = nullptr;
  Handle op_sum = nullptr, op_prod = nullptr, op_max = nullptr, op_min = nullptr;
  Handle op_lor = nullptr, op_land = nullptr;
  Handle t_float = nullptr, t_double = nullptr, t_int8 = nullptr, t_int16 = nullptr,
         t_int32 = nullptr, t_int64 = nullptr, t_uint8 = nullptr, t_uint16 = nullptr,
         t_uint32 = nullptr, t_uint64 = nullptr, t_bool = nullptr, t_cfloat = nullptr,
         t_cdouble = nullptr, t_byte = nullptr;
};

/*!
 * \brief Opens the library (once; a failed search may be repeated) and initialises MPI unless it
 *        is already. Throws BackendError listing every place tried, and what to install.
 */
const Library& Load(const std::vector<std::string>& candidates);
/*! \brief The loaded library (Load({}) when none is). */
const Library& Lib();
/*! \brief "MPI_Xxx failed: <MPI's error string>". */
std::string ErrorText(const Library& lib, const char* call, int code);

}  // namespace dlarray::cpu::mpi

#endif  // DLARRAY_BACKENDS_CPU_MPI_LIBRARY_H_
