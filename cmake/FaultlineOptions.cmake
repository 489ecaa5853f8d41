# Tri-state feature options: AUTO builds the feature when its dependency is found, ON makes a
# missing dependency a configure error naming the Debian package, OFF never builds it.
function(faultline_tristate_option name doc)
  set(${name} AUTO CACHE STRING "${doc} (AUTO, ON or OFF)")
  set_property(CACHE ${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${name}}" value)
  if(NOT value MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${name} is '${${name}}'; expected AUTO, ON or OFF")
  endif()
  set(${name} "${value}" PARENT_SCOPE)
endfunction()

faultline_tristate_option(FAULTLINE_WITH_OFI "Build the libfabric (ofi) transport")
faultline_tristate_option(FAULTLINE_WITH_VERBS "Build the rdma-core (verbs) transport")

# Resolves an option against whether its dependency was found. Sets <name>_ENABLED.
function(faultline_resolve_option name found debian_package)
  if(${name} STREQUAL "OFF")
    set(${name}_ENABLED OFF PARENT_SCOPE)
  elseif(found)
    set(${name}_ENABLED ON PARENT_SCOPE)
  elseif(${name} STREQUAL "ON")
    message(FATAL_ERROR "${name}=ON but its dependency was not found; install the Debian package "
                        "'${debian_package}' (apt-get install ${debian_package}) or set ${name}=AUTO")
  else()
    message(STATUS "${name}: dependency not found (Debian package ${debian_package}); building without it")
    set(${name}_ENABLED OFF PARENT_SCOPE)
  endif()
endfunction()
