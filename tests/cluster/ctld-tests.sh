# Tests of slurm-vgpu's slurmctld-side plugins (sourced by run-tests):
# select/cons_tres_pool is the cluster's SelectType and loads in every Slurm
# program; job_submit/vgpu refuses requests that can never be placed, with a
# message sbatch shows, and lets every other request through unchanged.
# shellcheck shell=bash

# refused SBATCH_ARGS...: sbatch must fail; prints its stderr.
refused() {
	local out
	if out=$(sbatch --parsable -o /dev/null "$@" --wrap true 2>&1); then
		scancel "$out" 2>/dev/null || true
		fail "sbatch $* was accepted (job $out), expected a refusal"
	fi
	printf '%s' "$out"
}

t_submit_refuses_150() {
	local msg
	msg=$(refused --gres=vgpu:ascend:150)
	[[ $msg == *"vgpu:ascend:150"* && $msg == *"100 or 200"* ]] ||
		fail "sbatch --gres=vgpu:ascend:150 said '$msg', not the vgpu message"
}

t_submit_refuses_unknown_type() {
	local msg
	msg=$(refused --gres=vgpu:tpu:10)
	[[ $msg == *'no node has vgpu type "tpu"'* && $msg == *"ascend, dcu, nvidia"* ]] ||
		fail "sbatch --gres=vgpu:tpu:10 said '$msg', not the vgpu message"
}

# Whole devices (a multiple of S) pass unchanged and get whole devices.
t_submit_accepts_whole_devices() {
	local id
	id=$(submit_dump --gres=vgpu:ascend:200)
	wait_job "$id"
	expect "job $id VGPU_SHARES_ON_NODE" "$(env_of "$id" VGPU_SHARES_ON_NODE)" 200
	# Two whole devices, reported per device.
	expect "job $id VGPU_SHARES" "$(env_of "$id" VGPU_SHARES)" 100,100
	check_vgpu_env "$id" ascend 200
	grep -q "TresPerNode=gres:vgpu:ascend:200" "$RUN/$id.show" ||
		fail "job $id: TresPerNode changed: $(grep -o 'TresPerNode=[^ ]*' "$RUN/$id.show")"
}

# select/cons_tres_pool wraps cons_tres: slurmctld runs with it, clients that
# unpack node info (sinfo, scontrol) and srun load it, and cons_tres behind
# it still answers as cons_tres.
t_select_wrapper_loads() {
	local out
	out=$(scontrol show config | sed -n 's/^SelectType *= *//p')
	expect "SelectType" "$out" select/cons_tres_pool
	! grep -q "cannot load select/cons_tres" "$LAB/log/slurmctld.log" ||
		fail "slurmctld could not load cons_tres: $(grep 'cons_tres' "$LAB/log/slurmctld.log" | tail -2)"
	out=$(sinfo -h -N -o '%N %T' | sort | tr '\n' ' ')
	[[ $out == "n1 "*"n2 "*"n3 "* ]] || fail "sinfo through the wrapper printed '$out'"
	out=$(srun -N1 --gres=vgpu:ascend:5 sh -c 'echo $VGPU_SHARES_ON_NODE' 2>&1)
	expect "srun --gres=vgpu:ascend:5 VGPU_SHARES_ON_NODE" "$out" 5
}
