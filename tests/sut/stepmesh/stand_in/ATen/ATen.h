// Stand-in for libtorch's <ATen/ATen.h>, so that StepMesh's library builds CPU-only without
// libtorch: its include/ps/internal/backend.h includes this header unconditionally, and its
// CPU backend needs no more of it than a device of type CPU. Not StepMesh's code: put on the
// include path by build_stepmesh.sh only.
#ifndef FAULTLINE_STAND_IN_ATEN_H_
#define FAULTLINE_STAND_IN_ATEN_H_

// What StepMesh's files use of the standard library without including it themselves, having
// it through libtorch's headers.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace at {

enum class DeviceType { CPU };
constexpr DeviceType kCPU = DeviceType::CPU;

class Device {
 public:
  explicit Device(DeviceType type) : type_(type) {}
  DeviceType type() const { return type_; }

 private:
  DeviceType type_;
};

}  // namespace at

#endif  // FAULTLINE_STAND_IN_ATEN_H_
