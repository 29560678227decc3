#!/usr/bin/env bash
# Builds the Debian package of brick with Debian's own tools (dpkg-deb, no
# debhelper) and checks it with lintian: make deb.
#
#   packaging/deb.sh [BINARY [OUTDIR]]     (defaults: bin/brick, bin)
#
# BINARY is the static brick make build writes, with brick-csi beside it
# (`brick csi` runs the brick-csi in its own directory); BINARY also writes
# the completion scripts; the man pages come from TestManPages (needs Go).
# Prints the .deb's path on the last line.
# SOURCE_DATE_EPOCH (the Makefile sets the last commit's time) dates every
# file, so two builds of one commit give the same package.
# BRICK_DEB_COMPRESSION is dpkg-deb's -Z (default xz, as Debian ships);
# the end-to-end tests use none: xz spends ~20 s of CPU here and more to
# unpack in their emulated guest, for a package that is deleted after.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
bin=$(realpath "${1:-bin/brick}")
out=${2:-bin}
version=$(scripts/version.sh --deb)
arch=$(dpkg --print-architecture)
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH=$epoch

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
umask 022
root=$stage/brick
doc=$root/usr/share/doc/brick

install -D -m 0755 "$bin" "$root/usr/sbin/brick"
install -D -m 0755 "$(dirname "$bin")/brick-csi" "$root/usr/sbin/brick-csi"

# cobra's man page generator runs in a unit test, so the binary does not link it.
BRICK_MAN_DIR="$stage/man" go test -count=1 -ldflags "-X github.com/brick-storage/brick/cmd/brick.version=$(scripts/version.sh)" \
  -run '^TestManPages$' ./cmd/brick >&2
mkdir -p "$root/usr/share/man/man8"
for page in "$stage"/man/*.8; do
  gzip -9n <"$page" >"$root/usr/share/man/man8/${page##*/}.gz"
done

mkdir -p "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
  "$root/usr/share/fish/vendor_completions.d"
"$bin" completion bash >"$root/usr/share/bash-completion/completions/brick"
"$bin" completion zsh >"$root/usr/share/zsh/vendor-completions/_brick"
"$bin" completion fish >"$root/usr/share/fish/vendor_completions.d/brick.fish"

install -D -m 0644 packaging/brick.yaml "$root/etc/brick/brick.yaml"
for unit in packaging/systemd/*; do
  [ -f "$unit" ] && install -D -m 0644 "$unit" "$root/lib/systemd/system/${unit##*/}"
done
install -d -m 0700 "$root/var/lib/brick"
install -D -m 0644 packaging/copyright "$doc/copyright"
install -D -m 0644 packaging/lintian-overrides "$root/usr/share/lintian/overrides/brick"
{
  echo "brick ($version) unstable; urgency=medium"
  echo
  echo "  * Built from git $(git describe --tags --always --dirty 2>/dev/null || echo unknown)."
  echo
  echo " -- $(sed -n 's/^Maintainer: //p' packaging/control.in)  $(LC_ALL=C date -u -R -d "@$epoch")"
} | gzip -9n >"$doc/changelog.gz"

mkdir -p "$root/DEBIAN"
echo /etc/brick/brick.yaml >"$root/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" packaging/control.in >"$root/DEBIAN/control"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/"*
install -m 0755 packaging/maintscripts/postinst packaging/maintscripts/postrm "$root/DEBIAN/"
find "$root" -exec touch -h -d "@$epoch" {} +

mkdir -p "$out"
deb=$out/brick_${version}_${arch}.deb
dpkg-deb --root-owner-group -Z"${BRICK_DEB_COMPRESSION:-xz}" --build "$root" "$deb" >/dev/null
echo "$deb"
