#!/usr/bin/env bash
# Prints brick's version from git: the newest v* tag as git describe gives
# it, without the v (1.2.0, or 1.2.0-3-gabc1234 three commits later), with
# -dirty for uncommitted changes. Before the first tag it counts from a
# virtual v0.0.0 at the first commit (0.0.0-412-gd8ed925). Outside a git
# checkout: "dev". With --deb: the same as a Debian version (1.2.0+3.gabc1234).
set -euo pipefail
cd "$(dirname "$0")/.."

v=""
if git rev-parse --git-dir >/dev/null 2>&1; then
  if v=$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null); then
    v=${v#v}
  else
    v="0.0.0-$(git rev-list --count HEAD)-g$(git rev-parse --short HEAD)"
    git diff --quiet HEAD -- 2>/dev/null || v+="-dirty"
  fi
fi
[[ -n $v ]] || v=dev

if [[ ${1:-} == --deb ]]; then
  # Debian versions start with a digit and, in a package without a Debian
  # revision, hold no "-": 1.2.0-3-gabc -> 1.2.0+3.gabc, dirty -> +dirty.
  [[ $v == dev ]] && v=0.0.0
  base=${v%%-*}
  rest=${v#"$base"}
  rest=${rest#-}
  v=$base${rest:++${rest//-/.}}
fi
echo "$v"
