# dlarray_add_plugin(<name> SOURCES <src>... [OUTPUT_DIRECTORY <dir>] [INSTALL_DESTINATION <dir>]
#                    [CUDA_ARCHITECTURES <archs>...] [CUDA_RUNTIME Static|Shared]
#                    [EXPORT_SYMBOLS <symbol>...])
#
# Builds a dlarray plugin: a MODULE library named <name>.so (no "lib" prefix) that exports only the
# entry symbol (a linker version script hides everything else, C++ template instantiations
# included; EXPORT_SYMBOLS adds C symbols to export), links nothing of dlarray but the headers of
# the SDK (dlarray::sdk; the core hands the plugin its functions at load time), refuses undefined
# symbols at link time, and finds its own dependencies next to itself ($ORIGIN).
# .cu sources are compiled with nvcc: CUDA is enabled when needed (call it at directory scope), for
# CUDA_ARCHITECTURES (default: CMAKE_CUDA_ARCHITECTURES, else 80-real;90-real;90-virtual), with the
# CUDA runtime linked statically by default, so the plugin still loads where no CUDA is installed.
# The plugin is found at run time in the plugins folder of the dlarray package, in
# DLARRAY_PLUGIN_PATH, through dlarray.load_plugin(path), or through a "dlarray.plugins" entry point.
macro(dlarray_add_plugin name)
  set(_dlarray_plugin_has_cuda OFF)
  foreach(_dlarray_src ${ARGN})
    if(_dlarray_src MATCHES "\\.cu$")
      set(_dlarray_plugin_has_cuda ON)
    endif()
  endforeach()
  if(_dlarray_plugin_has_cuda)
    get_property(_dlarray_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "CUDA" IN_LIST _dlarray_langs)
      include(CheckLanguage)
      check_language(CUDA)
      if(NOT CMAKE_CUDA_COMPILER)
        message(FATAL_ERROR "dlarray_add_plugin(${name}): .cu sources need a CUDA compiler, and "
                            "none was found: put nvcc on PATH (CUDA toolkit) or set "
                            "CMAKE_CUDA_COMPILER, or leave the .cu files out of this build")
      endif()
      if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
        set(CMAKE_CUDA_ARCHITECTURES "80-real;90-real;90-virtual")
      endif()
      enable_language(CUDA)
    endif()
  endif()
  _dlarray_add_plugin(${name} ${ARGN})
endmacro()

function(_dlarray_add_plugin name)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY;INSTALL_DESTINATION;CUDA_RUNTIME"
                        "SOURCES;CUDA_ARCHITECTURES;EXPORT_SYMBOLS" ${ARGN})
  set(sources ${ARG_SOURCES} ${ARG_UNPARSED_ARGUMENTS})
  if(NOT sources)
    message(FATAL_ERROR "dlarray_add_plugin(${name}): no SOURCES")
  endif()
  add_library(${name} MODULE ${sources})
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON
    BUILD_RPATH "$ORIGIN"
    INSTALL_RPATH "$ORIGIN")
  if(NOT DEFINED CMAKE_CXX_STANDARD)
    target_compile_features(${name} PRIVATE cxx_std_17)
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  endif()
  foreach(src ${sources})
    if(src MATCHES "\\.cu$")
      if(ARG_CUDA_ARCHITECTURES)
        set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES "${ARG_CUDA_ARCHITECTURES}")
      endif()
      if(NOT ARG_CUDA_RUNTIME)
        set(ARG_CUDA_RUNTIME Static)
      endif()
      set_target_properties(${name} PROPERTIES CUDA_RUNTIME_LIBRARY ${ARG_CUDA_RUNTIME})
      break()
    endif()
  endforeach()
  target_link_libraries(${name} PRIVATE dlarray::sdk)
  # Export the entry symbol only, so that nothing of one plugin can interpose on another library.
  set(exports dlarray_plugin_entry ${ARG_EXPORT_SYMBOLS})
  list(JOIN exports "; " exports)
  set(map "${CMAKE_CURRENT_BINARY_DIR}/${name}.exports.map")
  file(CONFIGURE OUTPUT "${map}" CONTENT "{ global: ${exports}; local: *; };\n")
  target_link_options(${name} PRIVATE "LINKER:--version-script=${map}")
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS "${map}")
  # Plugins link nothing of dlarray: an undefined symbol is a mistake, reported now, not at load.
  if(NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize" AND NOT CMAKE_C_FLAGS MATCHES "-fsanitize")
    target_link_options(${name} PRIVATE "LINKER:--no-undefined")
  endif()
  if(ARG_INSTALL_DESTINATION)
    install(TARGETS ${name} LIBRARY DESTINATION "${ARG_INSTALL_DESTINATION}")
  endif()
endfunction()
