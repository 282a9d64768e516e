# Tests of the pool's robustness to admin mistakes (sourced by run-tests):
# one broken file must not take the cluster out, and what is wrong is
# reported where an admin looks.
# shellcheck shell=bash

# A broken chip catalog file, for a model no node has, is reported with its
# line and column and skipped: jobs keep running, and after `scontrol
# reconfigure` every node still takes vgpu jobs (before, every prolog failed
# and every node went INVAL).
t_broken_catalog_file_is_skipped() {
	local f=$CATALOG_DIR/zz-broken.json id
	# shellcheck disable=SC2064
	trap "rm -f '$f'; scontrol reconfigure || true" EXIT
	printf '{\n  "id": "zz-broken",\n  "names": [' >"$f"
	id=$(submit_dump --gres=vgpu:ascend:10)
	wait_job "$id"
	scontrol reconfigure
	sleep 2
	wait_for 30 "all nodes usable" all_nodes_usable || fail "after reconfigure: $(node_states | tr '\n' ' ')"
	id=$(submit_dump --gres=vgpu:nvidia:10)
	wait_job "$id"
	grep -q "zz-broken.json: invalid JSON.*Line 3, Column.*file skipped" "$LAB/log/slurmd-n1.log" ||
		fail "slurmd-n1.log does not name the broken file: $(grep -i 'catalog' "$LAB/log/slurmd-n1.log" | tail -2)"
}

# vgpuctl check, on the running cluster's files: every node ok; then on a
# copy with a gres.conf line written twice: exit status 1 and the lines.
t_vgpuctl_check_finds_mistakes() {
	local vgpuctl=$VGPU_PREFIX/bin/vgpuctl copy=$RUN/check-conf out rc
	out=$("$vgpuctl" check --conf "$LAB/etc/slurm.conf" 2>&1) || fail "vgpuctl check on the lab: $out"
	[[ $out == *"n1: ok: 8 ascend device(s)"* && $out == *"3 node(s) with vgpu checked, 0 problem(s)"* ]] ||
		fail "vgpuctl check on the lab said: $out"
	rm -rf "$copy" && mkdir -p "$copy"
	cp "$LAB/etc/slurm.conf" "$LAB/etc/gres.conf" "$LAB/etc/vgpu.conf" "$copy/"
	head -1 "$LAB/etc/gres.conf" >>"$copy/gres.conf"
	set +e
	out=$("$vgpuctl" check --conf "$copy/slurm.conf" 2>&1)
	rc=$?
	set -e
	expect "vgpuctl check exit status" "$rc" 1
	[[ $out == *"are named 2 times"*"gres.conf line 1"*"gres.conf line 5"* && $out == *"n2: ok"* ]] ||
		fail "vgpuctl check on a doubled line said: $out"
}

# Resumes each node Slurm holds drained (resuming one that is not drained is
# an error: "Invalid node state specified"; which nodes Slurm drains after
# an INVAL differs between releases) and succeeds once all are usable.
resume_drained_nodes() {
	local n state
	while read -r n state; do
		[[ $state == drain* || $state == drng* ]] || continue
		scontrol update nodename="$n" state=resume || true
	done < <(sinfo -h -N -o '%N %t')
	all_nodes_usable
}

# A vgpu.conf mistake, then its fix, each followed by `scontrol reconfigure`:
# the nodes leave the pool while it is broken (INVAL: they register no
# vgpu) and, once fixed, register again; Slurm keeps them drained with its
# own reason ("gres/vgpu count reported lower than configured") until an
# admin resumes them. No slurmctld restart is needed. (Slurm's rule, for any
# GRES: a valid registration clears INVAL, not the DRAIN it set; 23.11.4
# node_mgr.c:3366-3384. See doc/admin-guide.md.)
t_fixed_vgpu_conf_brings_nodes_back() {
	local conf=$LAB/etc/vgpu.conf id
	cp "$conf" "$RUN/vgpu.conf.saved"
	# shellcheck disable=SC2064
	trap "cp '$RUN/vgpu.conf.saved' '$conf'; scontrol reconfigure || true; resume_drained_nodes || true" EXIT
	sed -i 's/^SharesPerDevice=.*/SharesPerDevice=lots/' "$conf"
	scontrol reconfigure
	wait_for 30 "nodes INVAL" sh -c "sinfo -h -N -o '%N %t' | grep -q '^n1 inval'" ||
		fail "with SharesPerDevice=lots: $(node_states | tr '\n' ' ')"
	cp "$RUN/vgpu.conf.saved" "$conf"
	scontrol reconfigure
	wait_for 60 "nodes registered again" sh -c "! sinfo -h -N -o '%t' | grep -q inval" ||
		fail "after the fix: $(node_states | tr '\n' ' ')"
	log "after the fix: $(node_states | tr '\n' ' ')"
	wait_for 30 "all nodes usable" resume_drained_nodes ||
		fail "after the fix, a reconfigure and resume: $(node_states | tr '\n' ' '); $(sinfo -h -R | head -3 | tr '\n' ' ')"
	id=$(submit_dump --gres=vgpu:ascend:10)
	wait_job "$id"
}
