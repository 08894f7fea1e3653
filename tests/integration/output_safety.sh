#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Output safety.  The profile goes to a temporary file beside -o and is
# renamed into place on success, so:
#   - ENOSPC (a 64 KiB tmpfs), a read-only mount, an immutable directory, a
#     directory the (capable, non-root) user cannot write, a missing
#     directory: non-zero exit, a clear message, no file and no temporary;
#     with one file per process, a failure on the second leaves neither;
#   - an existing file is replaced by rename only: a new inode, and a hard
#     link to the old file keeps the old content;
#   - -o naming a device node or a FIFO never replaces it by a regular file;
#   - as root, a symlink in a world-writable sticky directory is refused,
#     and so is a path through another user's symlink to a directory there;
#   - with SUDO_UID/SUDO_GID set as sudo sets them, the output (file or
#     directory tree) belongs to the invoking user.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/reliability.sh"
need_root
make_user
MNT=$TMP/tiny
cleanup_mounts() {
	mountpoint -q "$MNT" && umount "$MNT"
	mountpoint -q "$TMP/ro" && umount "$TMP/ro"
	[ -d "$TMP/imm" ] && chattr -i "$TMP/imm" 2>/dev/null
	rm -f "$LINK" "$DIRLINK"
	remove_user
	cleanup_test
}
LINK= DIRLINK=
trap cleanup_mounts EXIT
"$WL/spin" 30 2 & busy=$!; CHILD_PIDS+=($busy)

# ENOSPC while streaming (perf) and while writing a directory (hpctoolkit).
mkdir "$MNT" && mount -t tmpfs -o size=64k tmpfs "$MNT" || fail "cannot mount a tmpfs"
refused "$MNT/perf.data" "No space left on device" \
	"$BPFPROF" --format perf -F 4999 -p "$busy" -d 1 -q -o "$MNT/perf.data"
refused "$MNT/db" "No space left on device" \
	"$BPFPROF" --format hpctoolkit -F 4999 -p "$busy" -d 1 -q -o "$MNT/db"
[ -z "$(ls -A "$MNT")" ] || fail "left in the full file system: $(ls -A "$MNT")"

# One file per process: the first fits, the second does not -> neither stays.
"$WL/spin" 30 & busy2=$!; CHILD_PIDS+=($busy2)
avail=$(df --output=avail -B1 "$MNT" | tail -n 1)
head -c $((avail - 4096)) /dev/zero > "$MNT/filler"
out=$("$BPFPROF" -F 999 -p "$busy,$busy2" -d 1 -q -o "$MNT/g.prof" 2>&1) &&
	fail "per-process output into a full file system: exit 0 ($out)"
rm -f "$MNT/filler"
[ -z "$(ls -A "$MNT")" ] || fail "a failed per-process run left: $(ls -A "$MNT") ($out)"
ok "per-process output on ENOSPC: nothing left ($out)"
umount "$MNT"

# EACCES and friends: read-only bind mount, immutable directory, missing
# directory, a directory a capable non-root user may not write.
mkdir "$TMP/ro" && mount --bind "$TMP/ro" "$TMP/ro" && mount -o remount,bind,ro "$TMP/ro" ||
	fail "cannot make a read-only bind mount"
refused "$TMP/ro/x.prof" "cannot write .*x.prof" "$BPFPROF" -p "$busy" -d 0.2 -o "$TMP/ro/x.prof"
umount "$TMP/ro"
mkdir "$TMP/imm" && chattr +i "$TMP/imm" || fail "chattr +i failed"
refused "$TMP/imm/x.prof" "cannot write .*x.prof" "$BPFPROF" -p "$busy" -d 0.2 -o "$TMP/imm/x.prof"
chattr -i "$TMP/imm"
refused "$TMP/nodir/x.prof" "directory .*nodir.* does not exist" "$BPFPROF" -p "$busy" -d 0.2 -o "$TMP/nodir/x.prof"
chmod 711 "$TMP"; mkdir -m 755 "$TMP/rootonly"
refused "$TMP/rootonly/x.prof" "no write permission" \
	as_user caps=+bpf,+perfmon "$BPFPROF" --all -d 0.2 -o "$TMP/rootonly/x.prof"

# Replace by rename: new inode; a hard link keeps the old content.
echo OLD > "$TMP/old.prof"; ln "$TMP/old.prof" "$TMP/hardlink"
ino=$(stat -c %i "$TMP/old.prof")
"$BPFPROF" -p "$busy" -F 499 -d 0.5 -q -o "$TMP/old.prof" || fail "run over an existing file failed"
[ "$(stat -c %i "$TMP/old.prof")" != "$ino" ] || fail "the existing file was rewritten in place (same inode)"
[ "$(cat "$TMP/hardlink")" = OLD ] || fail "the hard link to the old file changed"
google-pprof --raw "$WL/spin" "$TMP/old.prof" > /dev/null 2>&1 || fail "the new profile does not load"
ok "existing file replaced by rename (inode $ino -> $(stat -c %i "$TMP/old.prof")), hard link intact"

# Device nodes and FIFOs are not replaced by a regular file.
mknod "$TMP/null" c 1 3 && mknod "$TMP/full" c 1 7 && mkfifo "$TMP/fifo" || fail "mknod/mkfifo"
cat "$TMP/fifo" > /dev/null & CHILD_PIDS+=($!)
for node in null full fifo; do
	type=$(stat -c %F "$TMP/$node")
	timeout 20 "$BPFPROF" -p "$busy" -d 0.2 -q -o "$TMP/$node" > "$TMP/node.err" 2>&1
	[ "$(stat -c %F "$TMP/$node")" = "$type" ] ||
		fail "-o $node: the $type was replaced by a $(stat -c %F "$TMP/$node") ($(cat "$TMP/node.err"))"
	ok "-o $node: still a $type ($(head -n 1 "$TMP/node.err"))"
done

# Symlinks in a world-writable sticky directory (/tmp).
LINK=/tmp/bpfprof-link.$$
ln -s "$TMP/link-target" "$LINK"
refused "$TMP/link-target" "refusing to write .*symlink.*sticky" "$BPFPROF" -p "$busy" -d 0.2 -o "$LINK"
[ -L "$LINK" ] || fail "the symlink was replaced"
mkdir -m 755 "$TMP/victim"
DIRLINK=/tmp/bpfprof-dirlink.$$
as_user ln -s "$TMP/victim" "$DIRLINK" || fail "cannot create $TUSER's symlink"
"$BPFPROF" -p "$busy" -d 0.2 -q -o "$DIRLINK/x.prof" > "$TMP/dirlink.err" 2>&1
[ -z "$(ls -A "$TMP/victim")" ] ||
	fail "root followed $TUSER's symlink $DIRLINK -> $TMP/victim and wrote $(ls -A "$TMP/victim")"
ok "no write through another user's symlink in /tmp: $(head -n 1 "$TMP/dirlink.err")"

# Under sudo the output belongs to the invoking user, also a directory tree.
uid=$(id -u "$TUSER") gid=$(id -g "$TUSER")
SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=$TUSER "$BPFPROF" -p "$busy" -d 0.3 -q -o "$TMP/sudo.prof" ||
	fail "sudo-style run failed"
[ "$(stat -c %u:%g "$TMP/sudo.prof")" = "$uid:$gid" ] || fail "sudo.prof is $(stat -c %u:%g "$TMP/sudo.prof")"
SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=$TUSER "$BPFPROF" --format hpctoolkit -p "$busy" -d 0.3 -q \
	-o "$TMP/sudo.db" || fail "sudo-style hpctoolkit run failed"
bad=$(find "$TMP/sudo.db" \! -uid "$uid" -o \! -gid "$gid" | head -n 3)
[ -z "$bad" ] || fail "not owned by $uid:$gid: $bad"
ok "SUDO_UID/SUDO_GID: file and directory tree belong to $TUSER"
