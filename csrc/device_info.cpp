// Per-device facts queried once (a device query can take milliseconds; see NVIDIA/cutlass#927).
#include "device_info.h"

#include <array>
#include <mutex>

namespace cutlass_gemm {

namespace {
constexpr int kMaxDevices = 64;
std::array<std::once_flag, kMaxDevices> g_once;
std::array<DeviceInfo, kMaxDevices> g_info;
}  // namespace

const DeviceInfo& device_info(int device) {
  static DeviceInfo invalid{};
  if (device < 0 || device >= kMaxDevices) return invalid;
  std::call_once(g_once[device], [device] {
    DeviceInfo info{};
    int major = 0, minor = 0, sms = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess &&
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess) {
      info.cc_major = major;
      info.cc_minor = minor;
      info.sm_count = sms;
      // Arch-specific (sm_90a / sm_100a) code runs only on exactly that compute capability.
      info.arch = (major == 9 && minor == 0) ? 90 : (major == 10 && minor == 0) ? 100 : 0;
    }
    g_info[device] = info;
  });
  return g_info[device];
}

}  // namespace cutlass_gemm
