# SPDX-License-Identifier: MIT
#
# The static library ships one relocatable object in which only the public
# API (functions marked IOPT_API, default visibility) stays global.
#
# Every object is compiled with -fvisibility=hidden, so the module-internal
# functions and variables (tlb_init, buddy_take, plat_cpu_id, ...) are
# global-but-hidden: the shared library keeps them out of its dynamic
# symbol table, but in a plain archive they are ordinary global symbols and
# clash with a host program's own (QEMU has a tlb_init). So the objects are
# partially linked into one object (the compiler driver with -r, which
# resolves the calls between modules), and `objcopy --localize-hidden`
# then turns every hidden global of that object into a local symbol. The
# archive holds that single object.
#
# iopt_localize_check() verifies at configure time that the toolchain can
# do both steps; iopt_localized_object(OUT OBJLIB...) adds the custom command
# producing OUT from the objects of the object libraries OBJLIB....

# Success is cached: the check runs once per build tree (a failure is
# checked again on the next configure, after the toolchain is fixed).
function(iopt_localize_check)
  if(IOPT_LOCALIZE_WORKS)
    return()
  endif()
  if(CMAKE_INTERPROCEDURAL_OPTIMIZATION)
    # LTO objects hold compiler IR, whose symbols objcopy cannot change.
    iopt_localize_fail("CMAKE_INTERPROCEDURAL_OPTIMIZATION is on")
  endif()
  if(NOT CMAKE_OBJCOPY)
    iopt_localize_fail("no objcopy found (CMAKE_OBJCOPY)")
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/iopt_localize_check)
  file(MAKE_DIRECTORY ${dir})
  file(WRITE ${dir}/a.c
    "__attribute__((visibility(\"hidden\"))) int iopt_check_inner(void);\n"
    "__attribute__((visibility(\"default\"))) int iopt_check_outer(void);\n"
    "int iopt_check_outer(void) { return iopt_check_inner() + 1; }\n")
  file(WRITE ${dir}/b.c
    "__attribute__((visibility(\"hidden\"))) int iopt_check_inner(void);\n"
    "int iopt_check_inner(void) { return 41; }\n")
  iopt_localize_target(cc)
  iopt_localize_step(${dir} ${cc} -c a.c -o a.o)
  iopt_localize_step(${dir} ${cc} -c b.c -o b.o)
  iopt_localize_step(${dir} ${cc} -r -nostdlib a.o b.o -o ab.o)
  iopt_localize_step(${dir} ${CMAKE_OBJCOPY} --localize-hidden ab.o ab-local.o)
  set(IOPT_LOCALIZE_WORKS ON CACHE INTERNAL "toolchain can localise the archive")
endfunction()

# The compiler driver, with the target triple when cross-compiling with
# clang (CMAKE_C_COMPILER_TARGET), so that -r links objects of that target.
function(iopt_localize_target out)
  set(cc ${CMAKE_C_COMPILER})
  if(CMAKE_C_COMPILER_TARGET AND CMAKE_C_COMPILE_OPTIONS_TARGET)
    list(APPEND cc "${CMAKE_C_COMPILE_OPTIONS_TARGET}${CMAKE_C_COMPILER_TARGET}")
  endif()
  set(${out} ${cc} PARENT_SCOPE)
endfunction()

function(iopt_localize_step dir)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${dir}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    iopt_localize_fail("`${cmd}` failed: ${out}")
  endif()
endfunction()

function(iopt_localize_fail why)
  message(FATAL_ERROR
    "IOPT_LOCALIZE_STATIC: this toolchain cannot build the static library "
    "with its internal symbols made local: ${why}\n"
    "The archive needs a compiler driver that partially links (-r) and an "
    "objcopy with --localize-hidden (GNU binutils or llvm-objcopy; set "
    "CMAKE_OBJCOPY). Configure with -DIOPT_LOCALIZE_STATIC=OFF to ship a "
    "plain archive instead: its internal symbols (tlb_init, buddy_*, "
    "plat_*, ...) then stay global and may clash with the host program's.")
endfunction()

function(iopt_localized_object out)
  iopt_localize_target(cc)
  set(objs)
  foreach(objlib ${ARGN})
    list(APPEND objs $<TARGET_OBJECTS:${objlib}>)
  endforeach()
  string(REPLACE ";" " " names "${ARGN}")
  add_custom_command(OUTPUT ${out}
    COMMAND ${cc} -r -nostdlib -o ${out}.partial ${objs}
    COMMAND ${CMAKE_OBJCOPY} --localize-hidden ${out}.partial ${out}
    COMMAND ${CMAKE_COMMAND} -E remove ${out}.partial
    DEPENDS ${ARGN} ${objs}
    COMMENT "Partially linking ${names} and localising its hidden symbols"
    COMMAND_EXPAND_LISTS VERBATIM)
endfunction()
