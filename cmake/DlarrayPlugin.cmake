# dlarray_add_plugin(<name> <sources...>): a plugin module built against the SDK, like a third
# party would. It lands in <build>/dlarray/plugins (the layout of the installed package), finds
# libdlarray_runtime.so through $ORIGIN/.., and installs into dlarray/plugins.
function(dlarray_add_plugin name)
  add_library(${name} MODULE ${ARGN})
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LIBRARY_OUTPUT_DIRECTORY "${DLARRAY_PLUGIN_OUTPUT_DIR}"
    BUILD_RPATH "$ORIGIN/.."
    INSTALL_RPATH "$ORIGIN/..")
  target_link_libraries(${name} PRIVATE dlarray_runtime)
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${DLARRAY_WARNING_FLAGS}>)
  install(TARGETS ${name} LIBRARY DESTINATION "${DLARRAY_INSTALL_DIR}/plugins")
endfunction()
