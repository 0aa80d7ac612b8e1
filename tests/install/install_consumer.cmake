# SPDX-License-Identifier: GPL-2.0-only
# cmake -DPVLOCK_BUILD_DIR=... -DCONSUMER_SOURCE_DIR=... -DWORK_DIR=... -DCXX_COMPILER=...
#       -P install_consumer.cmake
# Installs the pvlock build tree into WORK_DIR/prefix, builds the consumer example against
# it and runs both the consumer and the installed `pvlock` CLI.
foreach(var PVLOCK_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_consumer.cmake: ${var} is not set")
  endif()
endforeach()

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${step} failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})

run(install ${CMAKE_COMMAND} --install ${PVLOCK_BUILD_DIR} --prefix ${prefix})
foreach(f include/pvlock/lock/registry.hpp include/pvlock/env/native.hpp bin/pvlock)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "install did not produce ${prefix}/${f}")
  endif()
endforeach()
file(GLOB_RECURSE configs ${prefix}/*/pvlockConfig.cmake)
if(NOT configs)
  message(FATAL_ERROR "install did not produce pvlockConfig.cmake under ${prefix}")
endif()

run(configure ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_BUILD_TYPE=Release)
run(build ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(consumer ${WORK_DIR}/build/consumer)
if(NOT last_output MATCHES "SUCCESS")
  message(FATAL_ERROR "consumer did not report SUCCESS:\n${last_output}")
endif()
run(installed-cli ${prefix}/bin/pvlock locks)
if(NOT last_output MATCHES "mcs")
  message(FATAL_ERROR "installed pvlock CLI did not list the locks:\n${last_output}")
endif()
# The installed binary finds its experiments under <prefix>/share/pvlock from any working
# directory (no source path compiled in): asked for an experiment that does not exist, it
# must list the shipped ones.
execute_process(COMMAND ${prefix}/bin/pvlock reproduce --only no-such-experiment
                WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "seed000")
  message(FATAL_ERROR "installed pvlock did not find its experiments (exit ${rc}):\n${out}${err}")
endif()
message(STATUS "installed pvlock at ${prefix}; consumer built and ran")
