# FindSuiteSparseAMD: SuiteSparse's AMD ordering as imported targets, for libblockildl (its build
# and, installed beside blockildlConfig.cmake, every project that links blockildl::blockildl_static).
#
# Targets:   SuiteSparse::AMD                (links SuiteSparse::SuiteSparseConfig)
#            SuiteSparse::SuiteSparseConfig  (when the fallback below runs)
# Variables: SuiteSparseAMD_FOUND, SuiteSparseAMD_VERSION, SuiteSparseAMD_INCLUDE_DIRS
# Hints:     AMD_ROOT, SuiteSparse_ROOT or SuiteSparseAMD_ROOT, as CMake or environment variables
#            (or CMAKE_PREFIX_PATH); the cache entries SUITESPARSE_AMD_INCLUDE_DIR,
#            SUITESPARSE_AMD_LIBRARY, SUITESPARSE_CONFIG_LIBRARY.
#
# Order: targets someone already made; SuiteSparse's own CMake configs (SuiteSparse >= 7 installs
# AMDConfig.cmake with SuiteSparse::AMD and SuiteSparse::AMD_static); otherwise find_path and
# find_library, with pkg-config's AMD.pc / SuiteSparse_config.pc as hints where they exist.
# Debian 12 and Ubuntu 22.04 (SuiteSparse 5.x) ship neither configs nor .pc files: the fallback is
# what runs there. Nothing absolute is written into blockildl's exported targets either way: they
# name SuiteSparse::AMD, and this module finds it again on the consumer's machine.

include(FindPackageHandleStandardArgs)

if(NOT TARGET SuiteSparse::AMD AND NOT TARGET SuiteSparse::AMD_static)
  find_package(AMD CONFIG QUIET)
endif()

if(TARGET SuiteSparse::AMD OR TARGET SuiteSparse::AMD_static)
  # A static-only SuiteSparse build has just SuiteSparse::AMD_static: one name for both.
  if(NOT TARGET SuiteSparse::AMD)
    add_library(SuiteSparse::AMD INTERFACE IMPORTED)
    set_target_properties(SuiteSparse::AMD PROPERTIES INTERFACE_LINK_LIBRARIES SuiteSparse::AMD_static)
  endif()
  if(DEFINED AMD_VERSION)
    set(SuiteSparseAMD_VERSION ${AMD_VERSION})
  endif()
  set(_ildl_amd_from "SuiteSparse::AMD")
  if(AMD_DIR)
    set(_ildl_amd_from "SuiteSparse::AMD from ${AMD_DIR}")
  endif()
  find_package_handle_standard_args(SuiteSparseAMD REQUIRED_VARS _ildl_amd_from
                                    VERSION_VAR SuiteSparseAMD_VERSION)
  unset(_ildl_amd_from)
  return()
endif()

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_SUITESPARSE_AMD QUIET AMD)
  pkg_check_modules(PC_SUITESPARSE_CONFIG QUIET SuiteSparse_config)
endif()

set(_ildl_ss_roots ${AMD_ROOT} $ENV{AMD_ROOT} ${SuiteSparse_ROOT} $ENV{SuiteSparse_ROOT})
find_path(SUITESPARSE_AMD_INCLUDE_DIR amd.h
  HINTS ${_ildl_ss_roots} ${PC_SUITESPARSE_AMD_INCLUDEDIR} ${PC_SUITESPARSE_AMD_INCLUDE_DIRS}
  PATH_SUFFIXES suitesparse include/suitesparse include
  DOC "Folder holding SuiteSparse's amd.h")
find_library(SUITESPARSE_AMD_LIBRARY NAMES amd
  HINTS ${_ildl_ss_roots} ${PC_SUITESPARSE_AMD_LIBDIR} ${PC_SUITESPARSE_AMD_LIBRARY_DIRS}
  PATH_SUFFIXES lib lib64
  DOC "SuiteSparse's AMD library")
find_library(SUITESPARSE_CONFIG_LIBRARY NAMES suitesparseconfig
  HINTS ${_ildl_ss_roots} ${PC_SUITESPARSE_CONFIG_LIBDIR} ${PC_SUITESPARSE_CONFIG_LIBRARY_DIRS}
        ${PC_SUITESPARSE_AMD_LIBDIR} ${PC_SUITESPARSE_AMD_LIBRARY_DIRS}
  PATH_SUFFIXES lib lib64
  DOC "SuiteSparse_config's library (AMD's allocator and version)")
unset(_ildl_ss_roots)
mark_as_advanced(SUITESPARSE_AMD_INCLUDE_DIR SUITESPARSE_AMD_LIBRARY SUITESPARSE_CONFIG_LIBRARY)

if(SUITESPARSE_AMD_INCLUDE_DIR AND EXISTS "${SUITESPARSE_AMD_INCLUDE_DIR}/amd.h")
  file(STRINGS "${SUITESPARSE_AMD_INCLUDE_DIR}/amd.h" _ildl_amd_ver
       REGEX "^#define[ \t]+AMD_(MAIN|SUB|SUBSUB)_VERSION[ \t]+[0-9]+")
  set(_ildl_parts)
  foreach(_ildl_part MAIN SUB SUBSUB)
    string(REGEX MATCH "AMD_${_ildl_part}_VERSION[ \t]+([0-9]+)" _ildl_m "${_ildl_amd_ver}")
    if(_ildl_m)
      list(APPEND _ildl_parts ${CMAKE_MATCH_1})
    endif()
  endforeach()
  if(_ildl_parts)
    list(JOIN _ildl_parts "." SuiteSparseAMD_VERSION)
  endif()
  unset(_ildl_amd_ver)
  unset(_ildl_parts)
  unset(_ildl_part)
  unset(_ildl_m)
endif()

find_package_handle_standard_args(SuiteSparseAMD
  REQUIRED_VARS SUITESPARSE_AMD_LIBRARY SUITESPARSE_CONFIG_LIBRARY SUITESPARSE_AMD_INCLUDE_DIR
  VERSION_VAR SuiteSparseAMD_VERSION)

if(SuiteSparseAMD_FOUND)
  set(SuiteSparseAMD_INCLUDE_DIRS ${SUITESPARSE_AMD_INCLUDE_DIR})
  if(NOT TARGET SuiteSparse::SuiteSparseConfig)
    add_library(SuiteSparse::SuiteSparseConfig UNKNOWN IMPORTED)
    set_target_properties(SuiteSparse::SuiteSparseConfig PROPERTIES
      IMPORTED_LOCATION "${SUITESPARSE_CONFIG_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${SUITESPARSE_AMD_INCLUDE_DIR}")
  endif()
  add_library(SuiteSparse::AMD UNKNOWN IMPORTED)
  set_target_properties(SuiteSparse::AMD PROPERTIES
    IMPORTED_LOCATION "${SUITESPARSE_AMD_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${SUITESPARSE_AMD_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES SuiteSparse::SuiteSparseConfig)
endif()
