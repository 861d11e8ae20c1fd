/*!
 * \file device_selection.h
 * \brief Which OpenCL devices the plugin serves: all of them, or those DLARRAY_OPENCL_DEVICES
 *        names.
 *
 * DLARRAY_OPENCL_DEVICES is a comma-separated list of selectors, served in the order given (a
 * device named twice is served once):
 *   - `<platform>:<index>`: device <index> among the devices of the platforms whose name or vendor
 *     contains <platform> (case-insensitive), e.g. `pocl:0`, `nvidia:1`;
 *   - `<platform>:*` or `<platform>`: every device of those platforms, e.g. `nvidia:*`;
 *   - `<index>`: device <index> in the list of every device of every platform;
 *   - `*` or `all`: every device.
 * Unset or empty: every device of every platform, in platform order.
 */
#ifndef DLARRAY_BACKENDS_OPENCL_DEVICE_SELECTION_H_
#define DLARRAY_BACKENDS_OPENCL_DEVICE_SELECTION_H_

#include <cstddef>
#include <string>
#include <vector>

namespace dlarray::opencl {

/*! \brief One OpenCL device as the selection sees it. */
struct DeviceCandidate {
  std::string platform_name;    //!< CL_PLATFORM_NAME, e.g. "Portable Computing Language"
  std::string platform_vendor;  //!< CL_PLATFORM_VENDOR, e.g. "The pocl project"
  std::string device_name;      //!< CL_DEVICE_NAME
};

/*! \brief The outcome: indices into the candidates, or why nothing was selected. */
struct DeviceSelection {
  std::vector<size_t> chosen;  //!< in serving order
  std::string error;           //!< non-empty when the specification is wrong or matches nothing
};

/*! \brief Applies a DLARRAY_OPENCL_DEVICES specification (see the file comment) to candidates. */
DeviceSelection SelectDevices(const std::string& spec, const std::vector<DeviceCandidate>& all);

/*! \brief "pocl:0 (pthread-...), nvidia:0 (...)": what a selector may name, for messages. */
std::string DescribeCandidates(const std::vector<DeviceCandidate>& all);

}  // namespace dlarray::opencl

#endif  // DLARRAY_BACKENDS_OPENCL_DEVICE_SELECTION_H_
