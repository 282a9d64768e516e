# Slurm 26.05's cgroup/v2 names a job's cgroup by SLUID, not by id
# (/system.slice/slurmstepd.scope/sBGSM98HZTST00/step_0/user/task_0), and
# vgpu-prolog ties the SLUID to the job id in root's run directory
# (jobs/job_identity.h). The cgroups here have that shape under the test's
# base: <base>/n1_slurmstepd.scope/<SLUID>/step_<n>.

# sluid_of ID: a SLUID for job ID (digits are base32 too).
sluid_of() { printf 's%013d' "$1"; }
# sluid_cgroup SLUID STEP: makes the step's cgroup; prints its path.
sluid_cgroup() {
	local d="$CG_BASE/n1_slurmstepd.scope/$1/step_$2"
	mkdir -p "$d" && echo "$d"
}
# in_cgroup DIR CMD...: runs CMD inside cgroup DIR.
in_cgroup() {
	local d=$1
	shift
	(echo "$BASHPID" >"$d/cgroup.procs" && exec "$@")
}

t_sluid_cgroup_held_through_its_tie() {
	local id sluid cg
	id=$(vgpu_job $GIB) || fail "job setup"
	sluid=$(sluid_of "$id")
	"$BIN/job_setup" tie "$RUN_DIR" "$id" "$sluid" || fail "tie"
	cg=$(sluid_cgroup "$sluid" 0) || fail "cgroup"
	# SLURM_JOB_ID is the user's to set: the cgroup and the tie decide.
	expect "over / at the 1 GiB quota" \
		"$(lines "$(in_cgroup "$cg" env SLURM_JOB_ID=1 LD_PRELOAD="$LIB" "$PROBE" init alloc $((GIB + 1)) alloc $GIB 2>"$WORK/stderr")")" \
		"init 0|alloc 2|alloc 0"
}

t_sluid_cgroup_without_tie_fails_closed() {
	local id sluid cg
	id=$(vgpu_job $GIB) || fail "job setup"
	sluid=$(sluid_of "$id")
	cg=$(sluid_cgroup "$sluid" 0) || fail "cgroup"
	# What libvgpu.so did before ties existed: inert, the whole device.
	expect "preloaded, no tie" \
		"$(lines "$(in_cgroup "$cg" env LD_PRELOAD="$LIB" "$PROBE" init alloc $((4 * GIB)) 2>"$WORK/stderr")")" \
		"init 800|alloc 2"
	grep -q "fail closed.*$sluid by SLUID.*$RUN_DIR/sluid/$sluid, which ties it to its job id, is missing" "$WORK/stderr" ||
		fail "stderr: $(cat "$WORK/stderr")"
}

t_sluid_tie_others_may_write_fails_closed() {
	local id sluid cg out
	id=$(vgpu_job $GIB) || fail "job setup"
	sluid=$(sluid_of "$id")
	"$BIN/job_setup" tie "$RUN_DIR" "$id" "$sluid" || fail "tie"
	cg=$(sluid_cgroup "$sluid" 0) || fail "cgroup"
	chmod 0777 "$RUN_DIR/sluid"
	out=$(lines "$(in_cgroup "$cg" env LD_PRELOAD="$LIB" "$PROBE" init alloc $((4 * GIB)) 2>"$WORK/stderr")")
	chmod 0755 "$RUN_DIR/sluid"
	expect "a tie anyone could have written" "$out" "init 800|alloc 2"
	grep -q "not trusted" "$WORK/stderr" || fail "stderr: $(cat "$WORK/stderr")"
}

t_sluid_step_holds_its_own_part() {
	# A step with its own limits (spank_vgpu.so's step directory) is found
	# below a SLUID as below job_<id>.
	local id sluid cg
	id=$(limits_job "$DEV0,$((2 * GIB)),20,100") || fail "job setup"
	"$BIN/job_setup" step "$RUN_DIR" "$id" 3 0 0 "$DEV0" 10 || fail "step setup"
	sluid=$(sluid_of "$id")
	"$BIN/job_setup" tie "$RUN_DIR" "$id" "$sluid" || fail "tie"
	cg=$(sluid_cgroup "$sluid" 3) || fail "cgroup"
	expect "the step's 1 GiB of the job's 2" \
		"$(lines "$(in_cgroup "$cg" env LD_PRELOAD="$LIB" "$PROBE" init alloc $((GIB + 1)) alloc $GIB 2>"$WORK/stderr")")" \
		"init 0|alloc 2|alloc 0"
}

SLUID_TESTS=(sluid_cgroup_held_through_its_tie sluid_cgroup_without_tie_fails_closed
	sluid_tie_others_may_write_fails_closed sluid_step_holds_its_own_part)
