// GPU indices of a step (CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS) to PCI bus ids, read
// from the NVIDIA driver's /proc/driver/nvidia/gpus/<bus>/information files.
// No driver, no GPUs: empty lists, never an error, because most steps have no GPU.
#ifndef FIRSTFAULT_SPANK_GPU_MAP_H_
#define FIRSTFAULT_SPANK_GPU_MAP_H_

#include <string>
#include <string_view>
#include <vector>

namespace firstfault::spank {

inline constexpr const char* kNvidiaProcGpusDir = "/proc/driver/nvidia/gpus";

struct NvidiaGpu {
  int minor = -1;      // "Device Minor": N of /dev/nvidiaN, Slurm's GPU index
  std::string bus_id;  // nvidia-smi form, "00000000:3B:00.0"
  std::string uuid;    // "GPU-..."
};

// "0,1", "0-3,6", "GPU-abc,GPU-def"; "NoDevFiles" and empty entries are dropped.
std::vector<std::string> SplitGpuList(std::string_view list);

// One entry per GPU the driver lists under proc_dir; empty when the dir is absent.
std::vector<NvidiaGpu> ReadNvidiaGpus(const std::string& proc_dir = kNvidiaProcGpusDir);

// "0000:3b:00.0" -> "00000000:3B:00.0"; anything unparsable is returned as is.
std::string NormalizeBusId(std::string_view bus_location);

// The bus id of each entry of gpus (an index or a UUID), "" for one the driver does
// not list. Empty when the driver lists no GPU at all.
std::vector<std::string> MapGpusToBusIds(const std::vector<std::string>& gpus,
                                         const std::vector<NvidiaGpu>& driver_gpus);

}  // namespace firstfault::spank

#endif  // FIRSTFAULT_SPANK_GPU_MAP_H_
