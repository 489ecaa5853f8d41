# faultline_add_library(<area> SOURCES ... [DEPS ...] [PRIVATE_DEPS ...])
# One library per source folder: target faultline_<area>, alias faultline::<area>, public
# headers in <folder>/include/faultline/<area>/.
function(faultline_add_library area)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target faultline_${area})
  add_library(${target} STATIC ${ARG_SOURCES})
  add_library(faultline::${area} ALIAS ${target})
  target_include_directories(${target} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
                                        PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_link_libraries(${target} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  faultline_set_warnings(${target})
  target_precompile_headers(${target} PRIVATE ${FAULTLINE_PRECOMPILED_HEADERS})
endfunction()

# The headers most translation units parse, nlohmann/json above all, compiled once a target
# rather than once a file. -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON turns them off (ci/lint does:
# clang-tidy cannot read GCC's precompiled headers).
set(FAULTLINE_PRECOMPILED_HEADERS <nlohmann/json.hpp> <chrono> <functional> <map> <memory>
    <optional> <sstream> <string> <vector>)

function(faultline_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion -Wno-missing-field-initializers -Wswitch-enum
                                           -Wnon-virtual-dtor)
endfunction()

# faultline_add_test(<name> SOURCES ... [DEPS ...])
# A Catch2 test executable. Every test case is registered with CTest; its Catch2 tags
# ([unit], [integration], [ofi], [verbs], [slow], [control], [long]) become CTest labels; [long]
# also gives the test 300 s (it runs past the lanes' default timeouts).
function(faultline_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE faultline_test_main ${ARG_DEPS})
  faultline_set_warnings(${name})
  target_precompile_headers(${name} PRIVATE ${FAULTLINE_PRECOMPILED_HEADERS} <catch2/catch.hpp>)
  set(ctest_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_tests.cmake")
  add_custom_command(
    TARGET ${name} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D "TEST_EXECUTABLE=$<TARGET_FILE:${name}>"
            -D "TEST_WORKING_DIR=${CMAKE_BINARY_DIR}" -D "CTEST_FILE=${ctest_file}"
            -P "${PROJECT_SOURCE_DIR}/cmake/catch_tests_with_labels.cmake"
    VERBATIM)
  # Until the executable is built there is no list; CTest then shows one failing placeholder.
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_include.cmake")
  file(WRITE "${include_file}"
       "if(EXISTS \"${ctest_file}\")\n  include(\"${ctest_file}\")\n"
       "else()\n  add_test(${name}_NOT_BUILT ${name}_NOT_BUILT)\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
