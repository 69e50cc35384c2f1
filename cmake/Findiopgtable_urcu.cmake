# SPDX-License-Identifier: MIT
#
# Finds liburcu-bp, the "bulletproof" flavour of userspace RCU that
# libiopgtable uses, and defines the imported target
#
#   iopgtable_urcu::urcu_bp   liburcu-bp (and liburcu-common where the
#                             installation splits it out), with its headers
#
# The same module serves the build tree and the installed package
# (iopgtableConfig.cmake finds it with find_dependency), so the static
# library's link interface names this target in both and a consumer gets
# full library paths, found the way the consumer's own build finds things:
# pkg-config (PKG_CONFIG_PATH) when present, then the usual CMake search
# (CMAKE_PREFIX_PATH, iopgtable_urcu_ROOT, the system paths).
#
# Result variables: iopgtable_urcu_FOUND, iopgtable_urcu_VERSION (when
# pkg-config knows it). Cache variables: IOPT_URCU_BP_INCLUDE_DIR,
# IOPT_URCU_BP_LIBRARY, IOPT_URCU_COMMON_LIBRARY.

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_IOPT_URCU_BP QUIET liburcu-bp)
endif()

find_path(IOPT_URCU_BP_INCLUDE_DIR NAMES urcu-bp.h
  HINTS ${PC_IOPT_URCU_BP_INCLUDEDIR} ${PC_IOPT_URCU_BP_INCLUDE_DIRS})
find_library(IOPT_URCU_BP_LIBRARY NAMES urcu-bp
  HINTS ${PC_IOPT_URCU_BP_LIBDIR} ${PC_IOPT_URCU_BP_LIBRARY_DIRS})
# liburcu 0.11 and later move the helpers every flavour shares into
# liburcu-common; its liburcu-bp.pc lists it, and a static liburcu-bp needs
# it. Older installations have none: optional.
find_library(IOPT_URCU_COMMON_LIBRARY NAMES urcu-common
  HINTS ${PC_IOPT_URCU_BP_LIBDIR} ${PC_IOPT_URCU_BP_LIBRARY_DIRS})
mark_as_advanced(IOPT_URCU_BP_INCLUDE_DIR IOPT_URCU_BP_LIBRARY
  IOPT_URCU_COMMON_LIBRARY)

if(PC_IOPT_URCU_BP_VERSION)
  set(iopgtable_urcu_VERSION ${PC_IOPT_URCU_BP_VERSION})
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(iopgtable_urcu
  REQUIRED_VARS IOPT_URCU_BP_LIBRARY IOPT_URCU_BP_INCLUDE_DIR
  VERSION_VAR iopgtable_urcu_VERSION)

if(iopgtable_urcu_FOUND AND NOT TARGET iopgtable_urcu::urcu_bp)
  add_library(iopgtable_urcu::urcu_bp UNKNOWN IMPORTED)
  set_target_properties(iopgtable_urcu::urcu_bp PROPERTIES
    IMPORTED_LOCATION "${IOPT_URCU_BP_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${IOPT_URCU_BP_INCLUDE_DIR}")
  if(IOPT_URCU_COMMON_LIBRARY)
    set_target_properties(iopgtable_urcu::urcu_bp PROPERTIES
      INTERFACE_LINK_LIBRARIES "${IOPT_URCU_COMMON_LIBRARY}")
  endif()
endif()
