# Sourced by scripts/build.sh and scripts/test.sh: every CMake build directory
# configured after this (build/, the packages' rpm-portable/, the sanitizer and
# fuzz builds) compiles through ccache when it is installed. CMake takes
# CMAKE_CXX_COMPILER_LAUNCHER from the environment when it first configures a
# directory, so an existing build directory keeps what it was configured with.
#
# The cache lives outside the clone (ccache's default, ~/.cache/ccache, or
# CCACHE_DIR), so the next clone on the same machine reuses it. CCACHE_BASEDIR
# is this checkout: paths under it are hashed relative, so a clone at another
# path hits as well; CCACHE_NOHASHDIR lets the -g builds (sanitizers) share
# across clones too (their debug info then names the directory of the first).
# 5 GB holds every build directory test.sh makes, about 2 GB today.
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
fi
