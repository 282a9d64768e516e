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
