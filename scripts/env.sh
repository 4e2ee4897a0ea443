# Sourced by scripts/serve and scripts/test: choose the Python to install into and set $PY.
# An active virtual environment is used as it is; otherwise the repository's .venv (made here
# when missing) if the system's Python is externally managed (PEP 668, as on Debian and Ubuntu)
# or a .venv exists already; otherwise python3 itself. Debian packages the build needs (venv,
# the Python headers, a C++ compiler) are installed first when missing.

apt_install() {  # apt_install PACKAGE...: install Debian packages, as root or through sudo
  [ "$#" -gt 0 ] || return 0
  command -v apt-get >/dev/null 2>&1 || { echo "missing: $* (install them, then run again)" >&2; exit 1; }
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "installing Debian packages: $*" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

in_venv() { python3 -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)' 2>/dev/null; }
externally_managed() {
  python3 -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'
}

use_venv=""
if ! in_venv && { [ -x .venv/bin/python ] || externally_managed; }; then use_venv=1; fi

need=""
if [ -n "$use_venv" ] && [ ! -x .venv/bin/python ] && ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  need="$need python3-venv"
fi
python3 -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("include"), "Python.h")))' \
  || need="$need python3-dev"
command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || need="$need g++"
# shellcheck disable=SC2086
apt_install $need

if [ -n "$use_venv" ]; then
  [ -x .venv/bin/python ] || { echo "making a virtual environment in .venv" >&2; python3 -m venv .venv; }
  # as if activated: the tests and the `patience` command find this environment's programs
  export VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH"
  PY="$VIRTUAL_ENV/bin/python"
else
  PY="python3"
fi
export PY
