# SPDX-License-Identifier: GPL-2.0-only
# Build step of a kernel variant (src/kernel/variants.cmake): links the variant's objects
# (its qspinlock.c, osq_lock.c and the shim's entry.c) into one relocatable object and gives
# every global symbol it defines the variant's prefix, so that any number of builds of the
# same kernel files live in one binary. References between the variant's own objects are
# renamed with them; what the shim's glue defines (pvk_cur, lockevents, ...) stays shared.
# A symbol cannot be renamed by a macro in the prelude: qspinlock_paravirt.h tests
# `#ifndef __pv_queued_spin_unlock` to let an architecture supply its own.
#   cmake -DLD=ld -DNM=nm -DOBJCOPY=objcopy -DPREFIX=pvkv_x_ -DOBJECTS="a.o|b.o" -DOUT=x.o -P ...
cmake_minimum_required(VERSION 3.25)
foreach(v LD NM OBJCOPY PREFIX OBJECTS OUT)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "rename_symbols.cmake: -D${v}=... is required")
  endif()
endforeach()
string(REPLACE "|" ";" objects "${OBJECTS}")
set(joined "${OUT}.joined.o")
execute_process(COMMAND ${LD} -r -o ${joined} ${objects} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ld -r of ${objects} failed: ${err}")
endif()
execute_process(COMMAND ${NM} -g --defined-only ${joined} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -g ${joined} failed")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(map "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9a-fA-F]* *[A-Za-z] (.+)$")
    string(APPEND map "${CMAKE_MATCH_1} ${PREFIX}${CMAKE_MATCH_1}\n")
  endif()
endforeach()
if(map STREQUAL "")
  message(FATAL_ERROR "${joined} defines no global symbol")
endif()
file(WRITE ${OUT}.syms "${map}")
execute_process(COMMAND ${OBJCOPY} --redefine-syms=${OUT}.syms ${joined} ${OUT}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "objcopy --redefine-syms of ${joined} failed: ${err}")
endif()
file(REMOVE ${joined})
