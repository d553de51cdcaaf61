// firstfault k8s collect: one attempt of a Kueue workload, a Job / JobSet /
// PyTorchJob, or a set of pods, read from the Kubernetes API server into an
// incident directory that `firstfault analyze` reads.
#pragma once

#include <CLI/CLI.hpp>

namespace ff::cli {

void add_k8s_command(CLI::App& app, int& exit_code);

}  // namespace ff::cli
