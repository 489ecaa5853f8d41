cmake_policy(SET CMP0057 NEW)
# Script mode: lists the Catch2 test cases of TEST_EXECUTABLE and writes CTEST_FILE, one
# add_test per test case, with the case's tags from the known set as CTest labels.
# Every test case must carry [unit] or [integration], no ';' in its name and no '-' at its
# start (Catch would read the filter as an option). Each test runs
# with --warn NoTests, so a filter that selects nothing fails instead of passing empty.
set(known_tags unit integration ofi verbs slow control long stepmesh)

function(list_test_names spec out_var)
  execute_process(COMMAND "${TEST_EXECUTABLE}" ${spec} --list-test-names-only
                  OUTPUT_VARIABLE output RESULT_VARIABLE result
                  WORKING_DIRECTORY "${TEST_WORKING_DIR}")
  if(result LESS 0)
    message(FATAL_ERROR "Listing the tests of ${TEST_EXECUTABLE} failed (${result}): ${output}")
  endif()
  string(REGEX MATCH "[^\n]*;[^\n]*" with_semicolon "${output}")
  if(with_semicolon)
    message(FATAL_ERROR "Test case '${with_semicolon}' in ${TEST_EXECUTABLE} has a ';' in its "
                        "name: CTest cuts the name there and its filter then selects nothing")
  endif()
  string(REGEX MATCH "(^|\n)-[^\n]*" with_dash "${output}")
  if(with_dash)
    message(FATAL_ERROR "Test case '${with_dash}' in ${TEST_EXECUTABLE} starts with '-': Catch "
                        "reads its filter as an option and the test cannot run")
  endif()
  string(REPLACE "\n" ";" lines "${output}")
  set(names "")
  foreach(line IN LISTS lines)
    if(NOT line STREQUAL "")
      list(APPEND names "${line}")
    endif()
  endforeach()
  set(${out_var} "${names}" PARENT_SCOPE)
endfunction()

list_test_names("" all_names)
foreach(tag IN LISTS known_tags)
  list_test_names("[${tag}]" names_${tag})
endforeach()

set(script "")
foreach(name IN LISTS all_names)
  set(labels "")
  foreach(tag IN LISTS known_tags)
    if(name IN_LIST names_${tag})
      list(APPEND labels ${tag})
    endif()
  endforeach()
  if(NOT "unit" IN_LIST labels AND NOT "integration" IN_LIST labels)
    message(FATAL_ERROR "Test case '${name}' in ${TEST_EXECUTABLE} has neither [unit] nor [integration]")
  endif()
  # Catch2 test specs treat these characters specially; escape them to select exactly one case.
  string(REGEX REPLACE "([],[\\\\])" "\\\\\\1" filter "${name}")
  # [long]: a case that runs past the default timeouts of the lanes (a sweep): 300 s of its own.
  # The slow and long ones start first where CTest runs tests side by side (its COST, until it
  # has measured them): one started last would run alone at the end.
  set(timeout "")
  if("long" IN_LIST labels)
    set(timeout " TIMEOUT 300 COST 20")
  elseif("slow" IN_LIST labels)
    set(timeout " COST 10")
  endif()
  # [stepmesh]: a whole StepMesh job (scheduler, server, worker), whose rdma_cm connect loop
  # (1 s to resolve, then again) never connects on a starved CPU. Two side by side in the
  # 2-vCPU Soft-RoCE guest, or one beside Gloo's sweep ([long], two points at a time), hung
  # (measured in CI): one of these at a time.
  if("stepmesh" IN_LIST labels OR "long" IN_LIST labels)
    string(APPEND timeout " RESOURCE_LOCK whole_guest_job")
  endif()
  string(APPEND script
    "add_test([==[${name}]==] \"${TEST_EXECUTABLE}\" [==[${filter}]==] --warn NoTests)\n"
    "set_tests_properties([==[${name}]==] PROPERTIES LABELS \"${labels}\" "
    "WORKING_DIRECTORY \"${TEST_WORKING_DIR}\" SKIP_RETURN_CODE 77${timeout})\n")
endforeach()
file(WRITE "${CTEST_FILE}" "${script}")
