# Submission tests of the cluster suite (sourced by run-tests): job_submit/vgpu
# refuses requests that can never be placed, with a message sbatch shows, and
# lets every other request through unchanged.
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

# Whole devices (a multiple of S) and untyped requests pass unchanged.
t_submit_accepts_whole_devices() {
	local id
	id=$(submit_dump --gres=vgpu:ascend:200)
	wait_job "$id"
	expect "job $id VGPU_SHARES_ON_NODE" "$(env_of "$id" VGPU_SHARES_ON_NODE)" 200
	grep -q "TresPerNode=gres:vgpu:ascend:200" "$RUN/$id.show" ||
		fail "job $id: TresPerNode changed: $(grep -o 'TresPerNode=[^ ]*' "$RUN/$id.show")"
}
