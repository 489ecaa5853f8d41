// Stand-in for libtorch's <torch/torch.h> (see ../ATen/ATen.h): StepMesh's RDMA van logs with
// the glog-style LOG(severity) stream that libtorch brings along; here each LOG line goes to
// stderr, whole, as glog writes it.
#ifndef FAULTLINE_STAND_IN_TORCH_H_
#define FAULTLINE_STAND_IN_TORCH_H_

#include <iostream>
#include <sstream>

namespace faultline_stand_in {

class LogLine {
 public:
  explicit LogLine(const char* severity) { line_ << severity[0] << ' '; }
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;
  ~LogLine() { std::cerr << line_.str() << '\n' << std::flush; }
  template <typename T>
  LogLine& operator<<(const T& value) {
    line_ << value;
    return *this;
  }
  LogLine& operator<<(std::ostream& (*manipulator)(std::ostream&)) {
    line_ << manipulator;
    return *this;
  }

 private:
  std::ostringstream line_;
};

}  // namespace faultline_stand_in

#ifndef LOG
#define LOG(severity) ::faultline_stand_in::LogLine(#severity)
#endif

#endif  // FAULTLINE_STAND_IN_TORCH_H_
