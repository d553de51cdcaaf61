// Facts about this node that the engine needs to read its logs: when it
// booted (raw dmesg seconds become wall time), which GPUs it has, its zone.
#pragma once

#include <string>
#include <vector>

#include "incident/job_info.h"
#include "incident/time/time.h"

namespace ff::collect {

using GpuInfo = ff::GpuInfo;  // the job model's: index (device minor), PCI id, UUID

// "btime" of /proc/stat (or of `proc_stat`, for tests).
MaybeTime boot_time(const std::string& proc_stat = "/proc/stat");

// From the NVIDIA driver's /proc/driver/nvidia/gpus/*/information; empty
// without the driver.
std::vector<GpuInfo> nvidia_gpus(const std::string& root = "/proc/driver/nvidia/gpus");

// This host's IANA zone from /etc/localtime's link or /etc/timezone; "UTC"
// when neither says.
std::string local_timezone();

}  // namespace ff::collect
