#!/usr/bin/env bash
# Installs every Debian package brick's test suites and benchmarks need.
# Idempotent: packages already present are skipped, so a warm machine pays ~1 s.
set -euo pipefail

packages=(
  # real Cinder and its iSCSI target
  python3-cinder tgt sqlite3
  # real Ironic
  python3-ironic python3-ironicclient
  # real Keystone (test/keystone/up.sh)
  python3-keystone python3-keystonemiddleware
  # real Barbican for encrypted volumes (test/barbican/up.sh)
  python3-barbican
  # the qemu guest with Debian's kernel
  qemu-system-x86 linux-image-amd64 busybox-static kmod cpio
  # boot from volume (TestIronicBootFromVolumeImage): iPXE ROMs and a tiny syslinux boot disk
  ipxe-qemu syslinux syslinux-common mtools dosfstools
  # what runs inside the guest
  open-iscsi multipath-tools dmsetup cryptsetup-bin sg3-utils udev e2fsprogs util-linux iproute2 procps
  # md RAID1 over a replicated NVMe volume's legs (connector/nvmeof, md)
  mdadm
  nfs-kernel-server nfs-common rpcbind
  # dockerd, containerd and runc for the Docker volume plugin (docker import of busybox-static, no registry)
  docker.io
  ceph-common ceph-mon ceph-osd rbd-nbd
  # side-by-side comparison and measurement
  python3-os-brick dmidecode strace time nvme-cli lsscsi
  # the test-bed scripts themselves
  curl make
  # make deb: the Debian package and its check
  dpkg-dev lintian
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install: all ${#packages[@]} packages present"
  exit 0
fi

echo "install: installing ${missing[*]}"
# Package maintainer scripts must not start iscsid, tgtd, nfsd or ceph on the
# host: the tests start exactly what they need and stop it again.
policy=/usr/sbin/policy-rc.d
made_policy=0
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  made_policy=1
fi
trap '[[ $made_policy == 1 ]] && rm -f "$policy"' EXIT

export DEBIAN_FRONTEND=noninteractive
# Refresh package lists when they are missing or older than a day.
if [[ -z $(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1) ]]; then
  apt-get update -qq
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install: done"
