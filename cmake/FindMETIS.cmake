# FindMETIS: METIS (nested dissection ordering) as the imported target METIS::METIS, for
# libblockildl (its build and, installed beside blockildlConfig.cmake, every project that links
# blockildl::blockildl_static).
#
# Targets:   METIS::METIS
# Variables: METIS_FOUND, METIS_VERSION, METIS_INCLUDE_DIRS
# Hints:     METIS_ROOT (or CMAKE_PREFIX_PATH); the cache entries METIS_INCLUDE_DIR, METIS_LIBRARY,
#            GKLIB_LIBRARY.
#
# Order: a METIS::METIS someone already made; a CMake config of METIS where a packager installs
# one (vcpkg's gives the target metis, Conan's metis::metis); otherwise find_path and
# find_library, with pkg-config's metis.pc as hints where it exists. Debian 12 (5.1.0) ships
# neither: the fallback is what runs there. METIS 5.2 builds GKlib as a library of its own; where libGKlib lies beside
# libmetis and libmetis is static, it is linked too.

include(FindPackageHandleStandardArgs)

if(NOT TARGET METIS::METIS)
  find_package(metis CONFIG QUIET)
  foreach(_ildl_t metis::metis metis)
    if(TARGET ${_ildl_t} AND NOT TARGET METIS::METIS)
      add_library(METIS::METIS INTERFACE IMPORTED)
      set_target_properties(METIS::METIS PROPERTIES INTERFACE_LINK_LIBRARIES ${_ildl_t})
    endif()
  endforeach()
  unset(_ildl_t)
endif()

if(TARGET METIS::METIS)
  if(NOT DEFINED METIS_VERSION AND DEFINED metis_VERSION)
    set(METIS_VERSION ${metis_VERSION})
  endif()
  set(_ildl_metis_from "METIS::METIS")
  if(metis_DIR)
    set(_ildl_metis_from "METIS::METIS from ${metis_DIR}")
  endif()
  find_package_handle_standard_args(METIS REQUIRED_VARS _ildl_metis_from VERSION_VAR METIS_VERSION)
  unset(_ildl_metis_from)
  return()
endif()

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_METIS QUIET metis)
endif()

find_path(METIS_INCLUDE_DIR metis.h
  HINTS ${PC_METIS_INCLUDEDIR} ${PC_METIS_INCLUDE_DIRS}
  PATH_SUFFIXES metis
  DOC "Folder holding metis.h")
find_library(METIS_LIBRARY NAMES metis
  HINTS ${PC_METIS_LIBDIR} ${PC_METIS_LIBRARY_DIRS}
  DOC "The METIS library")
mark_as_advanced(METIS_INCLUDE_DIR METIS_LIBRARY)

if(METIS_INCLUDE_DIR AND EXISTS "${METIS_INCLUDE_DIR}/metis.h")
  file(STRINGS "${METIS_INCLUDE_DIR}/metis.h" _ildl_metis_ver
       REGEX "^#define[ \t]+METIS_VER_(MAJOR|MINOR|SUBMINOR)[ \t]+[0-9]+")
  set(_ildl_parts)
  foreach(_ildl_part MAJOR MINOR SUBMINOR)
    string(REGEX MATCH "METIS_VER_${_ildl_part}[ \t]+([0-9]+)" _ildl_m "${_ildl_metis_ver}")
    if(_ildl_m)
      list(APPEND _ildl_parts ${CMAKE_MATCH_1})
    endif()
  endforeach()
  if(_ildl_parts)
    list(JOIN _ildl_parts "." METIS_VERSION)
  endif()
  unset(_ildl_metis_ver)
  unset(_ildl_parts)
  unset(_ildl_part)
  unset(_ildl_m)
endif()

find_package_handle_standard_args(METIS REQUIRED_VARS METIS_LIBRARY METIS_INCLUDE_DIR VERSION_VAR METIS_VERSION)

if(METIS_FOUND)
  set(METIS_INCLUDE_DIRS ${METIS_INCLUDE_DIR})
  add_library(METIS::METIS UNKNOWN IMPORTED)
  set_target_properties(METIS::METIS PROPERTIES
    IMPORTED_LOCATION "${METIS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${METIS_INCLUDE_DIR}")
  # A static libmetis of METIS 5.2 leaves GKlib's symbols to libGKlib; a shared one records it.
  if(METIS_LIBRARY MATCHES "\\${CMAKE_STATIC_LIBRARY_SUFFIX}$")
    get_filename_component(_ildl_metis_dir "${METIS_LIBRARY}" DIRECTORY)
    find_library(GKLIB_LIBRARY NAMES GKlib HINTS "${_ildl_metis_dir}" NO_DEFAULT_PATH
                 DOC "GKlib, which a static METIS 5.2 needs")
    mark_as_advanced(GKLIB_LIBRARY)
    if(GKLIB_LIBRARY)
      set_property(TARGET METIS::METIS APPEND PROPERTY INTERFACE_LINK_LIBRARIES "${GKLIB_LIBRARY}")
    endif()
    unset(_ildl_metis_dir)
  endif()
endif()
