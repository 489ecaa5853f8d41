# What `cmake --install` puts where, and the Debian package `cpack -G DEB` makes of it:
#   bin/faultline                          the binary (its targets install themselves)
#   lib/faultline/interpose/               the interposer libraries (transports/interpose)
#   share/faultline/scenarios/             scenarios, suites, excludes, schemas, device profiles
#   share/faultline/schema/                the report and diagnose schemas
#   share/faultline/grafana/               the dashboard
#   share/faultline/prometheus/            the monitor's alerting rules
#   share/doc/faultline/                   README, docs/, examples/
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${FAULTLINE_INSTALL_DATADIR}/scenarios
        PATTERN README.md EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/reports/schema/ DESTINATION ${FAULTLINE_INSTALL_DATADIR}/schema)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/reports/grafana/ DESTINATION ${FAULTLINE_INSTALL_DATADIR}/grafana)
install(FILES ${PROJECT_SOURCE_DIR}/reports/prometheus/alerts.yml
        DESTINATION ${FAULTLINE_INSTALL_DATADIR}/prometheus)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/SECURITY.md
              ${PROJECT_SOURCE_DIR}/BENCHMARKS.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ ${PROJECT_SOURCE_DIR}/examples
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME faultline)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "faultline maintainers <faultline@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# The runtime libraries the binary and the interposers link, as dpkg-shlibdeps finds them
# (libibverbs, prometheus-cpp, OpenSSL, the C++ runtime); libfabric, which faultline loads on
# first use (transports/src/ofi/libfabric_api.cpp), by name.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libfabric1")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Drives rdma-core verbs and libfabric through scripted failure scenarios between paired\n\
agents, injects faults into unmodified programs through interposers, and writes conformance\n\
reports (JSON, JUnit, Markdown, HTML) and Prometheus metrics.")
include(CPack)
