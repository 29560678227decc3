#!/bin/busybox sh
# Stage 1 of brick's test guest, run by the kernel as /init from the
# hand-made initramfs (internal/testbed/guest builds it). Busybox is the only
# userland here; everything real comes from the host's / over virtio-9p.
#
# On any failure we power off instead of exiting: an exiting PID 1 panics the
# kernel, and the runner reports a clean message from the console faster than
# a panic trace.

/bin/busybox mkdir -p /bin /proc /sys /dev /newroot
/bin/busybox --install -s /bin
export PATH=/bin

fail() {
	echo "brick-rdinit: FATAL: $*" >/dev/console
	echo o >/proc/sysrq-trigger
	sleep 60
}

mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
mount -t devtmpfs devtmpfs /dev || fail "mount /dev"

# The builder lists the modules in modprobe --show-depends order, so plain
# insmod works without depmod data in the initramfs.
while read -r ko; do
	insmod "/modules/$ko" || fail "insmod $ko"
done </modules/order

# The writable share carries the script in and output, exit code and any
# artifacts out. No cache: the host reads it after power-off and writes must
# not sit in guest memory.
mkdir -p /share
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 brickshare /share ||
	fail "mount share over 9p"
[ -r /share/.brick/init.sh ] || fail "share has no .brick/init.sh"

# Lower layer: the host's root, read-only. cache=loose is safe because the
# host side does not change during a test, and it makes exec and stat fast.
mkdir -p /lower /upper
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=524288 hostroot /lower ||
	fail "mount host root over 9p"
# Upper layer: guest RAM, so every boot starts from the host's state,
# except brick's own state and config directories (.brick/hidden): a
# whiteout (char device 0:0) hides each, so nothing of the host's shows.
mount -t tmpfs -o mode=0755 tmpfs /upper || fail "mount overlay tmpfs"
mkdir -p /upper/data /upper/work
while read -r d; do
	[ -n "$d" ] || continue
	mkdir -p "/upper/data$(dirname "$d")" && mknod "/upper/data$d" c 0 0 || fail "hide $d"
done </share/.brick/hidden
mount -t overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work overlay /newroot ||
	fail "mount overlay root"
mkdir -p /newroot/brick
mount --move /share /newroot/brick || fail "move the share"

mount --move /dev /newroot/dev || fail "move /dev"
mount --move /sys /newroot/sys || fail "move /sys"
mount --move /proc /newroot/proc || fail "move /proc"

exec switch_root /newroot /bin/bash /brick/.brick/init.sh
fail "switch_root"
