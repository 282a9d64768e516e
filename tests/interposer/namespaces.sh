# Sourced by tests/interposer/run: a vgpu job's process that enters user,
# cgroup and mount namespaces (a container, or an attacker with a shell)
# keeps its limits, and files it makes in them are not taken for the host
# root's. The processes run as an unprivileged user ($NS_UID), as a job's
# do: as root, a user namespace would still own root's files.
NS_UID=4242
NS_DIR=$(mktemp -d /tmp/vgpu-ns.XXXXXX)
chmod 0755 "$NS_DIR"
# What the user runs, where it may read it (the build tree may not be).
mkdir -p "$NS_DIR/bin"
cp "$PROBE" "$BIN/job_setup" "$LIB" "$STUBS"/lib*.so* "$NS_DIR/bin/"
chmod -R a+rX "$NS_DIR/bin"
NS_LIB=$NS_DIR/bin/libvgpu.so
NS_PROBE=$NS_DIR/bin/cuda_probe
trap 'rm -rf "$NS_DIR"; cleanup' EXIT

# user_job MEMORY: a vgpu job of user $NS_UID whose device 0 has MEMORY
# bytes; printed.
user_job() {
	local id
	id=$(new_job)
	mkdir -p -m 0755 "$RUN_DIR"
	"$BIN/job_setup" create "$RUN_DIR" "$id" $NS_UID $NS_UID "$DEV0,$1,10,100" >&2 || return 1
	echo "$id"
}
# as_user ID CMD...: CMD as user $NS_UID in job ID's cgroup, with Slurm's
# SLURM_JOB_ID and libvgpu.so preloaded; stderr into $WORK/stderr.
as_user() {
	local id=$1
	shift
	in_job "$id" setpriv --reuid=$NS_UID --regid=$NS_UID --clear-groups \
		env SLURM_JOB_ID="$id" LD_PRELOAD="$NS_LIB" LD_LIBRARY_PATH="$NS_DIR/bin" "$@" 2>"$WORK/stderr"
}
# The probe's answers for a 1 GiB job: 2 GiB refused, 512 MiB taken, the
# memory query reports the limit.
LIMITED="init 0|alloc 2|alloc 0|info 0 $((GIB - 512 * 1048576)) $GIB"
LIMIT_PROBE=(init alloc $((2 * GIB)) alloc $((512 * 1048576)) info)

t_user_namespaces_keep_limits() {
	local id
	id=$(user_job $GIB) || fail "job setup"
	expect "no namespace" "$(lines "$(as_user "$id" "$NS_PROBE" "${LIMIT_PROBE[@]}")")" "$LIMITED"
	expect "unshare -U (unmapped): the cgroup still names the job" \
		"$(lines "$(as_user "$id" unshare -U "$NS_PROBE" "${LIMIT_PROBE[@]}")")" "$LIMITED"
	expect "unshare -U -C: a cgroup namespace hides the job's cgroup; SLURM_JOB_ID names it" \
		"$(lines "$(as_user "$id" unshare -U -C "$NS_PROBE" "${LIMIT_PROBE[@]}")")" "$LIMITED"
	expect "unshare -U -r -C (mapped to root)" \
		"$(lines "$(as_user "$id" unshare -U -r -C "$NS_PROBE" "${LIMIT_PROBE[@]}")")" "$LIMITED"
	expect "unshare -U -C, SLURM_JOB_ID unset: fail closed" \
		"$(lines "$(as_user "$id" env -u SLURM_JOB_ID unshare -U -C "$NS_PROBE" init alloc 1048576)")" "init 800|alloc 2"
	grep -q "neither its cgroup nor SLURM_JOB_ID names the job" "$WORK/stderr" || fail "stderr: $(cat "$WORK/stderr")"
	expect "unshare -U -C, SLURM_JOB_ID naming a job without a run directory: fail closed" \
		"$(lines "$(as_user "$id" env SLURM_JOB_ID=$((id + 100000)) unshare -U -C "$NS_PROBE" init)")" "init 800"
	grep -q "no limits file .* is visible in a user namespace" "$WORK/stderr" || fail "stderr: $(cat "$WORK/stderr")"
	# Outside any job, the host's namespace: nothing changes.
	expect "outside a job, no namespace" "$(lines "$(setpriv --reuid=$NS_UID --regid=$NS_UID --clear-groups \
		env LD_PRELOAD="$NS_LIB" LD_LIBRARY_PATH="$NS_DIR/bin" "$NS_PROBE" init alloc $((2 * GIB)) 2>"$WORK/stderr")")" \
		"init 0|alloc 0"
}

t_forged_limits_in_namespaces_are_refused() {
	local id forged
	id=$(user_job $GIB) || fail "job setup"
	# 1. Made inside: a private mount namespace with a tmpfs over the run
	#    directory and a generous limits file, owned by "root" there.
	expect "tmpfs over /run/slurm-vgpu with a 100 GiB limits file made as namespace root" \
		"$(lines "$(as_user "$id" unshare -U -r -m sh -c "mount -t tmpfs none $RUN_DIR &&
			$NS_DIR/bin/job_setup create $RUN_DIR $id 0 0 $DEV0,$((100 * GIB)),100,100 &&
			exec $NS_PROBE init alloc $((2 * GIB))")")" "init 800|alloc 2"
	grep -q "not trusted: $RUN_DIR/job_$id belongs to uid 0 inside this user namespace" "$WORK/stderr" ||
		fail "stderr: $(cat "$WORK/stderr")"
	# 2. Made outside by the user, bound in, and seen from a namespace that
	#    maps nobody: it shows the overflow uid, as the host root's files do.
	forged=$NS_DIR/forged
	install -d -o $NS_UID -m 0755 "$forged"
	setpriv --reuid=$NS_UID --regid=$NS_UID --clear-groups \
		"$NS_DIR/bin/job_setup" create "$forged" "$id" $NS_UID $NS_UID "$DEV0,$((100 * GIB)),100,100" ||
		fail "forged setup"
	expect "the user's own run directory bound over /run/slurm-vgpu, unmapped namespace" \
		"$(lines "$(as_user "$id" unshare -U -r -m sh -c "mount --bind $forged $RUN_DIR &&
			exec unshare -U $NS_PROBE init alloc $((2 * GIB))")")" "init 800|alloc 2"
	grep -q "is this process's own file" "$WORK/stderr" || fail "stderr: $(cat "$WORK/stderr")"
	expect "the same, bound read-only (ownership cannot be told)" \
		"$(lines "$(as_user "$id" unshare -U -r -m sh -c "mount --bind $forged $RUN_DIR &&
			mount -o remount,bind,ro $RUN_DIR && exec unshare -U $NS_PROBE init")")" "init 800"
	grep -q "read-only mount" "$WORK/stderr" || fail "stderr: $(cat "$WORK/stderr")"
}

# A job step run the way enroot runs a container: a user namespace mapping
# the user to root, a mount namespace, its own root filesystem (here: the
# host's /usr and /etc bound into an empty directory), libvgpu.so, the
# stub driver and /run/slurm-vgpu bound in, chroot, and the program.
t_container_step_stays_limited() {
	local id root=$NS_DIR/root
	id=$(user_job $GIB) || fail "job setup"
	mkdir -p "$root"/{usr,etc,proc,dev,tmp,vgpu,run/slurm-vgpu}
	ln -sfn usr/lib "$root/lib"
	ln -sfn usr/lib64 "$root/lib64"
	ln -sfn usr/bin "$root/bin"
	chmod -R a+rX "$root"
	local inside="mount --rbind /usr $root/usr && mount --rbind /etc $root/etc &&
		mount --rbind /proc $root/proc && mount --rbind /dev $root/dev &&
		mount --bind $NS_DIR/bin $root/vgpu && mount --bind $RUN_DIR $root/run/slurm-vgpu &&
		exec env -u LD_PRELOAD chroot $root env LD_PRELOAD=/vgpu/libvgpu.so LD_LIBRARY_PATH=/vgpu /vgpu/cuda_probe ${LIMIT_PROBE[*]}"
	expect "enroot-like container step" "$(lines "$(as_user "$id" unshare -U -r -m sh -c "$inside")")" "$LIMITED"
	expect "the same with a cgroup namespace" \
		"$(lines "$(as_user "$id" unshare -U -r -m -C sh -c "$inside")")" "$LIMITED"
	# The container shares the job's one budget: 768 MiB held outside
	# leaves 256 MiB inside.
	in_job "$id" setpriv --reuid=$NS_UID --regid=$NS_UID --clear-groups env LD_PRELOAD="$NS_LIB" \
		LD_LIBRARY_PATH="$NS_DIR/bin" "$NS_PROBE" init alloc $((768 * 1048576)) hold >"$WORK/holder" 2>/dev/null &
	for _ in $(seq 100); do grep -q "alloc" "$WORK/holder" && break; sleep 0.05; done
	expect "the holder outside" "$(lines "$(head -2 "$WORK/holder")")" "init 0|alloc 0"
	expect "inside, with 768 MiB held by a process outside the container" \
		"$(lines "$(as_user "$id" unshare -U -r -m sh -c "${inside/${LIMIT_PROBE[*]}/init alloc $((512 * 1048576)) alloc $((256 * 1048576))}")")" \
		"init 0|alloc 2|alloc 0"
	kill_job "$id"
	wait 2>/dev/null
}

# The run directory handed over as a descriptor (VGPU_RUN_DIR_FD), as
# spank_vgpu.so does from slurmstepd: opened here by root, then the user's
# program runs where /run/slurm-vgpu is hidden.
t_handed_over_run_dir() {
	local id other forged hide
	id=$(user_job $GIB) || fail "job setup"
	other=$(user_job $((4 * GIB))) || fail "job setup"
	hide="mount -t tmpfs none $RUN_DIR && exec $NS_PROBE"
	# handed DIR CMD...: CMD as the user in job $id with DIR open as fd 7.
	handed() {
		local dir=$1
		shift
		in_job "$id" sh -c 'exec 7<"$0" && exec "$@"' "$dir" setpriv --reuid=$NS_UID --regid=$NS_UID \
			--clear-groups env SLURM_JOB_ID="$id" VGPU_RUN_DIR_FD=7 LD_PRELOAD="$NS_LIB" \
			LD_LIBRARY_PATH="$NS_DIR/bin" "$@" 2>"$WORK/stderr"
	}
	expect "run directory hidden, the job's own handed over" \
		"$(lines "$(handed "$RUN_DIR/job_$id" unshare -U -r -m sh -c "$hide ${LIMIT_PROBE[*]}")")" "$LIMITED"
	expect "the same with a cgroup namespace" \
		"$(lines "$(handed "$RUN_DIR/job_$id" unshare -U -r -m -C sh -c "$hide ${LIMIT_PROBE[*]}")")" "$LIMITED"
	expect "another job's (4 GiB) handed over" "$(lines "$(handed "$RUN_DIR/job_$other" "$NS_PROBE" init)")" "init 800"
	grep -q "is for job $other, not job $id" "$WORK/stderr" || fail "stderr: $(cat "$WORK/stderr")"
	forged=$NS_DIR/forged-fd
	install -d -o $NS_UID -m 0755 "$forged"
	setpriv --reuid=$NS_UID --regid=$NS_UID --clear-groups \
		"$NS_DIR/bin/job_setup" create "$forged" "$id" $NS_UID $NS_UID "$DEV0,$((100 * GIB)),100,100" ||
		fail "forged setup"
	expect "the user's own directory handed over, unmapped namespace" \
		"$(lines "$(handed "$forged/job_$id" unshare -U "$NS_PROBE" init)")" "init 800"
	grep -q "is this process's own file" "$WORK/stderr" || fail "stderr: $(cat "$WORK/stderr")"
	expect "the same in the host's namespace" "$(lines "$(handed "$forged/job_$id" "$NS_PROBE" init)")" "init 800"
	grep -q "may be written by others than root" "$WORK/stderr" || fail "stderr: $(cat "$WORK/stderr")"
}

NAMESPACE_TESTS=(user_namespaces_keep_limits forged_limits_in_namespaces_are_refused container_step_stays_limited
	handed_over_run_dir)
