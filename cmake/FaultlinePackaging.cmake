# What `cmake --install` puts where, and the Debian package `cpack -G DEB` makes of it:
#   bin/faultline                          the binary (its targets install themselves)
#   lib/faultline/interpose/               the interposer libraries (transports/interpose)
#   share/faultline/scenarios/             scenarios, suites, excludes, schemas, device profiles
#   share/faultline/schema/                the report and diagnose schemas
#   share/faultline/grafana/               the dashboard
#   share/faultline/prometheus/            the monitor's alerting rules
#   share/doc/faultline/                   README, docs/, examples/, copyright, changelog.gz
#   share/man/man1/                        faultline(1), faultline-COMMAND(1) (help2man)
#   /lib/systemd/system/, /etc/default/    units for the monitor and an agent, their settings
# The package is lintian-clean (tests/cmake/deb_package_test.sh runs lintian on it).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${FAULTLINE_INSTALL_DATADIR}/scenarios
        PATTERN README.md EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/reports/schema/ DESTINATION ${FAULTLINE_INSTALL_DATADIR}/schema)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/reports/grafana/ DESTINATION ${FAULTLINE_INSTALL_DATADIR}/grafana)
install(FILES ${PROJECT_SOURCE_DIR}/reports/prometheus/alerts.yml
        DESTINATION ${FAULTLINE_INSTALL_DATADIR}/prometheus)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/SECURITY.md
              ${PROJECT_SOURCE_DIR}/BENCHMARKS.md ${PROJECT_SOURCE_DIR}/packaging/debian/copyright
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ ${PROJECT_SOURCE_DIR}/examples
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Debian's changelog of a native package, compressed as Debian does (no name or time in it).
set(FAULTLINE_CHANGELOG_GZ ${CMAKE_BINARY_DIR}/packaging/changelog.gz)
add_custom_command(
  OUTPUT ${FAULTLINE_CHANGELOG_GZ}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/packaging
  COMMAND gzip -9n -c ${PROJECT_SOURCE_DIR}/packaging/debian/changelog > ${FAULTLINE_CHANGELOG_GZ}
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/debian/changelog
  COMMENT "changelog.gz")
add_custom_target(faultline_changelog ALL DEPENDS ${FAULTLINE_CHANGELOG_GZ})
install(FILES ${FAULTLINE_CHANGELOG_GZ} DESTINATION ${CMAKE_INSTALL_DOCDIR})

# A manual page per command, from its --help (help2man), remade with the binary.
find_program(FAULTLINE_HELP2MAN help2man)
if(FAULTLINE_HELP2MAN)
  set(FAULTLINE_MAN_STAMP ${CMAKE_BINARY_DIR}/man/faultline.1.gz)
  add_custom_command(
    OUTPUT ${FAULTLINE_MAN_STAMP}
    COMMAND ${PROJECT_SOURCE_DIR}/cmake/man_pages.sh $<TARGET_FILE:faultline>
            ${CMAKE_BINARY_DIR}/man ${PROJECT_VERSION}
    DEPENDS faultline ${PROJECT_SOURCE_DIR}/cmake/man_pages.sh
    COMMENT "manual pages (help2man)")
  add_custom_target(faultline_man_pages ALL DEPENDS ${FAULTLINE_MAN_STAMP})
  install(DIRECTORY ${CMAKE_BINARY_DIR}/man/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "help2man not found (Debian package help2man): no manual pages")
endif()

# systemd units: `faultline monitor`, and `faultline agent --reconnect` joining it.
install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/faultline-agent.service
              ${PROJECT_SOURCE_DIR}/packaging/systemd/faultline-monitor.service
        DESTINATION /lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/faultline-agent.default
        DESTINATION /etc/default RENAME faultline-agent)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/faultline-monitor.default
        DESTINATION /etc/default RENAME faultline-monitor)
file(WRITE ${CMAKE_BINARY_DIR}/packaging/conffiles
     "/etc/default/faultline-agent\n/etc/default/faultline-monitor\n")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME faultline)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(FAULTLINE_PACKAGE_MAINTAINER "faultline maintainers <faultline@users.noreply.github.com>"
    CACHE STRING "The package's Maintainer: whoever builds and ships it")
set(CPACK_PACKAGE_CONTACT "${FAULTLINE_PACKAGE_MAINTAINER}")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# The binaries stripped, their debug information in faultline-dbgsym (a .ddeb, by build id),
# as Debian ships them: CPack strips what it extracted (CPACK_STRIP_FILES would strip first,
# leaving nothing to extract).
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/packaging/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The runtime libraries the binary and the interposers link, as dpkg-shlibdeps finds them
# (libibverbs, prometheus-cpp, OpenSSL, the C++ runtime); libfabric, which faultline loads on
# first use (transports/src/ofi/libfabric_api.cpp), and libdw, which the interposers load to name
# a program's call sites (transports/interpose/function_names.cpp), by name.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libfabric1, libdw1")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Drives rdma-core verbs and libfabric through scripted failure scenarios\n\
between paired agents, injects faults into unmodified programs through\n\
interposers, and writes conformance reports (JSON, JUnit, Markdown, HTML)\n\
and Prometheus metrics.")
include(CPack)
