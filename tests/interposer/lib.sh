# Shared by tests/interposer/run and bench/interposer: puts processes "in a
# job" the way Slurm does (a cgroup whose path has job_<id>; root's run
# directory /run/slurm-vgpu/job_<id> with limits and usage regions) and
# runs cuda_probe there with libvgpu.so preloaded. Needs root; a caller that
# is not root exits 77 (skipped).
# Environment: VGPU_TEST_STUB_DIR, VGPU_TEST_LIBVGPU, VGPU_TEST_BIN.
[ "$(id -u)" = 0 ] || { echo "interposer tests need root (cgroups, root-owned run dir): skipped"; exit 77; }
STUBS=${VGPU_TEST_STUB_DIR:?}
LIB=${VGPU_TEST_LIBVGPU:?}
BIN=${VGPU_TEST_BIN:?}
PROBE=$BIN/cuda_probe
RUN_DIR=/run/slurm-vgpu
GIB=1073741824
DEV0=GPU-00000000-0000-0000-0000-000000000001
DEV1=GPU-00000000-0000-0000-0000-000000000002
export VGPU_STUB_CUDA_DEVICES="$DEV0,$((8 * GIB));$DEV1,$((8 * GIB))"
export VGPU_STUB_NVML_DEVICES="NVIDIA H100,0,$((8 * GIB)),0000:1b:00.0,$DEV0;NVIDIA H100,1,$((8 * GIB)),0000:1c:00.0,$DEV1"
DCU0=0000:c1:00.0
DCU1=0000:c2:00.0
export VGPU_STUB_HIP_DEVICES="$DCU0,$((8 * GIB));$DCU1,$((8 * GIB))"
HIP_PROBE=$BIN/hip_probe
# Ascend: logical devices 0 and 1 are /dev/davinci3 and /dev/davinci5.
export VGPU_STUB_ACL_DEVICES="3,$((8 * GIB));5,$((8 * GIB))"
ACL_PROBE=$BIN/acl_probe
export LD_LIBRARY_PATH=$STUBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset VGPU_SHARES VGPU_RUN_DIR

WORK=$(mktemp -d /tmp/vgpu-interposer.XXXXXX)
JOB_BASE=$((4000000000 + RANDOM * 1000))
echo "$JOB_BASE" >"$WORK/next_job"  # tests run in subshells: the counter lives in a file

# A cgroup hierarchy we may make directories in: a v1 controller, or v2.
cgroup_root() {
	local c
	for c in freezer pids cpuacct; do
		[ -w "/sys/fs/cgroup/$c/cgroup.procs" ] && { echo "/sys/fs/cgroup/$c"; return; }
	done
	[ -w /sys/fs/cgroup/cgroup.procs ] && [ -e /sys/fs/cgroup/cgroup.controllers ] && { echo /sys/fs/cgroup; return; }
	return 1
}
CG_ROOT=$(cgroup_root) || { echo "no writable cgroup hierarchy: skipped"; exit 77; }
CG_BASE=$CG_ROOT/vgpu-test-$$
mkdir -p "$CG_BASE"

cleanup() {
	local d j
	for d in "$CG_BASE"/job_*; do
		[ -d "$d" ] || continue
		cat $(find "$d" -name cgroup.procs) 2>/dev/null | while read -r p; do kill -9 "$p" 2>/dev/null; done
	done
	sleep 0.1
	# Steps' cgroups (job_<id>/step_<s>) first.
	find "$CG_BASE" -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null
	rmdir "$CG_BASE" 2>/dev/null
	for ((j = JOB_BASE; j < $(cat "$WORK/next_job"); j++)); do "$BIN/job_setup" remove "$RUN_DIR" "$j" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT

# new_job: a fresh job id (and its cgroup), printed.
new_job() {
	local id
	id=$(cat "$WORK/next_job")
	echo $((id + 1)) >"$WORK/next_job"
	mkdir -p "$CG_BASE/job_$id"
	echo "$id"
}
# limits_job DEVICE...: a new job whose run directory has these devices
# (job_setup's ID,MEMORY,SHARES,OF[,VENDOR]); its id printed.
limits_job() {
	local id
	id=$(new_job)
	mkdir -p -m 0755 "$RUN_DIR"
	"$BIN/job_setup" create "$RUN_DIR" "$id" 0 0 "$@" >&2 || return 1
	echo "$id"
}
# vgpu_job MEMORY: a job whose device 0 ($DEV0) has MEMORY bytes, 10 of
# 100 shares; printed.
vgpu_job() { limits_job "$DEV0,$1,10,100"; }
# in_job ID CMD...: runs CMD inside job ID's cgroup.
in_job() {
	local id=$1
	shift
	(echo "$BASHPID" >"$CG_BASE/job_$id/cgroup.procs" && exec "$@")
}
# kill_job ID: SIGKILL to every process of job ID (as a node kill would).
kill_job() {
	local p procs
	# The job's cgroup and its steps' (job_<id>/step_<s>).
	procs() { cat $(find "$CG_BASE/job_$1" -name cgroup.procs) 2>/dev/null; }
	for p in $(procs "$1"); do kill -9 "$p" 2>/dev/null; done
	for _ in $(seq 50); do [ -z "$(procs "$1")" ] && return 0; sleep 0.02; done
}
# dcu_job MEMORY: a job whose device 0 is the DCU $DCU0 (matched by PCI bus
# id) with MEMORY bytes, 10 of 100 shares; printed.
dcu_job() { limits_job "$DCU0,$1,10,100,dcu"; }
# acl_job MEMORY: a job whose device 0 is Ascend davinci3 (matched by
# physical id) with MEMORY bytes, 10 of 100 shares; printed.
acl_job() { limits_job "3,$1,10,100,ascend"; }
# acl_probe ID -- COMMANDS: acl_probe with libvgpu.so preloaded in job ID.
acl_probe() {
	local id=$1
	shift
	[ "$1" = -- ] && shift
	in_job "$id" env LD_PRELOAD="$LIB" "$ACL_PROBE" "$@" 2>"$WORK/stderr"
}
# hip_probe ID -- COMMANDS: hip_probe with libvgpu.so preloaded in job ID.
hip_probe() {
	local id=$1
	shift
	[ "$1" = -- ] && shift
	in_job "$id" env LD_PRELOAD="$LIB" "$HIP_PROBE" "$@" 2>"$WORK/stderr"
}
# probe [ID] -- COMMANDS: cuda_probe with libvgpu.so preloaded (in job ID
# if given); stderr into $WORK/stderr.
probe() {
	local id=$1
	shift
	[ "$1" = -- ] && shift
	if [ -n "$id" ]; then
		in_job "$id" env LD_PRELOAD="$LIB" "$PROBE" "$@" 2>"$WORK/stderr"
	else
		env LD_PRELOAD="$LIB" "$PROBE" "$@" 2>"$WORK/stderr"
	fi
}


# now_ns: monotonic-enough wall clock in nanoseconds.
now_ns() { date +%s%N; }
