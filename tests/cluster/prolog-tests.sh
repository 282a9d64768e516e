# Tests of vgpu-prolog, vgpu-epilog and vgpu-taskprolog (sourced by
# run-tests): the job's root-owned limits, its device memory quota enforced
# by libvgpu.so in both injection modes (LD_PRELOAD from the task prolog on
# n1 and n3; /etc/ld.so.preload on n2), usage in sacct, teardown after
# scancel / a slurmd kill and restart / a failing prolog, and hardware
# slices (MIG on n3, vNPU on n1) made and removed through the stub NVML and
# DCMI ($LAB/hw, written by cluster-up).
# shellcheck shell=bash

GIB=1073741824

# The job's files on every node ($NODE_RUN, lib.sh), the ties of its SLUID
# among them (jobs/job_identity.h).
job_files() {
	ls -d "$NODE_RUN"/*/job_"$1" "$NODE_RUN"/*/job_"$1".slices 2>/dev/null || true
	find "$NODE_RUN"/*/sluid -lname "../job_$1" 2>/dev/null || true
}

# log_mark FILE / log_since FILE MARK: the lines of a daemon log written
# after the mark. Job ids start again with a new lab and the logs are kept:
# only a test's own lines may count.
log_mark() { wc -l <"$1"; }
log_since() { tail -n +"$(($2 + 1))" "$1"; }

# wait_clean ID: until the epilogs have removed everything of job ID.
wait_clean() {
	wait_for 30 "job $1's files to go" sh -c "[ -z \"\$(ls -d $NODE_RUN/*/job_$1 $NODE_RUN/*/job_$1.slices 2>/dev/null; find $NODE_RUN/*/sluid -lname ../job_$1 2>/dev/null)\" ]" ||
		fail "left after job $1: $(job_files "$1" | tr '\n' ' ')"
}

# restart_requeued ID NODE: resumes the drained NODE and starts the held,
# requeued job ID again at once. slurmd revokes a job's credential at the
# whole second its kill request was made (slurmd/cred_context.c
# cred_revoke, a time_t) and refuses a credential made in that same second
# ("Job credential revoked": the job ends FAILED without running). An
# admin never releases within that second; here it is waited out: the
# kill is done on NODE (not COMPLETING) and the clock has passed a second.
restart_requeued() {
	wait_for 30 "$2 to finish job $1's kill" sh -c "! scontrol show node $2 | grep -q 'State=[^ ]*COMPLETING'" ||
		fail "$2 still completing job $1: $(scontrol show node "$2" | grep -o 'State=[^ ]*')"
	sleep 1.1
	scontrol update nodename="$2" state=resume
	scontrol release "$1"
	# A requeued job waits a while (BeginTime) before Slurm starts it again.
	scontrol update jobid="$1" starttime=now
}

# wait_ended ID: until the job has ended and its epilogs ran (not COMPLETING).
wait_ended() {
	wait_for "$JOB_TIMEOUT" "job $1 to end" sh -c \
		"squeue -h -t all -j $1 -o %T | grep -Eq '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL)'" ||
		fail "job $1 did not end (state $(job_state "$1"))"
}

# admin_comment ID: the job's AdminComment in the accounting database,
# waiting for the epilog to write it.
admin_comment() {
	local c
	wait_for 30 "job $1's usage in sacct" sh -c "sacct -n -P -X -j $1 -o AdminComment | grep -q vgpu" ||
		fail "no usage in sacct for job $1: '$(sacct -n -P -X -j "$1" -o AdminComment)'"
	sacct -n -P -X -j "$1" -o AdminComment | head -1
}

# json_get JSON PYTHON_EXPR: evaluates the expression on the parsed value `j`.
json_get() { python3 -c "import json,sys; j=json.loads(sys.argv[1]); print($2)" "$1"; }

# with_slicing MODEL: the prolog cuts hardware slices of MODEL until the
# test ends (vgpu.conf is read by each prolog run).
with_slicing() {
	cp "$LAB/etc/vgpu.conf" "$RUN/vgpu.conf.saved"
	echo "HardwareSlicing=$1" >>"$LAB/etc/vgpu.conf"
}
restore_slicing() {
	[ -f "$RUN/vgpu.conf.saved" ] && mv "$RUN/vgpu.conf.saved" "$LAB/etc/vgpu.conf"
	rm -f "$LAB"/hw/n?.env
}

# A job of user nobody on n1: the run directory and the limits file are
# root's and read-only to the job; the usage region is the job user's;
# libvgpu.so is in LD_PRELOAD (task prolog).
t_limits_root_only() {
	local id out
	id=$(submit -w n1 --uid=65534 --gid=65534 --gres=vgpu:ascend:10 --wrap "$LAB/bin/limitsjob")
	wait_job "$id"
	out=$(cat "$RUN/$id.out")
	expect "job user" "$(sed -n 's/^ID //p' <<<"$out")" 65534
	expect "limits owner/mode" "$(sed -n 's/^LIMITS //p' <<<"$out")" "0 644"
	expect "run dir owner/mode" "$(sed -n 's/^DIR //p' <<<"$out")" "0 755"
	expect "region owner/mode" "$(sed -n 's/^REGION //p' <<<"$out")" "65534 600"
	grep -q "^device 0 uuid=[0-9] vendor=ascend memory=6871947673 shares=10 of=100" <<<"$out" ||
		fail "limits file: $(grep '^device' <<<"$out")"
	for what in WRITE CREATE RENAME CHMOD; do
		expect "$what by the job user" "$(sed -n "s/^$what //p" <<<"$out")" denied
	done
	[[ $(sed -n 's/^PRELOAD //p' <<<"$out") == */slurm-vgpu/libvgpu.so* ]] ||
		fail "LD_PRELOAD of the job: '$(sed -n 's/^PRELOAD //p' <<<"$out")'"
	wait_clean "$id"
}

# A job over its device memory quota gets CUDA's out-of-memory error (10 of
# 100 shares of an A100 80GB: 8 GiB); the quota is what the device reports.
t_quota_oom() {
	local id quota
	quota=$(($(catalog_get nvidia-a100-80g memory_bytes) * 10 / 100))
	id=$(submit -w n3 --gres=vgpu:nvidia:10 --wrap "$LAB/bin/cudajob init total alloc $((6 * GIB)) alloc $((3 * GIB)) free alloc $((2 * GIB))")
	wait_job "$id"
	expect "probe" "$(tr '\n' '|' <"$RUN/$id.out")" "init 0|total 0 $quota|alloc 0|alloc 2|free 0|alloc 0|"
	wait_clean "$id"
}

# Injection modes. A program started by a raw execve(2) (syscall(2), no
# libc wrapper for libvgpu.so to hook) with LD_PRELOAD removed and VGPU_*
# variables set: on n2 (/etc/ld.so.preload) it stays limited; on n3
# (LD_PRELOAD from the task prolog) it escapes, the gap doc/enforcement.md
# states, which also shows that the n2 result comes from ld.so.preload.
t_preload_mode_stays_limited() {
	local id n expect_out
	for n in n2 n3; do
		id=$(submit -w $n --gres=vgpu:nvidia:10 --wrap "$LAB/bin/rawexec /usr/bin/env VGPU_SHARES=100 VGPU_MEMORY_QUOTA=$((80 * GIB)) VGPU_RUN_DIR=/tmp /bin/bash $LAB/bin/cudajob getenv LD_PRELOAD init alloc $((9 * GIB)) alloc $((7 * GIB))")
		wait_job "$id"
		if [ $n = n2 ]; then
			# The exec hooks put LD_PRELOAD back too; ld.so.preload loads it regardless.
			expect_out="getenv $VGPU_LIBVGPU|init 0|alloc 2|alloc 0|"
		else
			expect_out="getenv |init 0|alloc 0|alloc 0|"
		fi
		expect "raw exec on $n" "$(tr '\n' '|' <"$RUN/$id.out")" "$expect_out"
		wait_clean "$id"
	done
}

# The epilog records peak memory and busy time in the AdminComment.
t_usage_in_sacct() {
	local id c
	id=$(submit -w n3 --gres=vgpu:nvidia:20 --wrap "$LAB/bin/cudajob init alloc $GIB alloc $GIB free work 1 1000 kernel")
	wait_job "$id"
	c=$(admin_comment "$id")
	expect "memory_peak" "$(json_get "$c" "j['nodes']['n3']['devices'][0]['memory_peak']")" $((2 * GIB))
	expect "shares/of" "$(json_get "$c" "'%d/%d' % (j['nodes']['n3']['devices'][0]['shares'], j['nodes']['n3']['devices'][0]['of'])")" "20/100"
	expect "type" "$(json_get "$c" "j['nodes']['n3']['devices'][0]['type']")" nvidia
	# 1 s of back-to-back kernels paced to 20%: about 0.2 s of device time.
	expect "busy_s in (0, 0.5]" "$(json_get "$c" "0 < j['nodes']['n3']['devices'][0]['busy_s'] <= 0.5")" True
	log "usage_in_sacct: AdminComment of job $id: $c"
}

# accounting_up: MariaDB and slurmdbd running again (after a test stopped them).
accounting_up() {
	daemon_running mariadbd "$LAB/mysql/mysqld.pid" || launch_mariadb || fail "mariadbd does not start again"
	daemon_running slurmdbd "$LAB/run/slurmdbd.pid" || launch_slurmdbd || fail "slurmdbd does not start again"
}

# slurmdbd and MariaDB crash (kill -9) before a job ends: its epilog cannot
# record the usage and keeps it on the node (pending_usage.h); slurmctld,
# restarted while they are down, keeps the job's own records for slurmdbd
# (dbd.messages in StateSaveLocation). Once accounting is back, the next
# vgpu job's epilog on the node records the kept usage: the job is in sacct
# once, with its usage, and nothing stays kept.
t_usage_after_dbd_outage() {
	local id next c kept=$VGPU_STATE_DIR/pending-usage
	trap 'accounting_up' EXIT
	kill9_daemon slurmdbd "$LAB/run/slurmdbd.pid"
	kill9_daemon mariadbd "$LAB/mysql/mysqld.pid"
	id=$(submit -w n3 --gres=vgpu:nvidia:20 --wrap "$LAB/bin/cudajob init alloc $GIB")
	wait_job "$id"
	wait_clean "$id"
	[ -z "$(sacct -n -X -j "$id" -o JobID 2>/dev/null)" ] || fail "sacct answered while slurmdbd was down"
	wait_for 30 "job $id's usage to be kept on n3" test -s "$kept/$id.n3.json" ||
		fail "job $id's usage not kept in $kept: $(ls "$kept" 2>&1 | tr '\n' ' ')"
	# slurmctld reads dbd.messages at start and writes it at stop only.
	rm -f "$LAB/state/dbd.messages"
	restart_slurmctld
	[ -s "$LAB/state/dbd.messages" ] || fail "slurmctld saved no records for slurmdbd at its stop (no $LAB/state/dbd.messages)"
	accounting_up
	wait_for 30 "job $id in sacct" sh -c "sacct -n -X -j $id -o JobID | grep -q $id" || fail "job $id not in sacct after slurmdbd came back"
	next=$(submit -w n3 --gres=vgpu:nvidia:10 --wrap true)
	wait_job "$next"
	c=$(admin_comment "$id")
	expect "shares/of of job $id" "$(json_get "$c" "'%d/%d' % (j['nodes']['n3']['devices'][0]['shares'], j['nodes']['n3']['devices'][0]['of'])")" "20/100"
	expect "memory_peak of job $id" "$(json_get "$c" "j['nodes']['n3']['devices'][0]['memory_peak']")" "$GIB"
	expect "records of job $id in sacct" "$(sacct -n -X -P -j "$id" -o JobID,State | sort -u | tr '\n' ' ')" "$id|COMPLETED "
	# Job $next's own record may trail the backlog slurmctld sends after
	# the outage: its epilog then keeps that record and still records $id's.
	[ ! -e "$kept/$id.n3.json" ] || fail "job $id's usage still kept: $(ls "$kept" | tr '\n' ' ')"
}

# scancel of a running job: the epilog removes its directory.
t_teardown_after_scancel() {
	local id
	id=$(submit_dump -w n1 --gres=vgpu:ascend:10 -- sleep 300)
	trap "scancel $id 2>/dev/null || true" EXIT
	wait_running "$id"
	[ -f "$NODE_RUN/n1/job_$id/limits" ] || fail "no limits file while job $id runs"
	scancel "$id"
	wait_ended "$id"
	wait_clean "$id"
}

# slurmd killed (-9) and started again while a job runs: the job goes on,
# and its end still tears everything down.
t_teardown_after_slurmd_restart() {
	local id
	id=$(submit_dump -w n1 --gres=vgpu:ascend:20 -- sleep 300)
	trap "scancel $id 2>/dev/null || true" EXIT
	wait_running "$id"
	kill -9 "$(pidfile_pid "$LAB/run/slurmd-n1.pid")"
	sleep 1
	restart_slurmd n1
	[ "$(job_state "$id")" = RUNNING ] || fail "job $id is $(job_state "$id") after the slurmd restart"
	[ -f "$NODE_RUN/n1/job_$id/limits" ] || fail "limits of job $id gone after the slurmd restart"
	scancel "$id"
	wait_ended "$id"
	wait_clean "$id"
}

# A prolog that fails half way (the MIG compute instance cannot be made):
# Slurm drains the node and requeues the job, slurmd logs the one-line
# reason, and no file, region or slice is left.
t_failing_prolog() {
	local id reason mark
	trap 'restore_slicing; scontrol update nodename=n3 state=resume 2>/dev/null || true' EXIT
	with_slicing nvidia-a100-80g
	echo "export VGPU_STUB_NVML_FAIL=nvmlGpuInstanceCreateComputeInstance" >"$LAB/hw/n3.env"
	mark=$(log_mark "$LAB/log/slurmd-n3.log")
	id=$(submit -w n3 --gres=vgpu:nvidia:10 --wrap true)
	# shellcheck disable=SC2064  # the id now
	trap "restore_slicing; scancel $id 2>/dev/null || true; scontrol update nodename=n3 state=resume 2>/dev/null || true" EXIT
	wait_for 30 "n3 to drain" sh -c "sinfo -h -n n3 -o %t | grep -q drain" || fail "n3 not drained: $(sinfo -h -n n3 -o '%t %E')"
	reason=$(sinfo -h -n n3 -o %E)
	[[ $reason == *Prolog* ]] || fail "drain reason: '$reason'"
	log_since "$LAB/log/slurmd-n3.log" "$mark" | grep -q "vgpu-prolog: job $id: .*nvmlGpuInstanceCreateComputeInstance" ||
		fail "slurmd log lacks the prolog's reason: $(log_since "$LAB/log/slurmd-n3.log" "$mark" | grep "vgpu-prolog" | tail -2)"
	[[ $(job_state "$id") == PENDING ]] || fail "job $id is $(job_state "$id"), expected requeued (PENDING)"
	[[ $(squeue -h -j "$id" -o %r) == *held* ]] || fail "job $id pending for '$(squeue -h -j "$id" -o %r)', expected requeued held"
	[ -z "$(job_files "$id")" ] || fail "left by the failed prolog: $(job_files "$id" | tr '\n' ' ')"
	[ ! -s "$LAB/hw/mig-n3" ] || fail "MIG instances left: $(cat "$LAB/hw/mig-n3")"
}

# ran_without_prolog ID: true when job ID, requeued after its prolog
# failed and run again on the same node, ran without a prolog and its
# device calls failed closed. Only Slurm 22.05 was seen to do that, when
# released within the second of its kill (slurmd/req.c _rpc_prolog runs the
# prolog for a job id's first_job_run only; doc/admin-guide.md);
# restart_requeued waits that out. Later releases fail the test.
ran_without_prolog() {
	grep -q "vgpu-prolog did not run on this node" "$RUN/$1.out" || return 1
	[ "$(slurm_series)" = 2205 ] || fail "job $1 ran again without its prolog on Slurm $(slurm_series)"
	log "Slurm 22.05 ran job $1 again without its prolog; its device calls failed closed"
}

# vgpu-prolog killed (SIGKILL) half way: on n3, after it made the job's MIG
# GPU instance, inside the compute instance's creation (the stub NVML
# stalls there). Slurm drains n3 and requeues the job. What the killed
# prolog made is on record (a partial slice), so the epilog Slurm runs for
# the killed job, or else the job's next prolog, removes it: once n3 is
# resumed and the job released, the job runs with one MIG instance on the
# node (its own) and its epilog leaves no file and no MIG instance. (Slurm
# 22.05 may run it without a prolog: then it fails closed.)
t_prolog_killed_halfway() {
	local id pid
	trap 'restore_slicing; rm -f "$LAB/hw/n3.env"; scontrol update nodename=n3 state=resume 2>/dev/null || true' EXIT
	with_slicing nvidia-a100-80g
	echo "export VGPU_STUB_NVML_STALL=nvmlGpuInstanceCreateComputeInstance" >"$LAB/hw/n3.env"
	id=$(submit -w n3 --gres=vgpu:nvidia:10 --wrap "cat $LAB/hw/mig-n3 >$RUN/\$SLURM_JOB_ID.mig; $LAB/bin/cudajob init")
	# shellcheck disable=SC2064  # the id now
	trap "restore_slicing; rm -f '$LAB/hw/n3.env'; scancel $id 2>/dev/null || true; scontrol update nodename=n3 state=resume 2>/dev/null || true" EXIT
	wait_for 30 "the prolog to make the GPU instance" sh -c "[ -s '$LAB/hw/mig-n3' ] && pgrep -f '$VGPU_SBINDIR/vgpu-prolog' >/dev/null" ||
		fail "no stalled prolog with a GPU instance (MIG state: '$(cat "$LAB/hw/mig-n3" 2>/dev/null)')"
	pid=$(pgrep -f "$VGPU_SBINDIR/vgpu-prolog" | head -1)
	kill -9 "$pid"
	rm -f "$LAB/hw/n3.env"
	wait_for 30 "n3 to drain" sh -c "sinfo -h -n n3 -o %t | grep -q drain" || fail "n3 not drained: $(sinfo -h -n n3 -o '%t %E')"
	[[ $(job_state "$id") == PENDING ]] || fail "job $id is $(job_state "$id"), expected requeued (PENDING)"
	# The epilog Slurm runs for the killed job may already have removed it.
	log "prolog_killed_halfway: after the kill, job $id's slices record: '$(cat "$NODE_RUN/n3/job_$id.slices" 2>/dev/null | grep slice)', MIG state: '$(cat "$LAB/hw/mig-n3")'"
	restart_requeued "$id" n3
	wait_job "$id"
	if ! ran_without_prolog "$id"; then
		expect "MIG instances while job $id ran" "$(grep -c . "$RUN/$id.mig")" 1
		expect "job $id's device calls" "$(grep '^init' "$RUN/$id.out")" "init 0"
	fi
	wait_clean "$id"
	[ ! -s "$LAB/hw/mig-n3" ] || fail "MIG instances left: $(cat "$LAB/hw/mig-n3")"
}

# The run directory's file system full (a 64 KiB tmpfs, filled, over
# /run/slurm-vgpu in n3's slurmd namespace): the prolog fails with a
# one-line reason that names it, Slurm drains n3 and requeues the job, and
# nothing of the job is left there. With space again (the tmpfs gone),
# the job runs with its limits.
# unmount_full PID: the test's tmpfs from slurmd PID's namespace, if it is
# still there (a second umount would take the node's run directory bind,
# lib.sh start_slurmd_node, with it).
unmount_full() {
	nsenter -t "$1" -m sh -c "grep -q '^vgpu-full $VGPU_RUN ' /proc/self/mounts && umount $VGPU_RUN" 2>/dev/null || true
}

t_full_run_dir() {
	local id pid
	pid=$(pidfile_pid "$LAB/run/slurmd-n3.pid")
	nsenter -t "$pid" -m sh -c "mount -t tmpfs -o size=64k,mode=0755 vgpu-full $VGPU_RUN && { dd if=/dev/zero of=$VGPU_RUN/filler bs=4k 2>/dev/null; true; }" ||
		fail "cannot mount a small tmpfs over $VGPU_RUN in n3's namespace"
	# shellcheck disable=SC2064  # the pid now
	trap "unmount_full $pid; scontrol update nodename=n3 state=resume 2>/dev/null || true" EXIT
	local mark reason
	mark=$(log_mark "$LAB/log/slurmd-n3.log")
	id=$(submit -w n3 --gres=vgpu:nvidia:10 --wrap "$LAB/bin/cudajob init")
	# shellcheck disable=SC2064
	trap "unmount_full $pid; scancel $id 2>/dev/null; scontrol update nodename=n3 state=resume 2>/dev/null || true" EXIT
	wait_for 30 "n3 to drain" sh -c "sinfo -h -n n3 -o %t | grep -q drain" || fail "n3 not drained: $(sinfo -h -n n3 -o '%t %E')"
	reason=$(log_since "$LAB/log/slurmd-n3.log" "$mark" | grep "prolog" | head -1)
	[[ $reason == *"vgpu-prolog: job $id: "*"No space left on device"* ]] ||
		fail "slurmd log lacks the prolog's reason: '$reason'"
	log "full_run_dir: $reason"
	[[ $(job_state "$id") == PENDING ]] || fail "job $id is $(job_state "$id"), expected requeued (PENDING)"
	# The run directory's own sluid/ (26.05: the SLUID ties) may stay, empty.
	expect "what is left in the full run directory" \
		"$(nsenter -t "$pid" -m sh -c "ls $VGPU_RUN; ls -A $VGPU_RUN/sluid 2>/dev/null" | grep -vx sluid | tr '\n' ' ')" "filler "
	unmount_full "$pid"
	# n3's run directory is $NODE_RUN/n3 again (the bind under the tmpfs).
	expect "n3's run directory after the tmpfs" "$(nsenter -t "$pid" -m stat -c %d:%i "$VGPU_RUN")" "$(stat -c %d:%i "$NODE_RUN/n3")"
	restart_requeued "$id" n3
	wait_job "$id"
	ran_without_prolog "$id" || expect "job $id's device calls" "$(grep '^init' "$RUN/$id.out")" "init 0"
	wait_clean "$id"
}

# MIG: a 10-share job on n3 runs in a 1g.10gb instance the prolog made; its
# CUDA_VISIBLE_DEVICES names the instance; the epilog destroys it.
t_mig_slices() {
	local id mig dev
	trap 'restore_slicing' EXIT
	with_slicing nvidia-a100-80g
	id=$(submit -w n3 --gres=vgpu:nvidia:10 --wrap "cat $LAB/hw/mig-n3 >$RUN/\$SLURM_JOB_ID.mig; cat $VGPU_RUN/job_\$SLURM_JOB_ID/limits >$RUN/\$SLURM_JOB_ID.limits; $LAB/bin/dumpjob $RUN")
	wait_job "$id"
	mig=$(cat "$RUN/$id.mig")
	dev=$(env_of "$id" CUDA_VISIBLE_DEVICES)
	[[ $dev == MIG-* ]] || fail "CUDA_VISIBLE_DEVICES='$dev', expected a MIG device"
	[ "$(grep -c . <<<"$mig")" = 1 ] || fail "MIG instances during the job: '$mig'"
	[[ $mig == "$(env_of "$id" VGPU_UUIDS) "*"uuid=$dev"* ]] || fail "instance '$mig' is not on the job's GPU or not $dev"
	grep -q "^device 0 uuid=$dev vendor=nvidia memory=[0-9]* shares=100 of=100" "$RUN/$id.limits" ||
		fail "limits of a sliced device: $(cat "$RUN/$id.limits")"
	wait_clean "$id"
	[ ! -s "$LAB/hw/mig-n3" ] || fail "MIG instance left after the job: $(cat "$LAB/hw/mig-n3")"
	expect "slice in sacct" "$(json_get "$(admin_comment "$id")" "j['nodes']['n3']['devices'][0].get('slice')")" 1g.10gb
}

# slices_at_capacity NODE SHARES JOBS RUNNING STATE VISIBLE: JOBS jobs of
# SHARES shares on NODE, whose sliced devices hold RUNNING such slices (the
# stub driver's STATE file lists them; VISIBLE is the variable naming a
# job's device): RUNNING run at once, each on a slice of its own, the
# rest wait (neither held nor failed), NODE stays in service, will-run
# (sbatch --test-only) waits for a slice too, and when they have all ended
# no slice is left. Sets the caller's `ids`.
slices_at_capacity() {
	local node=$1 shares=$2 jobs=$3 want=$4 state=$5 visible=$6 id i running pending when list first
	rm -f "$RUN/slices-release"
	for i in $(seq "$jobs"); do
		ids+=("$(submit -w "$node" -p share --mem=64 -t 5 --gres=vgpu:"${NODE_TYPE:-}$shares" --wrap \
			"echo \$$visible >$RUN/\$SLURM_JOB_ID.dev; while [ ! -e $RUN/slices-release ]; do sleep 1; done")")
	done
	list=$(IFS=,; echo "${ids[*]}")
	wait_for 90 "$want of the jobs to run" sh -c "[ \$(squeue -h -t R -j $list | wc -l) -ge $want ]" ||
		fail "running: $(squeue -h -j "$list" -o '%i %T %r' | tr '\n' ';') $node: $(sinfo -h -n "$node" -o '%t %E')"
	sleep 3 # a scheduling pass or two: no more may start
	first=$(squeue -h -t R -j "$list" -o %i)
	running=$(grep -c . <<<"$first")
	pending=$(squeue -h -t PD -j "$list" -o %r | tr '\n' ';')
	expect "jobs running in $node's slices" "$running" "$want"
	# The rest waiting, as for any full node (Resources; those behind it,
	# which named the node, ReqNodeNotAvail or Priority), none held or failed.
	[ "$(tr -cd ';' <<<"$pending" | wc -c)" = $((jobs - want)) ] && [[ ! $pending =~ [Hh]eld|[Ff]ail ]] ||
		fail "jobs waiting: '$pending' (expected $((jobs - want)), for a slice)"
	expect "slices in place" "$(grep -c . "$state")" "$want"
	[[ $(sinfo -h -n "$node" -o %t) != drain* ]] || fail "$node drained: $(sinfo -h -n "$node" -o %E)"
	when=$(sbatch --test-only -w "$node" -p share --mem=64 -t 5 --gres=vgpu:"${NODE_TYPE:-}$shares" --wrap true 2>&1 |
		sed -n 's/.* to start at \([^ ]*\) .*/\1/p')
	[ -n "$when" ] && [ "$(date -d "$when" +%s)" -gt $(($(date +%s) + 120)) ] ||
		fail "will-run says a $shares-share job starts on full $node at '${when:-?}' (now $(date +%FT%T))"
	touch "$RUN/slices-release"
	for id in "${ids[@]}"; do wait_job "$id"; done
	expect "distinct devices of the $want jobs that ran at once" \
		"$(for id in $first; do cat "$RUN/$id.dev"; done | sort -u | wc -l)" "$want"
	for id in "${ids[@]}"; do wait_clean "$id"; done
	[ ! -s "$state" ] || fail "slices left after the jobs: $(cat "$state")"
}

# MIG at capacity: sixteen 10-share jobs on n3, whose two A100s hold seven
# 1g.10gb instances each. slurmctld counts the slices (n3's Features name
# the model; the positions are in the jobs' share bits): fourteen run, two
# wait (slices_at_capacity). Then a job of a whole GPU gets the 7g.80gb
# instance.
t_mig_at_capacity() {
	local ids=() id mig
	trap 'restore_slicing; touch "$RUN/slices-release"; scancel ${ids[*]} 2>/dev/null || true' EXIT
	with_slicing nvidia-a100-80g
	NODE_TYPE=nvidia: slices_at_capacity n3 10 16 14 "$LAB/hw/mig-n3" CUDA_VISIBLE_DEVICES
	grep -q '^MIG-' "$RUN/${ids[0]}.dev" || fail "job ${ids[0]} ran on '$(cat "$RUN/${ids[0]}.dev")', not a MIG device"
	id=$(submit -w n3 --gres=vgpu:nvidia:100 --wrap "cat $LAB/hw/mig-n3 >$RUN/\$SLURM_JOB_ID.mig")
	wait_job "$id"
	mig=$(cat "$RUN/$id.mig")
	[[ $mig == *" profile=4 uuid=MIG-"*" start=0" ]] || fail "a whole-GPU job's instance: '$mig' (expected 7g, profile 4)"
	wait_clean "$id"
	[ ! -s "$LAB/hw/mig-n3" ] || fail "MIG instance left: $(cat "$LAB/hw/mig-n3")"
}

# vNPU at capacity: eighteen 30-share jobs on n1, whose eight 910B NPUs
# (24 AI cores) hold two vir12_3c_32g each (counting shares, three would
# fit; the third's prolog would find no AI cores): sixteen run, two wait
# (slices_at_capacity). Then a job of a whole NPU, which no template
# holds, gets the NPU itself, unsliced.
t_vnpu_at_capacity() {
	local ids=() id
	trap 'restore_slicing; touch "$RUN/slices-release"; scancel ${ids[*]} 2>/dev/null || true' EXIT
	with_slicing ascend-910b
	NODE_TYPE=ascend: slices_at_capacity n1 30 18 16 "$LAB/hw/vnpu-n1" ASCEND_RT_VISIBLE_DEVICES
	id=$(submit -w n1 --gres=vgpu:ascend:100 --wrap "cat $LAB/hw/vnpu-n1 >$RUN/\$SLURM_JOB_ID.vnpu; true")
	wait_job "$id"
	expect "vNPUs while a whole-NPU job ran" "$(grep -c . "$RUN/$id.vnpu")" 0
	wait_clean "$id"
}

# A request no vNPU template holds but less than a whole NPU (60 shares of
# a 910B, whose largest template is 50 %) fits no sliced NPU ever:
# slurmctld refuses a job that names n1 at submission (as any request n1
# can never hold), and no prolog fails; without slicing the same job runs.
t_vnpu_no_template_waits() {
	local id out
	trap 'restore_slicing' EXIT
	with_slicing ascend-910b
	if out=$(submit -w n1 --gres=vgpu:ascend:60 --wrap true 2>&1); then
		scancel "$out"
		fail "a 60-share job on sliced n1 was accepted (job $out)"
	fi
	[[ $out == *"Requested node configuration is not available"* ]] || fail "sbatch said: $out"
	[[ $(sinfo -h -n n1 -o %t) != drain* ]] || fail "n1 drained: $(sinfo -h -n n1 -o %E)"
	restore_slicing
	id=$(submit -w n1 --gres=vgpu:ascend:60 --wrap true)
	wait_job "$id"
}

# A MIG instance no job's record names on each of n3's GPUs (a prolog
# killed between the driver's return and its record, or one made by hand):
# the next prolog that slices the GPU removes it first (under the GPU's
# lock: proof that no job owns it). A job of both GPUs runs in its own two
# 7g.80gb instances, which the orphans filled, and leaves nothing.
t_orphan_slice_removed() {
	local id u0 u1
	trap 'restore_slicing' EXIT
	with_slicing nvidia-a100-80g
	lab_uuid_to u0 n3 0
	lab_uuid_to u1 n3 1
	printf '%s gi=1 ci=- profile=4 uuid=- start=0\n%s gi=1 ci=- profile=4 uuid=- start=0\n' "$u0" "$u1" >"$LAB/hw/mig-n3"
	id=$(submit -w n3 --gres=vgpu:nvidia:200 --wrap "cat $LAB/hw/mig-n3 >$RUN/\$SLURM_JOB_ID.mig")
	wait_job "$id"
	expect "MIG devices while job $id ran" "$(grep -c 'uuid=MIG-' "$RUN/$id.mig")" 2
	wait_clean "$id"
	[ ! -s "$LAB/hw/mig-n3" ] || fail "MIG instances left: $(cat "$LAB/hw/mig-n3")"
	[[ $(sinfo -h -n n3 -o %t) != drain* ]] || fail "n3 drained: $(sinfo -h -n n3 -o %E)"
}

# vNPU: a 25-share job on n1 runs in a vir06_1c_16g vNPU; its
# ASCEND_RT_VISIBLE_DEVICES names the vNPU; the epilog destroys it.
t_vnpu_slices() {
	local id vnpu dev
	trap 'restore_slicing' EXIT
	with_slicing ascend-910b
	id=$(submit -w n1 --gres=vgpu:ascend:25 --wrap "cat $LAB/hw/vnpu-n1 >$RUN/\$SLURM_JOB_ID.vnpu; $LAB/bin/dumpjob $RUN")
	wait_job "$id"
	vnpu=$(cat "$RUN/$id.vnpu")
	dev=$(env_of "$id" ASCEND_RT_VISIBLE_DEVICES)
	[ "$(grep -c . <<<"$vnpu")" = 1 ] || fail "vNPUs during the job: '$vnpu'"
	[[ $vnpu == *"vdev=$dev "*"template=vir06_1c_16g"* ]] || fail "vNPU '$vnpu' is not $dev / vir06_1c_16g"
	[[ $vnpu == "$(basename "$(env_of "$id" VGPU_DEVICE_FILES)" | tr -dc 0-9) "* ]] || fail "vNPU '$vnpu' not on the job's NPU"
	wait_clean "$id"
	[ ! -s "$LAB/hw/vnpu-n1" ] || fail "vNPU left after the job: $(cat "$LAB/hw/vnpu-n1")"
}

# spank_vgpu.so (plugstack.conf) hands each task of a vgpu job its run
# directory as a descriptor: a job of user nobody on n3 that hides
# /run/slurm-vgpu in a container of its own (user + mount namespace, a
# tmpfs over it) is still held to its 8 GiB through the descriptor, and
# fails closed without it. With JobUserNamespaces=deny in vgpu.conf its
# seccomp filter refuses the job a user namespace, while the job's device
# work and a job without vgpu are unaffected.
t_spank_task_handoff() {
	local id out
	id=$(submit -w n3 --uid=65534 --gid=65534 --gres=vgpu:nvidia:10 --wrap "$LAB/bin/spankjob")
	wait_job "$id"
	out=$(cat "$RUN/$id.out")
	[[ $(sed -n 's/^FD //p' <<<"$out") =~ ^[0-9]+\ $VGPU_RUN/job_$id$ ]] ||
		fail "VGPU_RUN_DIR_FD of the task: '$(sed -n 's/^FD //p' <<<"$out")'"
	expect "user namespace allowed" "$(sed -n 's/^UNSHARE //p' <<<"$out")" ok
	expect "run directory hidden, descriptor handed over" "$(sed -n 's/^HIDDEN //p' <<<"$out")" "init 0|alloc 2|alloc 0|"
	expect "run directory hidden, no descriptor" "$(sed -n 's/^NOFD //p' <<<"$out")" "init 800|"
	wait_clean "$id"

	cp "$LAB/etc/vgpu.conf" "$RUN/vgpu.conf.saved"
	echo "JobUserNamespaces=deny" >>"$LAB/etc/vgpu.conf"
	id=$(submit -w n3 --uid=65534 --gid=65534 --gres=vgpu:nvidia:10 --wrap "$LAB/bin/spankjob")
	local plain
	plain=$(submit -w n3 --uid=65534 --gid=65534 --wrap "$LAB/bin/spankjob")
	wait_job "$id"
	wait_job "$plain"
	mv "$RUN/vgpu.conf.saved" "$LAB/etc/vgpu.conf"
	out=$(cat "$RUN/$id.out")
	expect "JobUserNamespaces=deny: user namespace in a vgpu job" "$(sed -n 's/^UNSHARE //p' <<<"$out")" denied
	expect "JobUserNamespaces=deny: device work" "$(sed -n 's/^PLAIN //p' <<<"$out")" "init 0|alloc 2|alloc 0|"
	expect "JobUserNamespaces=deny: a job without vgpu" "$(sed -n 's/^UNSHARE //p' "$RUN/$plain.out")" ok
	wait_clean "$id"
}

# Job steps are held to their part of the job (spank_vgpu.so makes their
# limits): in a job of 50 shares of an A100 80GB (40 GiB) on n3, a step of
# 20 shares sees 16 GiB and cannot pass it; two such steps hold 15 GiB each
# at once; the batch step then gets only what is left of the job's 40 GiB.
# The epilog removes the steps' directories with the job's.
t_step_limits() {
	local id out
	id=$(submit -w n3 -c 2 --uid=65534 --gid=65534 --gres=vgpu:nvidia:50 "$LAB/bin/stepjob")
	wait_job "$id"
	out=$(cat "$RUN/$id.out")
	expect "a step of 20 of the job's 50 shares" "$(sed -n 's/^STEP //p' <<<"$out")" \
		"init 0|total 0 $((16 * GIB))|alloc 2|alloc 0|"
	expect "two steps holding 15 GiB each at once" "$(sed -n 's/^HELD //p' <<<"$out")" 2
	expect "the batch step beside them: the job's 40 GiB, 30 of them held" "$(sed -n 's/^BATCH //p' <<<"$out")" \
		"init 0|total 0 $((40 * GIB))|alloc 2|alloc 0|"
	expect "the steps' directories during the job" "$(sed -n 's/^DIRS //p' <<<"$out")" "step_0 step_1 step_2"
	wait_clean "$id"
	# The usage record keeps the steps apart.
	local c
	c=$(admin_comment "$id")
	expect "steps in the usage record" "$(json_get "$c" "' '.join(sorted(j['nodes']['n3']['steps']))")" "0 1 2"
	expect "step 1's shares and quota in the record" \
		"$(json_get "$c" "(j['nodes']['n3']['steps']['1'][0]['shares'], j['nodes']['n3']['steps']['1'][0]['memory_quota'])")" \
		"(20, $((16 * GIB)))"
	expect "step 0's peak in the record" "$(json_get "$c" "j['nodes']['n3']['steps']['0'][0]['memory_peak']")" $((15 * GIB))
}

# Programs the jobs above run (and $LAB/bin/cudajob, from cluster-up).
write_prolog_job_helpers() {
	cat >"$LAB/bin/limitsjob" <<-EOF
	#!/bin/bash
	# What the job's user can do to its run directory.
	d=$VGPU_RUN/job_\$SLURM_JOB_ID
	echo "ID \$(id -u)"
	echo "LIMITS \$(stat -c '%u %a' \$d/limits)"
	echo "DIR \$(stat -c '%u %a' \$d)"
	echo "REGION \$(stat -c '%u %a' \$d/usage.0)"
	grep '^device' \$d/limits
	(echo "device 1 uuid=- vendor=ascend memory=1 shares=1 of=100" >>\$d/limits) 2>/dev/null && echo "WRITE ok" || echo "WRITE denied"
	(: >\$d/new) 2>/dev/null && echo "CREATE ok" || echo "CREATE denied"
	mv \$d/limits \$d/old 2>/dev/null && echo "RENAME ok" || echo "RENAME denied"
	chmod 666 \$d/limits 2>/dev/null && echo "CHMOD ok" || echo "CHMOD denied"
	echo "PRELOAD \$LD_PRELOAD"
	EOF
	cat >"$LAB/bin/rawexec" <<-'EOF'
	#!/usr/bin/python3
	# rawexec PROGRAM ARGS...: execve(2) through syscall(2) with LD_PRELOAD
	# removed, so that no libc exec wrapper (and no hook of it) runs.
	import ctypes, os, platform, sys
	libc = ctypes.CDLL(None, use_errno=True)
	nr = {"x86_64": 59, "aarch64": 221}[platform.machine()]
	env = [f"{k}={v}".encode() for k, v in os.environ.items() if k != "LD_PRELOAD"]
	args = [a.encode() for a in sys.argv[1:]]
	argv = (ctypes.c_char_p * (len(args) + 1))(*args, None)
	envp = (ctypes.c_char_p * (len(env) + 1))(*env, None)
	libc.syscall(nr, args[0], argv, envp)
	sys.exit("rawexec: execve: " + os.strerror(ctypes.get_errno()))
	EOF
	cat >"$LAB/bin/spankjob" <<-EOF
	#!/bin/bash
	# What spank_vgpu.so handed over, and a container of the job's own that
	# does not show the run directory (a tmpfs over it).
	echo "FD \$VGPU_RUN_DIR_FD \$(readlink /proc/self/fd/\$VGPU_RUN_DIR_FD)"
	unshare -U -r -m true 2>/dev/null && echo "UNSHARE ok" || echo "UNSHARE denied"
	[ -n "\$VGPU_SHARES" ] || exit 0
	probe="init alloc $((9 * GIB)) alloc $((7 * GIB))"
	echo "PLAIN \$($LAB/bin/cudajob \$probe 2>/dev/null | tr '\n' '|')"
	hidden() { unshare -U -r -m sh -c "mount -t tmpfs none $VGPU_RUN && exec $LAB/bin/cudajob \$*" 2>/dev/null | tr '\n' '|'; }
	echo "HIDDEN \$(hidden \$probe)"
	echo "NOFD \$(unset VGPU_RUN_DIR_FD; hidden init)"
	EOF
	cat >"$LAB/bin/stepjob" <<-EOF
	#!/bin/bash
	# Steps of 20 shares in a job of 50 (t_step_limits).
	step() { srun -n1 -c1 --gres=vgpu:nvidia:20 $LAB/bin/cudajob "\$@"; }
	held=$RUN/\$SLURM_JOB_ID.held
	echo "STEP \$(step init total alloc $((17 * GIB)) alloc $((15 * GIB)) | tr '\n' '|')"
	step init alloc $((15 * GIB)) hold >\$held.1 &
	step init alloc $((15 * GIB)) hold >\$held.2 &
	for _ in \$(seq 150); do [ "\$(cat \$held.* 2>/dev/null | grep -c '^alloc 0')" = 2 ] && break; sleep 0.1; done
	echo "HELD \$(cat \$held.* | grep -c '^alloc 0')"
	echo "BATCH \$($LAB/bin/cudajob init total alloc $((12 * GIB)) alloc $((9 * GIB)) | tr '\n' '|')"
	echo "DIRS \$(cd $VGPU_RUN/job_\$SLURM_JOB_ID && echo step_*)"
	kill %1 %2 2>/dev/null
	wait
	EOF
	chmod 755 "$LAB/bin/limitsjob" "$LAB/bin/rawexec" "$LAB/bin/spankjob" "$LAB/bin/stepjob"
}

# Jobs on two nodes (n2 and n3, each its own run directory: lib.sh), a
# fractional one (30 nvidia shares per node) and a whole-device one: on each
# node vgpu-prolog writes that node's limits, the task there is held to its
# memory quota, the one AdminComment gets both nodes' usage, and both
# epilogs remove their node's files.
t_two_node_jobs() {
	local shares id n c quota lim task
	for shares in 30 100; do
		quota=$(($(catalog_get nvidia-h100 memory_bytes) * shares / 100))
		task="cat $VGPU_RUN/job_\$SLURM_JOB_ID/limits >$RUN/\$SLURM_JOB_ID.\$SLURMD_NODENAME.limits;"
		task+=" $LAB/bin/cudajob init total alloc $((quota + GIB)) alloc $GIB work 1 1000 kernel >$RUN/\$SLURM_JOB_ID.\$SLURMD_NODENAME.out 2>&1"
		id=$(submit -N 2 -w n2,n3 --gres=vgpu:nvidia:$shares --wrap "srun -N 2 --ntasks-per-node=1 sh -c '$task'")
		wait_job "$id"
		for n in n2 n3; do
			lim=$(grep '^device' "$RUN/$id.$n.limits" 2>/dev/null) || fail "job $id: no limits read on $n"
			[ "$(wc -l <<<"$lim")" = 1 ] && [[ $lim == *" memory=$quota shares=$shares of=100"* ]] ||
				fail "job $id on $n: limits '$lim', expected one device with memory=$quota shares=$shares"
			expect "job $id ($shares shares) on $n" "$(grep -v '^work ' "$RUN/$id.$n.out" | tr '\n' '|')" \
				"init 0|total 0 $quota|alloc 2|alloc 0|"
		done
		wait_for 30 "both nodes' usage of job $id" sh -c \
			"sacct -n -P -X -j $id -o AdminComment | grep -q '\"n2\"' && sacct -n -P -X -j $id -o AdminComment | grep -q '\"n3\"'" ||
			fail "job $id: AdminComment '$(sacct -n -P -X -j "$id" -o AdminComment)' lacks a node"
		c=$(admin_comment "$id")
		expect "job $id: nodes in the AdminComment" "$(json_get "$c" "' '.join(sorted(j['nodes']))")" "n2 n3"
		for n in n2 n3; do
			expect "job $id: shares on $n" "$(json_get "$c" "j['nodes']['$n']['devices'][0]['shares']")" "$shares"
			expect "job $id: memory_peak on $n" "$(json_get "$c" "j['nodes']['$n']['devices'][0]['memory_peak']")" "$GIB"
			expect "job $id: device time used on $n" "$(json_get "$c" "j['nodes']['$n']['devices'][0]['busy_s'] > 0")" True
		done
		wait_clean "$id"
	done
}
