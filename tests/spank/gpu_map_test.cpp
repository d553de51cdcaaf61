#include "spank/gpu_map.h"

#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/scratch_directory.h"

namespace firstfault::spank {
namespace {

using ff::test_support::ScratchDirectory;
using ff::test_support::write_file;

void AddFakeGpu(const std::string& proc_dir, const std::string& bus, int minor,
                const std::string& uuid) {
  write_file(proc_dir + "/" + bus + "/information",
             "Model: \t\t NVIDIA A100-SXM4-80GB\n"
             "IRQ:   \t\t 154\n"
             "GPU UUID: \t " +
                 uuid +
                 "\n"
                 "Video BIOS: \t 92.00.36.00.02\n"
                 "Bus Type: \t PCIe\n"
                 "DMA Size: \t 47 bits\n"
                 "DMA Mask: \t 0x7fffffffffff\n"
                 "Bus Location: \t " +
                 bus +
                 "\n"
                 "Device Minor: \t " +
                 std::to_string(minor) +
                 "\n"
                 "GPU Excluded:\t No\n");
}

TEST(SplitGpuListTest, Forms) {
  EXPECT_EQ(SplitGpuList("0,1"), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(SplitGpuList("0-2,6"), (std::vector<std::string>{"0", "1", "2", "6"}));
  EXPECT_EQ(SplitGpuList("GPU-a1b2,GPU-c3d4"), (std::vector<std::string>{"GPU-a1b2", "GPU-c3d4"}));
  EXPECT_TRUE(SplitGpuList("").empty());
  EXPECT_TRUE(SplitGpuList("NoDevFiles").empty());
  EXPECT_EQ(SplitGpuList(" 3 ,,4"), (std::vector<std::string>{"3", "4"}));
}

TEST(NormalizeBusIdTest, NvidiaSmiForm) {
  EXPECT_EQ(NormalizeBusId("0000:3b:00.0"), "00000000:3B:00.0");
  EXPECT_EQ(NormalizeBusId("00000000:3B:00.0"), "00000000:3B:00.0");
  EXPECT_EQ(NormalizeBusId("garbage"), "garbage");
}

TEST(GpuMapTest, FakeProcDirectory) {
  ScratchDirectory proc{"spank"};
  AddFakeGpu(proc.path(), "0000:07:00.0", 0, "GPU-aaaa");
  AddFakeGpu(proc.path(), "0000:3b:00.0", 1, "GPU-bbbb");
  AddFakeGpu(proc.path(), "0000:b7:00.0", 3, "GPU-cccc");
  std::vector<NvidiaGpu> driver_gpus = ReadNvidiaGpus(proc.path());
  ASSERT_EQ(driver_gpus.size(), 3u);
  EXPECT_EQ(MapGpusToBusIds({"1", "3"}, driver_gpus),
            (std::vector<std::string>{"00000000:3B:00.0", "00000000:B7:00.0"}));
  EXPECT_EQ(MapGpusToBusIds({"GPU-aaaa"}, driver_gpus),
            (std::vector<std::string>{"00000000:07:00.0"}));
  // A GPU the driver does not list keeps its place, with no bus id.
  EXPECT_EQ(MapGpusToBusIds({"0", "2"}, driver_gpus),
            (std::vector<std::string>{"00000000:07:00.0", ""}));
}

TEST(GpuMapTest, NoDriverMeansNoBusIds) {
  ScratchDirectory proc{"spank"};
  EXPECT_TRUE(ReadNvidiaGpus(proc.path().string() + "/absent").empty());
  EXPECT_TRUE(
      MapGpusToBusIds({"0", "1"}, ReadNvidiaGpus(proc.path().string() + "/absent")).empty());
  EXPECT_TRUE(ReadNvidiaGpus(proc.path()).empty());
}

TEST(GpuMapTest, UnreadableInformationIsSkipped) {
  ScratchDirectory proc{"spank"};
  AddFakeGpu(proc.path(), "0000:07:00.0", 0, "GPU-aaaa");
  std::filesystem::create_directories(proc.path().string() +
                                      "/0000:08:00.0");  // no information file
  EXPECT_EQ(ReadNvidiaGpus(proc.path()).size(), 1u);
}

}  // namespace
}  // namespace firstfault::spank
