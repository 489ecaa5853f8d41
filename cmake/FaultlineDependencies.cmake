# Every dependency is a Debian package, found with find_package or pkg_check_modules.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

function(faultline_require_package found debian_package what)
  if(NOT found)
    message(FATAL_ERROR "${what} was not found; install the Debian package '${debian_package}' "
                        "(ci/setup installs every dependency)")
  endif()
endfunction()

find_package(nlohmann_json 3.10 QUIET)
faultline_require_package("${nlohmann_json_FOUND}" nlohmann-json3-dev "nlohmann_json")
find_package(CLI11 QUIET)
faultline_require_package("${CLI11_FOUND}" libcli11-dev "CLI11")
find_package(OpenSSL QUIET COMPONENTS Crypto)
faultline_require_package("${OpenSSL_FOUND}" libssl-dev "OpenSSL libcrypto")
find_package(Boost 1.74 QUIET)
faultline_require_package("${Boost_FOUND}" libboost-dev "Boost (Asio)")
# valijson is header-only and ships no CMake config: find its header.
find_path(VALIJSON_INCLUDE_DIR valijson/validator.hpp)
faultline_require_package("${VALIJSON_INCLUDE_DIR}" libvalijson-dev "valijson (JSON Schema)")

pkg_check_modules(LIBFABRIC QUIET IMPORTED_TARGET libfabric)
faultline_resolve_option(FAULTLINE_WITH_OFI "${LIBFABRIC_FOUND}" libfabric-dev)

pkg_check_modules(IBVERBS QUIET IMPORTED_TARGET libibverbs)
faultline_resolve_option(FAULTLINE_WITH_VERBS "${IBVERBS_FOUND}" libibverbs-dev)

find_package(prometheus-cpp QUIET CONFIG)
faultline_require_package("${prometheus-cpp_FOUND}" prometheus-cpp-dev "prometheus-cpp (metrics)")
# libcurl pushes to a Pushgateway and reads back what it holds, each within a timeout.
pkg_check_modules(CURL QUIET IMPORTED_TARGET libcurl)
faultline_require_package("${CURL_FOUND}" libcurl4-openssl-dev "libcurl (Pushgateway reads)")
# RE2 matches a program's output against the checker's patterns in linear time and bounded
# stack, where std::regex recursed past the stack on a long line.
pkg_check_modules(RE2 QUIET IMPORTED_TARGET re2)
faultline_require_package("${RE2_FOUND}" libre2-dev "RE2 (the checker's patterns)")

if(FAULTLINE_BUILD_TESTS)
  find_package(Catch2 2.13 QUIET)
  faultline_require_package("${Catch2_FOUND}" catch2 "Catch2 2.13")
endif()

message(STATUS "faultline: ofi=${FAULTLINE_WITH_OFI_ENABLED} verbs=${FAULTLINE_WITH_VERBS_ENABLED}")
