// AotLibrary and AotOp: the C++ side of dlarray.custom (AOT custom ops with MindSpore's calling
// convention, dlarray/aot.h). custom.cc binds them and holds the Python call path.
#ifndef DLARRAY_PYTHON_SRC_AOT_OP_H_
#define DLARRAY_PYTHON_SRC_AOT_OP_H_

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "binding.h"
#include "dlarray/aot.h"

namespace dlarray {

/*! \brief dlarray_aot_guard_v1 (dlarray/aot_guard.h): runs call(data), catching C++ exceptions. */
using AotGuardFn = int (*)(int (*call)(void*), void* data, int* threw, char* message, size_t size);

/*! \brief A shared library of AOT ops, opened once and never closed (queued GPU kernels and
 *         cached function pointers may still use its code). */
class AotLibrary {
 public:
  explicit AotLibrary(std::string path);
  /*! \brief The address of an exported symbol, or nullptr. */
  void* Symbol(const std::string& name) const;
  const std::string& path() const { return path_; }
  /*! \brief The library's exception guard, or nullptr (built without dlarray/aot_guard.h). */
  AotGuardFn guard() const { return guard_; }

 private:
  std::string path_;
  void* handle_ = nullptr;
  AotGuardFn guard_ = nullptr;
};

/*! \brief The shape and dtype of one output. */
struct OutSpec {
  std::vector<int64_t> shape;
  DLArrayDType dtype;
};

struct AotImpl;

/*! \brief An op's attributes as the DLArrayAotAttr structs a library reads (aot_attrs.cc). */
class AotAttrs {
 public:
  /*!
   * \brief Adds one: name a str, value a bool, int, float, str or a list of ints or floats.
   *        TypeError, ValueError (a NUL byte) or OverflowError (an int past int64) name it.
   */
  void Add(const py::handle& name, const py::handle& value);
  const DLArrayAotAttr* data() const { return attrs_.data(); }
  size_t size() const { return attrs_.size(); }

 private:
  void AddList(const std::string& name, const py::handle& value, DLArrayAotAttr* a);

  std::vector<DLArrayAotAttr> attrs_;
  // Stable storage for what the structs point to.
  std::deque<std::string> names_, strings_;
  std::deque<std::vector<int64_t>> int_lists_;
  std::deque<std::vector<double>> float_lists_;
};

/*! \brief An AOT custom op: one library function per device type, attributes, output specs. */
class AotOp {
 public:
  /*!
   * \param impls (device type, AotLibrary, function name) tuples
   * \param num_inputs the input count, or -1 for any
   * \param in_dtypes the input dtypes (one for all, one per input, or none: any)
   * \param fixed_specs None, or (shape, dtype) per output when they never change
   * \param attrs (name, value) tuples: bool, int, float, str or a list of ints or floats
   */
  AotOp(std::string name, const std::vector<py::tuple>& impls, int num_inputs,
        const std::vector<py::dtype>& in_dtypes, int num_outputs, const py::object& fixed_specs,
        const std::vector<py::tuple>& attrs);
  ~AotOp();
  AotOp(const AotOp&) = delete;
  AotOp& operator=(const AotOp&) = delete;

  const std::string& name() const { return name_; }
  int num_inputs() const { return num_inputs_; }
  int num_outputs() const { return num_outputs_; }
  std::vector<int> device_types() const;
  /*! \brief Whether device_type's library has "fn", "init", "infer_shape" or "infer_type". */
  bool Has(int device_type, const std::string& what) const;
  /*! \brief The workspace FuncInit asked for last on device_type (bytes). */
  uint64_t WorkspaceSize(int device_type) const;

  /*! \brief (output shapes or None, output dtype names or None) from FuncInferShape /
   *         FuncInferType of device_type's library, else of another implementation's. */
  py::tuple LibraryInfer(int device_type, const std::vector<std::vector<int64_t>>& shapes,
                         const std::vector<std::string>& dtypes);

  /*!
   * \brief One call: checks the inputs, allocates the outputs that outs leaves null (into made)
   *        or checks the given ones, and runs the library function (GIL released for large
   *        arrays). self is the Python object, whose _infer_outputs gives specs not fixed.
   */
  void Run(py::handle self, DLArray* const* ins, int nin, DLArray** outs, bool outs_given,
           std::vector<std::shared_ptr<Array>>* made);

 private:
  void AddImpl(int device_type, const py::handle& library, const std::string& symbol);
  AotImpl* Find(int device_type) const;
  [[noreturn]] void ThrowNoImpl(DLContext ctx) const;
  void CheckInputs(const DLArray* const* ins, int nin, DLContext ctx) const;
  void CheckOutput(const DLArray* a, const OutSpec* spec, DLContext ctx, int k) const;
  const std::vector<OutSpec>* Specs(py::handle self, const DLArray* const* ins, int nin,
                                    DLContext ctx, bool outs_given);
  DLArrayAotExtra MakeExtra(const AotImpl* impl, DLContext ctx, int nin) const;
  void Launch(AotImpl* impl, DLContext ctx, const DLArray* const* ins, int nin,
              DLArray* const* outs);

  std::string name_;
  int num_inputs_;
  int num_outputs_;
  std::vector<DLArrayDType> in_dtypes_;
  std::vector<std::unique_ptr<AotImpl>> impls_;
  AotAttrs attrs_;
  // Output specs (used with the GIL held): fixed, or those of the last input signature.
  bool specs_fixed_ = false;
  bool specs_valid_ = false;
  std::vector<int64_t> specs_key_;
  std::vector<OutSpec> specs_;
};

}  // namespace dlarray

#endif  // DLARRAY_PYTHON_SRC_AOT_OP_H_
