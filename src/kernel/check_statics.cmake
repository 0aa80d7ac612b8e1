# SPDX-License-Identifier: GPL-2.0-only
# Run after pvlock_kernel_c is built: the kernel objects may keep writable data only in the
# shim's per-CPU section (per kernel instance) -- a plain static there would be shared by
# every simulated guest. The file statics the prelude redirects (pv_lock_hash and its bits)
# do not appear; boot parameters that no lock path reads are allowed by name (with a
# variant's symbol prefix too). Kernel variants (variants.cmake) are one object each,
# kernel-<variant>.o; no global symbol may be defined by two members, or two builds of the
# same kernel file would share (or silently pick) one function or variable.
#   cmake -DOBJDUMP=... -DLIB=libpvlock_kernel_c.a -P check_statics.cmake
cmake_minimum_required(VERSION 3.25)
set(allowed nopvspin)
execute_process(COMMAND ${OBJDUMP} -t ${LIB} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "objdump -t ${LIB} failed")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(member "")
set(bad "")
set(globals "")
set(twice "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([A-Za-z0-9_.-]+\\.o): +file format")
    set(member ${CMAKE_MATCH_1})
    continue()
  endif()
  if(line MATCHES "^[0-9a-f]+ g[ A-Za-z]+ ([^ \t]+)[ \t]+[0-9a-f]+ (.+)$"
     AND NOT CMAKE_MATCH_1 STREQUAL "*UND*")
    set(sym "${CMAKE_MATCH_2}")
    if(sym IN_LIST globals)
      list(APPEND twice "${member}:${sym}")
    else()
      list(APPEND globals "${sym}")
    endif()
  endif()
  if(member MATCHES "^(qspinlock|osq_lock)\\.c\\.o$|^kernel-[A-Za-z0-9_]+\\.o$"
     AND line MATCHES " O (\\.data|\\.bss)[^ \t]*[ \t]+[0-9a-f]+ (.+)$")
    # AddressSanitizer gives every global an ODR indicator byte, __odr_asan.<name>: it
    # belongs to the global it names. A variant's objcopy prefix comes before it.
    string(REGEX REPLACE "^pvkv_[A-Za-z0-9_]*_(__odr_asan\\.)" "\\1" sym "${CMAKE_MATCH_2}")
    string(REGEX REPLACE "^__odr_asan\\." "" sym "${sym}")
    string(REGEX REPLACE "^pvkv_[A-Za-z0-9_]+_(nopvspin)$" "\\1" sym "${sym}")
    if(NOT sym IN_LIST allowed)
      list(APPEND bad "${member}:${sym}")
    endif()
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "kernel objects keep writable statics the shim does not make per "
                      "kernel instance: ${bad} (map them in src/kernel/shim/include/pvk/prelude.h)")
endif()
if(twice)
  message(FATAL_ERROR "global symbols defined twice in ${LIB}: ${twice} (every kernel "
                      "variant's symbols carry its prefix, src/kernel/rename_symbols.cmake)")
endif()
