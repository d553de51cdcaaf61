// Facts about this node that the engine needs to read its logs: when it
// booted (raw dmesg seconds become wall time), which GPUs it has, its zone.
#pragma once

#include <string>
#include <vector>

#include "incident/time/time.h"

namespace ff::collect {

struct GpuInfo {
  int index = -1;    // device minor
  std::string pci;   // "00000000:3B:00.0", the form nvidia-smi and Xid lines use
  std::string uuid;  // "GPU-..."
};

// "btime" of /proc/stat (or of `proc_stat`, for tests).
MaybeTime boot_time(const std::string& proc_stat = "/proc/stat");

// From the NVIDIA driver's /proc/driver/nvidia/gpus/*/information; empty
// without the driver.
std::vector<GpuInfo> nvidia_gpus(const std::string& root = "/proc/driver/nvidia/gpus");

// This host's IANA zone from /etc/localtime's link or /etc/timezone; "UTC"
// when neither says.
std::string local_timezone();

}  // namespace ff::collect
