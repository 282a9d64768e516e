# Sourced by tests/interposer/run: job steps that hold part of their job's
# shares (jobs/step_limits.h, made by spank_vgpu.so in a cluster; by
# job_setup here) are held to their part, each step to its own, and the job
# as a whole to its grant.

# in_step ID STEP CMD...: CMD in step STEP of job ID (cgroup job_ID/step_STEP).
in_step() {
	local id=$1 step=$2
	shift 2
	mkdir -p "$CG_BASE/job_$id/step_$step"
	(echo "$BASHPID" >"$CG_BASE/job_$id/step_$step/cgroup.procs" && exec "$@")
}
# step_probe ID STEP -- COMMANDS: cuda_probe in step STEP of job ID.
step_probe() {
	local id=$1 step=$2
	shift 2
	[ "$1" = -- ] && shift
	in_step "$id" "$step" env LD_PRELOAD="$LIB" "$PROBE" "$@" 2>"$WORK/stderr"
}

t_steps_held_to_their_part() {
	local id part=$((GIB * 20 / 50)) mib=1048576 out
	id=$(limits_job "$DEV0,$GIB,50,100") || fail "job setup"  # 50 shares, 1 GiB
	"$BIN/job_setup" step "$RUN_DIR" "$id" 1 0 0 "$DEV0" 20 || fail "step 1 setup"
	"$BIN/job_setup" step "$RUN_DIR" "$id" 2 0 0 "$DEV0" 20 || fail "step 2 setup"
	expect "a step of 20 of the job's 50 shares: 400 MiB of 1 GiB" \
		"$(lines "$(step_probe "$id" 1 -- init total alloc $((450 * mib)) alloc $((400 * mib)))")" \
		"init 0|total 0 $part|alloc 2|alloc 0"
	expect "a step the job holds whole (no limits of its own): the job's" \
		"$(lines "$(step_probe "$id" 3 -- init total)")" "init 0|total 0 $GIB"
	# Two steps at once, each to its own part, and the job to its grant.
	step_probe "$id" 1 -- init alloc $((400 * mib)) hold >"$WORK/s1" &
	step_probe "$id" 2 -- init alloc $((400 * mib)) hold >"$WORK/s2" &
	for f in s1 s2; do
		for _ in $(seq 100); do grep -q alloc "$WORK/$f" && break; sleep 0.05; done
	done
	expect "step 1 and step 2 each hold 400 MiB" "$(lines "$(grep -h alloc "$WORK/s1" "$WORK/s2")")" "alloc 0|alloc 0"
	expect "the job's batch step then: 300 MiB past the job's 1 GiB, 200 MiB within" \
		"$(lines "$(probe "$id" -- init alloc $((300 * mib)) alloc $((200 * mib)))")" "init 0|alloc 2|alloc 0"
	kill_job "$id"
	wait 2>/dev/null
	# Pace: the step's 20 shares, not the job's 50.
	out=$(step_probe "$id" 1 -- init work 0.6 5000 kernel | grep ^work)
	[ "$(busy "$out")" -ge 8 ] && [ "$(busy "$out")" -le 35 ] ||
		fail "a step of 20 shares kept the device $(busy "$out") % busy ($out)"
}

STEP_TESTS=(steps_held_to_their_part)
