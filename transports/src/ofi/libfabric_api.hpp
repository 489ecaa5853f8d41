#pragma once

#include <rdma/fabric.h>

#include <cstdint>
#include <string>

// libfabric's entry points faultline calls (everything else it uses is an inline call through
// an object's ops table), resolved from libfabric.so.1 on first use: a faultline process that
// never opens a fabric (`sut exec`, `sut sweep`, `report`, the verbs transport) never loads
// libfabric. Loading it costs every process 100-200 ms: Debian's libfabric links libpsm2,
// whose constructor sleeps to calibrate its clock (cornelisnetworks/opa-psm2 issue 73).
namespace faultline::transports::ofi::api {

/// Why libfabric.so.1 cannot be used (it cannot be loaded, or lacks a function faultline calls,
/// named), or "" when it can. Every call below fails when this is not empty.
const std::string& load_error();

int getinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
            const fi_info* hints, fi_info** info);
int fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
fi_info* dupinfo(const fi_info* info);
void freeinfo(fi_info* info);
/// fi_strerror's text; when libfabric cannot be loaded, why (dlopen's error).
const char* strerror(int errnum);

}  // namespace faultline::transports::ofi::api
