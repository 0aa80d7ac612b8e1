# SPDX-License-Identifier: GPL-2.0-only
# Fails when DOC differs from `PVLOCK costs --markdown` (regenerate it with that command).
execute_process(COMMAND ${PVLOCK} costs --markdown OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pvlock costs --markdown exited ${rc}")
endif()
file(READ ${DOC} saved)
if(NOT generated STREQUAL saved)
  message(FATAL_ERROR "${DOC} is stale: regenerate it with `pvlock costs --markdown > docs/costs.md`")
endif()
