#!/bin/sh
# A VULKAN_SDK folder for a Vulkan build of llama.cpp on Debian 12, whose Vulkan headers (1.3.239) are too old:
# the headers of Debian 13's libvulkan-dev and spirv-headers, unpacked (not installed: Debian 13's libvulkan1
# needs a newer libc), beside links to this system's Vulkan loader and glslc. Needs an apt source for trixie
# (pinned low, e.g. Pin-Priority 100, so nothing else comes from it). Prints the folder; then:
#   BROOK_LLAMA_GPU=vulkan VULKAN_SDK=<folder> python3 packaging/llama_build.py
set -eu
VULKAN=${VULKAN:-1.4.309.0-1}
SPIRV=${SPIRV:-1.6.1+1.4.309.0-1}
CACHE=${BROOK_BUILD_CACHE:-$HOME/.cache/brook-build}
SDK="$CACHE/vulkan-sdk-$(echo "$VULKAN" | cut -d. -f1-3)"
LOADER=$(ldconfig -p | awk '/libvulkan\.so\.1 .*x86-64|libvulkan\.so\.1 .*AArch64/ {print $NF; exit}')
[ -n "$LOADER" ] || { echo "no Vulkan loader: apt-get install libvulkan1" >&2; exit 1; }
command -v glslc >/dev/null || { echo "no glslc: apt-get install glslc" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download "libvulkan-dev=$VULKAN" "spirv-headers=$SPIRV") >&2 || {
    echo "libvulkan-dev=$VULKAN / spirv-headers=$SPIRV not found: add Debian 13 (trixie) to apt's sources," \
         "pinned low, and run apt-get update" >&2; exit 1; }
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/x"; done
rm -rf "$SDK"
mkdir -p "$SDK/lib" "$SDK/bin"
cp -r "$tmp/x/usr/include" "$SDK/include"
ln -s "$LOADER" "$SDK/lib/libvulkan.so"
ln -s "$(command -v glslc)" "$SDK/bin/glslc"
echo "$SDK"
