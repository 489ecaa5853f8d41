# Debian's hardening flags, as dpkg-buildflags gives them with hardening=+all: fortified libc
# calls, stack protector, format checks, full RELRO with immediate binding. On in the default
# preset (the build the package is made from); off in the sanitizer presets, whose runtimes
# and _FORTIFY_SOURCE get in each other's way. Position independence is the compiler's
# default on Debian already, and -fPIE would not do for the interposers' shared objects.
option(FAULTLINE_HARDENING "Compile and link with Debian's hardening flags (dpkg-buildflags)" OFF)
if(NOT FAULTLINE_HARDENING)
  return()
endif()
find_program(FAULTLINE_DPKG_BUILDFLAGS dpkg-buildflags)
if(NOT FAULTLINE_DPKG_BUILDFLAGS)
  message(FATAL_ERROR "FAULTLINE_HARDENING=ON needs dpkg-buildflags (Debian package dpkg-dev)")
endif()
foreach(kind CPPFLAGS CXXFLAGS LDFLAGS)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env DEB_BUILD_MAINT_OPTIONS=hardening=+all
            ${FAULTLINE_DPKG_BUILDFLAGS} --get ${kind}
    OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  # The hardening flags only: the build type chooses -O and -g.
  list(FILTER flags INCLUDE REGEX
       "^(-D_FORTIFY_SOURCE=|-fstack-protector|-fstack-clash-protection|-fcf-protection|-Wformat|-Werror=format-security|-Wl,-z,)")
  if(kind STREQUAL "LDFLAGS")
    add_link_options(${flags})
  else()
    add_compile_options(${flags})
  endif()
  list(APPEND FAULTLINE_HARDENING_FLAGS ${flags})
endforeach()
message(STATUS "Hardening flags (dpkg-buildflags): ${FAULTLINE_HARDENING_FLAGS}")
