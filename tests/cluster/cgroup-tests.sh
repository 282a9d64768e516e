# shellcheck shell=bash
# What depends on how the nodes name a job's cgroup: cgroup/v1
# (slurm_<node>/uid_<u>/job_<id>), cgroup/v2 (system.slice/<node>_slurmstepd
# .scope/job_<id>) and Slurm 26.05's cgroup/v2 default, by SLUID
# (.../<node>_slurmstepd.scope/s<13 base32>). VGPU_LAB_CGROUP and
# VGPU_LAB_CGROUP_ID_PATHS choose (lib.sh); CI runs the CGROUP_TESTS
# (run-tests, "@cgroup") on each v2 layout.

# The job's cgroup has the layout the lab configured, and on 26.05 the
# prolog tied the job's SLUID to its id while it runs (jobs/job_identity.h),
# and the epilog removed the tie.
t_job_cgroup_layout() {
	local id sluid line want tie release
	release=$(slurm_release)
	id=$(submit -w n3 --gres=vgpu:nvidia:10 --wrap \
		"cat /proc/self/cgroup; echo \"SLUID \${SLURM_JOB_SLUID:-none}\"; echo \"TIE \$(readlink $VGPU_RUN/sluid/\${SLURM_JOB_SLUID:-none} || echo none)\"")
	wait_job "$id"
	sluid=$(sed -n 's/^SLUID //p' "$RUN/$id.out")
	tie=$(sed -n 's/^TIE //p' "$RUN/$id.out")
	if [ "$release" \< 26.05 ]; then
		expect "job $id: SLURM_JOB_SLUID before 26.05" "$sluid" none
		expect "job $id: tie" "$tie" none
	else
		[[ $sluid =~ ^s[0-9A-HJKMNP-TV-Z]{13}$ ]] || fail "job $id: SLURM_JOB_SLUID '$sluid' is not a SLUID"
		expect "job $id: the tie of $sluid, seen from the job" "$tie" "../job_$id"
	fi
	if [ "$LAB_CGROUP" = v1 ]; then
		want="^[0-9]+:[^:]*freezer[^:]*:.*/slurm_n3/uid_[0-9]+/job_$id/step_batch\$"
	elif [ "$release" \< 26.05 ] || [ "$LAB_CGROUP_ID_PATHS" = yes ]; then
		want="^0::.*/system.slice/n3_slurmstepd.scope/job_$id/step_batch(/|\$)"
	else
		want="^0::.*/system.slice/n3_slurmstepd.scope/$sluid/step_batch(/|\$)"
	fi
	grep -Eq "$want" "$RUN/$id.out" || fail "job $id: no cgroup line like '$want' in: $(grep : "$RUN/$id.out" | tr '\n' ' ')"
	# With the job's files, the tie (job_files).
	wait_clean "$id"
}

# extern_cgroups ID NODE: where slurmstepd puts a process that
# pam_slurm_adopt hands to job ID's extern step on NODE (PrologFlags=
# Contain; stepd_add_extern_pid: proctrack and task plugins): on cgroup v1
# the step_extern cgroup of every hierarchy Slurm made it in, on v2 its
# leaf user/task_special (made here when slurmstepd has not yet). Nothing
# when the step is not there.
extern_cgroups() {
	local id=$1 node=$2 sluid d
	sluid=$(env_of "$id" SLURM_JOB_SLUID)
	for d in /sys/fs/cgroup/*/slurm_"$node"/uid_*/job_"$id"/step_extern; do
		[ -d "$d" ] && echo "$d"
	done
	[ -n "$CGROUP2_MOUNT" ] || return 0
	for d in "$CGROUP2_MOUNT/system.slice/${node}_slurmstepd.scope/"{"job_$id",${sluid:-none}}/step_extern; do
		[ -d "$d" ] && echo "$d/user/task_special"
	done
	return 0
}

# write_adopt: $LAB/bin/adopt DIR... -- CMD...: moves itself into each
# cgroup DIR (made if missing), then runs CMD.
write_adopt() {
	cat >"$LAB/bin/adopt" <<-'EOF'
	#!/bin/bash
	set -e
	while [ "$1" != -- ]; do
		mkdir -p "$1"
		echo $$ >"$1/cgroup.procs"
		shift
	done
	shift
	exec "$@"
	EOF
	chmod 755 "$LAB/bin/adopt"
}

# An ssh session that pam_slurm_adopt moves into a vgpu job (PrologFlags=
# Contain), emulated as it happens, without sshd: a process in the node's
# mount namespace (its /etc/ld.so.preload, its run directory) moves into the
# cgroups of the job's extern step and runs the probe with no job
# environment (no TaskProlog, SPANK or LD_PRELOAD reach it). On n2
# (/etc/ld.so.preload) it is held to the job's 8 GiB; on n3 (LD_PRELOAD from
# the task prolog alone) it is not, the gap doc/enforcement.md states and
# vgpuctl check --local warns of.
t_adopted_session_held() {
	local id n dirs uuid out want
	write_adopt
	for n in n2 n3; do
		id=$(submit_dump -w $n --gres=vgpu:nvidia:10 -- sleep 120)
		wait_running "$id"
		# The extern step is made at allocation; wait for it.
		for _ in $(seq 100); do
			mapfile -t dirs < <(extern_cgroups "$id" $n)
			[ ${#dirs[@]} -eq 0 ] || break
			sleep 0.2
		done
		[ ${#dirs[@]} -gt 0 ] || fail "job $id on $n has no extern step cgroup (PrologFlags=Contain?)"
		uuid=$(env_of "$id" VGPU_UUIDS)
		out=$(nsenter -t "$(pidfile_pid "$LAB/run/slurmd-$n.pid")" -m -- "$LAB/bin/adopt" "${dirs[@]}" -- \
			env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$LAB/stubs" VGPU_STUB_CUDA_DEVICES="$uuid,85899345920" \
			"$LAB/bin/cuda_probe" init alloc $((9 * GIB)) alloc $((7 * GIB)) 2>>"$RUN/log" | tr '\n' '|')
		want="init 0|alloc 2|alloc 0|"
		[ $n = n2 ] || want="init 0|alloc 0|alloc 0|"
		expect "a session adopted into job $id on $n" "$out" "$want"
		scancel "$id"
		wait_ended "$id"
		wait_clean "$id"
	done
}

# A second step started with srun --overlap beside a vgpu job's batch step
# is held to the job's limits: with 7 of the job's 8 GiB held by the batch
# step, the overlapping step gets 1 GiB more, not 2.
t_overlap_step_held() {
	local id uuid out
	id=$(submit_dump -w n3 --gres=vgpu:nvidia:10 -- "$LAB/bin/cudajob" init alloc $((7 * GIB)) hold)
	wait_for 30 "job $id to hold 7 GiB" grep -q '^alloc 0' "$RUN/$id.out" ||
		fail "job $id did not hold 7 GiB: $(tr '\n' '|' <"$RUN/$id.out" 2>/dev/null)"
	uuid=$(env_of "$id" VGPU_UUIDS)
	out=$(srun --jobid="$id" --overlap -w n3 -n1 env VGPU_UUIDS="$uuid" "$LAB/bin/cudajob" init alloc $((2 * GIB)) alloc $GIB \
		2>>"$RUN/log" | tr '\n' '|')
	expect "an overlapping step of job $id" "$out" "init 0|alloc 2|alloc 0|"
	scancel "$id"
	wait_ended "$id"
	wait_clean "$id"
}
