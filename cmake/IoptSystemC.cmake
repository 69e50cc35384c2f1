# The optional SystemC TLM-2.0 components (docs/integration.md): the
# iopgtable-systemc library (src/systemc), its example platform and tests
# (examples/systemc). Included from the top-level CMakeLists.txt when
# IOPT_SYSTEMC is not OFF; IOPT_SYSTEMC=ON makes a missing SystemC an
# error, AUTO skips with a message.
include(CheckLanguage)

set(IOPT_SYSTEMC_SKIP "")
if(IOPT_FUZZ)
  # libFuzzer builds fuzz the C library only.
  set(IOPT_SYSTEMC_SKIP "fuzz build")
else()
  check_language(CXX)
  if(NOT CMAKE_CXX_COMPILER)
    set(IOPT_SYSTEMC_SKIP "no C++ compiler")
  endif()
endif()

if(NOT IOPT_SYSTEMC_SKIP)
  enable_language(CXX)
  # SystemC: pkg-config first (Debian's libsystemc-dev), then the CMake
  # package an Accellera CMake build installs.
  set(IOPT_SYSTEMC_DEP "")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(SYSTEMC QUIET IMPORTED_TARGET systemc)
  endif()
  if(SYSTEMC_FOUND)
    set(IOPT_SYSTEMC_DEP PkgConfig::SYSTEMC)
    set(IOPT_SYSTEMC_VERSION ${SYSTEMC_VERSION})
    set(IOPT_SYSTEMC_FIND "pkg")
  else()
    find_package(SystemCLanguage CONFIG QUIET)
    if(SystemCLanguage_FOUND)
      set(IOPT_SYSTEMC_DEP SystemC::systemc)
      set(IOPT_SYSTEMC_VERSION ${SystemCLanguage_VERSION})
      set(IOPT_SYSTEMC_FIND "cmake")
    endif()
  endif()
  if(NOT IOPT_SYSTEMC_DEP)
    set(IOPT_SYSTEMC_SKIP "SystemC not found (pkg-config 'systemc' or CMake package SystemCLanguage; Debian: libsystemc-dev, scripts/deps installs it)")
  endif()
endif()

if(IOPT_SYSTEMC_SKIP)
  if(IOPT_SYSTEMC STREQUAL "ON")
    message(FATAL_ERROR "IOPT_SYSTEMC=ON but: ${IOPT_SYSTEMC_SKIP}")
  endif()
  message(STATUS "SystemC components: skipped: ${IOPT_SYSTEMC_SKIP}")
else()
  message(STATUS "SystemC components: building with SystemC ${IOPT_SYSTEMC_VERSION}")
  # No -Wshadow: in C++ the C header's function iopt_pgtable_walk() "hides the
  # constructor" of struct iopt_pgtable_walk (<iopgtable/pgtable.h>).
  set(IOPT_CXX_WARNINGS -Wall -Wextra -Wno-unused-parameter)
  if(IOPT_WERROR)
    list(APPEND IOPT_CXX_WARNINGS -Werror)
  endif()
  add_subdirectory(src/systemc)
  add_subdirectory(examples/systemc)
endif()
