# SPDX-License-Identifier: GPL-2.0-only
# Kernel variants' changes (src/kernel/apply_change.cmake) on a copy of the kernel files the
# build unpacked: a tiny plain diff applies forward and, given as '-diff', in reverse; the
# project's semantic patch applies once and then matches nothing; a broken diff fails with
# the variant's name and the file.
#   cmake -DKSRC=build/src/kernel/linux -DWORK=dir -DSRC=src/kernel -P variant_apply_test.cmake
cmake_minimum_required(VERSION 3.25)
include(${SRC}/apply_change.cmake)
find_program(SPATCH spatch)
find_program(PATCH patch)
set(tree ${WORK}/tree)
file(REMOVE_RECURSE ${WORK})
file(COPY ${KSRC}/kernel DESTINATION ${tree})
set(h ${tree}/kernel/locking/qspinlock_paravirt.h)
file(READ ${h} stock)
if(NOT stock MATCHES "#define PV_PREV_CHECK_MASK\t0xff\n")
  message(FATAL_ERROR "the tree's qspinlock_paravirt.h has no '#define PV_PREV_CHECK_MASK\\t0xff'")
endif()

# A one-line diff of the tree, made by diff -u.
string(REPLACE "#define PV_PREV_CHECK_MASK\t0xff\n" "#define PV_PREV_CHECK_MASK\t0x7f\n" masked "${stock}")
file(WRITE ${WORK}/masked.h "${masked}")
execute_process(COMMAND diff -u --label a/kernel/locking/qspinlock_paravirt.h
                        --label b/kernel/locking/qspinlock_paravirt.h ${h} ${WORK}/masked.h
                OUTPUT_FILE ${WORK}/mask.diff)

pvlock_kernel_apply_change(mask ${WORK}/mask.diff ${tree} "${SPATCH}" "${PATCH}" err)
file(READ ${h} now)
if(err OR NOT now MATCHES "#define PV_PREV_CHECK_MASK\t0x7f\n")
  message(FATAL_ERROR "the diff did not apply forward: ${err}")
endif()
pvlock_kernel_apply_change(mask ${WORK}/mask.diff ${tree} "${SPATCH}" "${PATCH}" err)
if(NOT err MATCHES "kernel variant 'mask': change .*mask.diff: does not apply forward")
  message(FATAL_ERROR "an already applied diff applied again: '${err}'")
endif()
pvlock_kernel_apply_change(unmask -${WORK}/mask.diff ${tree} "${SPATCH}" "${PATCH}" err)
file(READ ${h} now)
if(err OR NOT now STREQUAL stock)
  message(FATAL_ERROR "the diff did not apply in reverse: ${err}")
endif()

# A diff of a file the shim does not build.
file(WRITE ${WORK}/broken.diff
"--- a/kernel/locking/mutex.c\n+++ b/kernel/locking/mutex.c\n@@ -1,1 +1,1 @@\n-x\n+y\n")
pvlock_kernel_apply_change(broken ${WORK}/broken.diff ${tree} "${SPATCH}" "${PATCH}" err)
if(NOT err MATCHES "^kernel variant 'broken': change .*broken.diff: does not apply forward")
  message(FATAL_ERROR "a broken diff did not fail clearly: '${err}'")
endif()
pvlock_kernel_apply_change(missing ${WORK}/none.diff ${tree} "${SPATCH}" "${PATCH}" err)
if(NOT err MATCHES "kernel variant 'missing': change .*none.diff: no such file")
  message(FATAL_ERROR "a missing change did not fail clearly: '${err}'")
endif()

if(SPATCH)
  set(cocci ${SRC}/changes/wait-early-preempted.cocci)
  pvlock_kernel_apply_change(w ${cocci} ${tree} "${SPATCH}" "${PATCH}" err)
  file(READ ${h} now)
  if(err OR NOT now MATCHES "!= vcpu_running \\|\\| vcpu_is_preempted\\(prev->cpu\\);")
    message(FATAL_ERROR "the semantic patch did not restore the 2017 rule: ${err}")
  endif()
  pvlock_kernel_apply_change(w ${cocci} ${tree} "${SPATCH}" "${PATCH}" err)
  if(NOT err MATCHES "kernel variant 'w': .*the semantic patch matches nothing")
    message(FATAL_ERROR "the semantic patch applied twice: '${err}'")
  endif()
  pvlock_kernel_apply_change(w -${cocci} ${tree} "${SPATCH}" "${PATCH}" err)
  if(NOT err MATCHES "a semantic patch has no reverse")
    message(FATAL_ERROR "a reversed semantic patch did not fail clearly: '${err}'")
  endif()
endif()
file(REMOVE_RECURSE ${WORK})
message(STATUS "kernel variant changes: all cases behave")
