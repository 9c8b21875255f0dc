#!/usr/bin/env bash
# The whole GPU check, one part a call: unpack the staged binaries into
# .device/, then scripts/gpu-check.sh with SANITIZE=1 and PART=$1.
set -u
[ -d .device ] || tar xJf .dev3/device.tar.xz
SANITIZE=1 PART="$1" bash .device/gpu-check.sh
