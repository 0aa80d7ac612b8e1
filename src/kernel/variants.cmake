# SPDX-License-Identifier: GPL-2.0-only
# Kernel variants: the same kernel files with a change applied, built beside the stock ones
# as kernel:<variant>/qspinlock, kernel:<variant>/pvqspinlock and kernel:<variant>/osq.
#
#   -DPVLOCK_KERNEL_VARIANTS="name=change;name=-change;..."
# A change is a semantic patch (*.cocci, applied with spatch) or a plain diff / `git
# format-patch` mail (applied with patch -p1 to the tree's root; a leading '-' applies it in
# reverse). Relative paths are taken from the source directory. A change that does not
# apply stops the configure with the variant's name and the file.
#
# PVLOCK_KERNEL_DEFAULT_VARIANTS (ON) also builds the project's own descriptions of the
# seeds' changes (src/kernel/changes/); one whose tool is missing or that does not apply to
# the tree is left out with the reason, which `pvlock locks` prints.
#
# Included by src/kernel/CMakeLists.txt once the stock kernel library is defined; uses
# ksrc, kernel_files, kernel_warning_options and pvlock_kernel_use_shim_tree().

set(PVLOCK_KERNEL_VARIANTS "" CACHE STRING
    "Kernel variants to build: name=change;... (change: *.cocci, or a diff; '-diff' reversed)")
option(PVLOCK_KERNEL_DEFAULT_VARIANTS
       "Also build the project's own kernel variants (src/kernel/changes/)" ON)
include(${CMAKE_CURRENT_LIST_DIR}/apply_change.cmake)
find_program(PVLOCK_SPATCH spatch)
find_program(PVLOCK_PATCH patch)

# name -> change (absolute, '-' kept), the description `pvlock locks` prints, and whether a
# failure stops the configure (the user's variants) or leaves the variant out (defaults).
set(variant_names "")
set(not_built "")
function(pvlock_kernel_escape text out)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\n" " " text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

macro(pvlock_kernel_add_variant_spec name change required)
  if(NOT "${name}" MATCHES "^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    message(FATAL_ERROR "PVLOCK_KERNEL_VARIANTS: '${name}' is not a variant name "
                        "(letters, digits, '_', '.', '-'; first a letter or digit)")
  endif()
  string(MAKE_C_IDENTIFIER "${name}" _ident)
  foreach(_other IN LISTS variant_names)
    string(MAKE_C_IDENTIFIER "${_other}" _oident)
    if(_oident STREQUAL _ident)
      message(FATAL_ERROR "PVLOCK_KERNEL_VARIANTS: variant '${name}' is given twice "
                          "(or as '${_other}', the same symbol prefix)")
    endif()
  endforeach()
  list(APPEND variant_names "${name}")
  set(variant_change_${_ident} "${change}")
  set(variant_required_${_ident} ${required})
endmacro()

if(PVLOCK_KERNEL_DEFAULT_VARIANTS)
  pvlock_kernel_add_variant_spec(wait-early-preempted
    "${CMAKE_CURRENT_SOURCE_DIR}/changes/wait-early-preempted.cocci" FALSE)
endif()
foreach(spec IN LISTS PVLOCK_KERNEL_VARIANTS)
  if(NOT spec MATCHES "^([^=]+)=(-?)(.+)$")
    message(FATAL_ERROR "PVLOCK_KERNEL_VARIANTS: '${spec}' is not name=change")
  endif()
  set(_name "${CMAKE_MATCH_1}")
  set(_rev "${CMAKE_MATCH_2}")
  set(_file "${CMAKE_MATCH_3}")
  if(NOT IS_ABSOLUTE "${_file}")
    set(_file "${PROJECT_SOURCE_DIR}/${_file}")
  endif()
  pvlock_kernel_add_variant_spec("${_name}" "${_rev}${_file}" TRUE)
endforeach()

set(variant_list "")
set(variant_skipped "")
foreach(name IN LISTS variant_names)
  string(MAKE_C_IDENTIFIER "${name}" ident)
  set(change "${variant_change_${ident}}")
  string(REGEX REPLACE "^-" "" file "${change}")
  if(EXISTS "${file}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${file}")
  endif()
  file(RELATIVE_PATH shown "${PROJECT_SOURCE_DIR}" "${file}")
  if(shown MATCHES "^\\.\\./")
    set(shown "${file}")
  endif()
  if(file MATCHES "\\.cocci$")
    set(kind "semantic patch")
  elseif(change MATCHES "^-")
    set(kind "diff, in reverse")
  else()
    set(kind "diff")
  endif()

  # Apply to a scratch copy of the stock files, then copy what differs into the variant's
  # tree: an unchanged change recompiles nothing on the next configure.
  set(vdir ${CMAKE_CURRENT_BINARY_DIR}/variants/${name})
  file(REMOVE_RECURSE ${vdir}/scratch)
  foreach(f IN LISTS kernel_files)
    configure_file(${ksrc}/${f} ${vdir}/scratch/${f} COPYONLY)
  endforeach()
  pvlock_kernel_apply_change("${name}" "${change}" "${vdir}/scratch" "${PVLOCK_SPATCH}"
                             "${PVLOCK_PATCH}" error)
  if(error)
    if(variant_required_${ident})
      message(FATAL_ERROR "${error}")
    endif()
    message(STATUS "pvlock ${error}: not built")
    pvlock_kernel_escape("not built: ${error}" reason)
    string(APPEND variant_skipped " \\\n  X(\"${name}\", \"${reason}\")")
    continue()
  endif()
  foreach(f IN LISTS kernel_files)
    configure_file(${vdir}/scratch/${f} ${vdir}/linux/${f} COPYONLY)
  endforeach()
  file(REMOVE_RECURSE ${vdir}/scratch)
  message(STATUS "pvlock kernel variant ${name}: Linux ${kernel_version} + ${shown} (${kind})")

  set(vsrc ${vdir}/linux)
  set(vsources ${vsrc}/kernel/locking/qspinlock.c ${vsrc}/kernel/locking/osq_lock.c)
  add_library(pvlock_kernel_v_${ident} OBJECT ${vsources} shim/src/entry.c)
  pvlock_kernel_use_shim_tree(pvlock_kernel_v_${ident} ${vsrc})
  set_source_files_properties(${vsources} PROPERTIES COMPILE_OPTIONS "${kernel_warning_options}")
  if(PVLOCK_SANITIZE STREQUAL "thread")
    set_property(SOURCE ${vsources} APPEND PROPERTY COMPILE_OPTIONS -fno-sanitize=thread)
  endif()
  set_target_properties(pvlock_kernel_v_${ident} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  set(out ${vdir}/kernel-${ident}.o)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DLD=${CMAKE_LINKER} -DNM=${CMAKE_NM} -DOBJCOPY=${CMAKE_OBJCOPY}
            -DPREFIX=pvkv_${ident}_ "-DOBJECTS=$<JOIN:$<TARGET_OBJECTS:pvlock_kernel_v_${ident}>,|>"
            -DOUT=${out} -P ${CMAKE_CURRENT_SOURCE_DIR}/rename_symbols.cmake
    DEPENDS pvlock_kernel_v_${ident} $<TARGET_OBJECTS:pvlock_kernel_v_${ident}>
            ${CMAKE_CURRENT_SOURCE_DIR}/rename_symbols.cmake
    COMMENT "Prefixing kernel variant ${name}'s symbols with pvkv_${ident}_" VERBATIM)
  target_sources(pvlock_kernel_c PRIVATE ${out})
  pvlock_kernel_escape("${shown} (${kind})" described)
  string(APPEND variant_list " \\\n  X(${ident}, \"${name}\", \"${described}\")")
endforeach()

# The C++ side (include/pvlock/kernel/variants.hpp) declares each variant's prefixed entry
# points and registers its three locks from this list.
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/generated/pvlock/kernel/variant_list.h CONTENT
"/* Generated by src/kernel/variants.cmake from PVLOCK_KERNEL_VARIANTS. */
#ifndef PVLOCK_KERNEL_VARIANT_LIST_H
#define PVLOCK_KERNEL_VARIANT_LIST_H
/* X(identifier, name, change): the variants built. */
#define PVLOCK_KERNEL_VARIANT_LIST(X)${variant_list}
/* X(name, reason): the variants asked for that were left out. */
#define PVLOCK_KERNEL_VARIANTS_NOT_BUILT(X)${variant_skipped}
#endif
" @ONLY)
target_include_directories(pvlock_kernel INTERFACE ${CMAKE_CURRENT_BINARY_DIR}/generated)
