#pragma once

#include <cuda_runtime_api.h>

namespace cutlass_gemm {

struct DeviceInfo {
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int arch = 0;  // 90, 100, or 0 when this library has no kernels for the device
};

// Cached per device after the first call; thread-safe.
const DeviceInfo& device_info(int device);

}  // namespace cutlass_gemm
