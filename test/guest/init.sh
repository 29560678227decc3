#!/bin/bash
# Stage 2 of brick's test guest: PID 1 on a tmpfs overlay over the host's /.
# It sets up what systemd would (we do not boot systemd: it is slow under TCG
# and would start services the tests want to control), runs the test script
# under timeout, leaves output and exit code in the share and powers off.
#
# No `set -e`: PID 1 must reach the power-off whatever fails, because an
# exiting init panics the kernel and loses the exit code.
set -uo pipefail

ctl=/brick/.brick
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb

say() { echo "brick-guest: $*" >/dev/console; }

power_off() {
	sync
	echo o >/proc/sysrq-trigger
	# Wait for the power-off with a builtin: the 9p root is going away, so
	# an external `sleep` would fail to load.
	read -r -t 60 _ <>"$halt_fifo" || true
}

fatal() {
	say "FATAL: $*"
	power_off
}

# leftovers lists what the script left in the kernel (Result.Leftovers): a
# test sharing a guest with the next one must leave none of it. Builtins and
# sysfs reads only: every process start costs under TCG.
leftovers() {
	local p b src mnt type rest
	for p in /sys/class/iscsi_session/session*; do
		[[ -e $p ]] && echo "iscsi session ${p##*/}"
	done
	for p in /sys/class/scsi_disk/*; do
		[[ -e $p ]] || continue
		for b in "$p"/device/block/*; do
			echo "scsi disk ${p##*/} ${b##*/}"
		done
	done
	for p in /sys/block/dm-*; do
		[[ -e $p/dm/name ]] && echo "dm map ${p##*/} $(<"$p/dm/name")"
	done
	for p in /sys/bus/rbd/devices/*; do
		[[ -e $p ]] && echo "rbd device rbd${p##*/}"
	done
	for p in /sys/block/nbd*/pid /sys/class/nvme/nvme*; do
		[[ -e $p ]] && echo "device ${p#/sys/}"
	done
	while read -r src mnt type rest; do
		case $type:$src in
		nfs*:* | *:/dev/sd* | *:/dev/dm-* | *:/dev/mapper/* | *:/dev/rbd* | *:/dev/nbd* | *:/dev/nvme*)
			echo "mount $src on $mnt ($type)"
			;;
		esac
	done </proc/mounts
}

# session_loop serves a guest.Session: it runs exec-1, exec-2, ... in turn,
# each once the host has written its go file, like the single script below,
# until the host writes close. After each script it lists the leftovers, then
# kills every process the script left (kill -1 from PID 1 spares only PID 1),
# then writes the exit code the host waits for.
#
# It polls every 0.1 s, and every second once it has idled for 10 s: a
# session shared across a suite waits through other tests' guests, and its
# polls then cost those guests' CPU.
session_loop() {
	local n=1 d rc start end idle=0
	: >"$ctl/ready"
	say "session ready"
	while [[ ! -e $ctl/close ]]; do
		d=$ctl/exec-$n
		if [[ ! -e $d/go ]]; then
			if ((idle++ < 100)); then
				read -r -t 0.1 _ <>"$halt_fifo"
			else
				read -r -t 1 _ <>"$halt_fifo"
			fi
			continue
		fi
		idle=0
		read -r start _ </proc/uptime
		say "exec $n start at ${start}s"
		(
			# shellcheck source=/dev/null
			source "$d/env.sh" || exit 125
			exec timeout -k 10 "$(<"$d/timeout")" bash "$d/script.sh" </dev/null >"$d/output" 2>&1
		)
		rc=$?
		read -r end _ </proc/uptime
		say "exec $n exit $rc at ${end}s"
		printf '%s %s\n' "$start" "$end" >"$d/uptime"
		leftovers >"$d/leftovers" 2>/dev/null
		kill -KILL -1 2>/dev/null
		echo "$rc" >"$d/rc.tmp" && mv "$d/rc.tmp" "$d/rc"
		n=$((n + 1))
	done
	say "session closed after $((n - 1)) scripts"
}

# A FIFO nobody writes to: reading it is a sleep that needs no binary.
halt_fifo=/dev/brick-halt
mkfifo "$halt_fifo" 2>/dev/null || true

# shellcheck source=/dev/null
source "$ctl/config" || fatal "read $ctl/config"

# Fresh, empty /run and /tmp: the host's would leak pid files and sockets of
# host daemons into the guest (and the host's /tmp is not ours to write).
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run || fatal "mount /run"
mkdir -p /run/lock /run/lock/subsys
# brick's state and config: hidden from the host's root by the first stage,
# recreated empty here as the package makes them; then every directory
# brick writes must be empty, or the guest would read the host's files.
for d in "${BRICK_HIDDEN_DIRS[@]}"; do
	mkdir -m "${d##*:}" "${d%:*}" || fatal "create ${d%:*}"
done
for d in "${BRICK_FRESH_DIRS[@]}"; do
	[[ -z $(ls -A "$d" 2>/dev/null) ]] || fatal "$d shows the host's files: $(ls -A "$d" | head -3)"
done
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp || fatal "mount /tmp"
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts || fatal "mount devpts"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm || fatal "mount /dev/shm"
# LIO (tcm_fc) and other targets are configured through configfs, which
# Debian builds as a module.
modprobe configfs || fatal "modprobe configfs"
mount -t configfs configfs /sys/kernel/config || fatal "mount configfs"
# bash process substitution and many tools expect these links.
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr

hostname "$BRICK_HOSTNAME"
echo "$BRICK_HOSTNAME" >/etc/hostname
# Ceph names its mon after the host name and resolves it; keep that local.
printf '127.0.0.1 localhost\n127.0.1.1 %s\n' "$BRICK_HOSTNAME" >/etc/hosts
# No DNS in the guest: the only hosts it may talk to are addressed by IP.
rm -f /etc/resolv.conf
: >/etc/resolv.conf

ip link set lo up || fatal "lo up"

# slirp NICs get static addresses; no DHCP client, and no default route, so
# nothing but the host's slirp addresses (10.0.2.2, 10.0.3.2) is reachable.
if ((BRICK_NICS > 0)); then
	modprobe virtio_net || fatal "modprobe virtio_net"
	for ((i = 0; i < BRICK_NICS; i++)); do
		dev=eth$i
		for _ in $(seq 100); do
			[[ -e /sys/class/net/$dev ]] && break
			sleep 0.05
		done
		# Subnets 10.0.2.0/24, 10.0.3.0/24, ... match the runner's -netdev net=.
		ip addr add "10.0.$((i + 2)).15/24" dev "$dev" || fatal "address $dev"
		ip link set "$dev" up || fatal "$dev up"
	done
fi

# shellcheck source=/dev/null
source "$ctl/env.sh" || fatal "read $ctl/env.sh"
export BRICK_SHARE=/brick BRICK_FIXTURES=$ctl/fixtures

cd /brick || fatal "cd /brick"
if [[ -e $ctl/session ]]; then
	session_loop
	power_off
fi
read -r start _ </proc/uptime
say "script start at ${start}s"
# timeout puts the script in its own process group and kills the group;
# -k: a script that ignores SIGTERM still ends.
timeout -k 10 "$BRICK_TIMEOUT" bash "$ctl/script.sh" </dev/null >"$ctl/output" 2>&1
rc=$?
read -r end _ </proc/uptime
say "script exit $rc at ${end}s"

printf '%s %s\n' "$start" "$end" >"$ctl/uptime"
# Write-then-rename: the runner treats a present rc file as a finished run.
echo "$rc" >"$ctl/rc.tmp" && mv "$ctl/rc.tmp" "$ctl/rc"
# After the rc, so that nothing here can cost the run its exit code.
leftovers >"$ctl/leftovers" 2>/dev/null
power_off
