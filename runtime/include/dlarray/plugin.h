/*!
 * \file dlarray/plugin.h
 * \brief The plugin entry point: one extern "C" symbol returning a versioned descriptor.
 *
 * A plugin is a shared library exporting DLARRAY_PLUGIN_ENTRY_SYMBOL. The loader reads
 * abi_version first and touches nothing else unless it equals DLARRAY_PLUGIN_ABI_VERSION.
 */
#ifndef DLARRAY_PLUGIN_H_
#define DLARRAY_PLUGIN_H_

#include <stdint.h>

#include "dlarray/device.h"
#include "dlarray/kernel.h"

/*! \brief Bumped whenever the descriptor, Device, Registry or KernelContext change. */
#define DLARRAY_PLUGIN_ABI_VERSION 1u

/*! \brief Name of the entry symbol every plugin exports. */
#define DLARRAY_PLUGIN_ENTRY_SYMBOL "dlarray_plugin_entry"

extern "C" {

/*! \brief What a plugin tells the loader about itself. */
struct DLArrayPluginDescriptor {
  uint32_t abi_version;  //!< must be first; DLARRAY_PLUGIN_ABI_VERSION the plugin was built with
  const char* name;      //!< short name, e.g. "cpu" (used by DLARRAY_DISABLE_PLUGINS)
  int32_t device_type;   //!< DLArrayDeviceType served, or 0 for a plugin that only adds ops
  /*! \brief Creates the Device (null for op-only plugins); may throw. Owned by the runtime. */
  dlarray::Device* (*create_device)();
  /*! \brief Declares ops and registers kernels; may throw (the plugin is then marked failed). */
  void (*register_kernels)(dlarray::Registry* registry);
};

/*! \brief Signature of the entry symbol. */
typedef const DLArrayPluginDescriptor* (*DLArrayPluginEntryFn)(void);
}

/*! \brief Defines the entry symbol: DLARRAY_PLUGIN_ENTRY { static Descriptor d{...}; return &d; }
 */
#define DLARRAY_PLUGIN_ENTRY                                                       \
  extern "C" __attribute__((visibility("default"))) const DLArrayPluginDescriptor* \
  dlarray_plugin_entry(void)

#endif  // DLARRAY_PLUGIN_H_
