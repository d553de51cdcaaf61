#!/usr/bin/env bash
# install.sh DEST UNIT_DIR: adds the files of packaging/common/ to the staged
# tree DEST (after `cmake --install` into it): the shipped configs, the
# plugstack drop-in, the agent's unit in UNIT_DIR (relative to DEST) and the
# agent's state dir. The one list of them: scripts/package.sh stages both
# layouts with it, and the spec's source build (%install) too.
set -euo pipefail
dest=$1 unit_dir=$2
common=$(cd "$(dirname "$0")" && pwd)
install -D -m 0644 "$common/node.yaml" "$dest/etc/firstfault/node.yaml"
install -D -m 0644 "$common/agent.yaml" "$dest/etc/firstfault/agent.yaml"
install -D -m 0644 "$common/plugstack-firstfault.conf" "$dest/etc/slurm/plugstack.conf.d/firstfault.conf"
install -D -m 0644 "$common/firstfault-agent.service" "$dest/${unit_dir#/}/firstfault-agent.service"
install -d -m 0750 "$dest/var/lib/firstfault"
