# SPDX-License-Identifier: GPL-2.0-only
# pvlock_link(TARGET <PRIVATE|PUBLIC|INTERFACE> lib...): target_link_libraries that refuses a
# library name which is not a target of this build. A plain target_link_libraries would take
# a misspelt or not-yet-defined target for a system library and fail only at link time, or
# not at all; the old "link it if it exists" loops skipped it silently.
function(pvlock_link target scope)
  foreach(lib ${ARGN})
    if(NOT TARGET ${lib})
      message(FATAL_ERROR "pvlock_link(${target}): '${lib}' is not a target of this build "
                          "(misspelt, or its add_subdirectory() comes later)")
    endif()
  endforeach()
  target_link_libraries(${target} ${scope} ${ARGN})
endfunction()
