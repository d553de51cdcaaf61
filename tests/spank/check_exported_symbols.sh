#!/bin/sh
# spank_firstfault.so must export exactly what Slurm's loader looks up: plugin_name,
# plugin_type, plugin_version and the slurm_spank_* callbacks. Anything else (C++
# runtime, init/fini, which plugin.c would call) is a bug in the version script.
set -eu
so=${1:?usage: check_exported_symbols.sh spank_firstfault.so}
exported=$(nm -D --defined-only "$so" | awk '{print $NF}' | sort)
expected='plugin_name
plugin_type
plugin_version
slurm_spank_exit
slurm_spank_init
slurm_spank_init_post_opt
slurm_spank_task_exit
slurm_spank_task_post_fork'
if [ "$exported" != "$expected" ]; then
  echo "exported symbols differ from the plugin's interface" >&2
  echo "--- expected" >&2; echo "$expected" >&2
  echo "--- exported" >&2; echo "$exported" >&2
  exit 1
fi
# No libslurm: its symbols come from the host process.
if readelf -d "$so" | grep -q 'NEEDED.*libslurm'; then
  echo "spank_firstfault.so links libslurm" >&2
  exit 1
fi
echo "ok: $(echo "$exported" | wc -l) symbols, no libslurm"
