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

# vgpuctl check, on the running cluster's files: every node ok and no
# warning; then on a copy with a gres.conf line written twice, no
# cgroup.conf and an oci.conf: exit status 1, the lines, and a warning each
# of unfenced devices and of containers.
t_vgpuctl_check_finds_mistakes() {
	local vgpuctl=$VGPU_BINDIR/vgpuctl copy=$RUN/check-conf out rc
	out=$("$vgpuctl" check --conf "$LAB/etc/slurm.conf" 2>&1) || fail "vgpuctl check on the lab: $out"
	[[ $out == *"n1: ok: 8 ascend device(s)"* && $out == *"3 node(s) with vgpu checked, 0 problem(s) found, 0 warning(s)"* ]] ||
		fail "vgpuctl check on the lab said: $out"
	rm -rf "$copy" && mkdir -p "$copy"
	cp "$LAB/etc/slurm.conf" "$LAB/etc/gres.conf" "$LAB/etc/vgpu.conf" "$copy/"
	head -1 "$LAB/etc/gres.conf" >>"$copy/gres.conf"
	echo 'RunTimeRun="runc --rootless=true --root=/run/user/%U/ run %n.%u.%j.%s.%t -b %b"' >"$copy/oci.conf"
	set +e
	out=$("$vgpuctl" check --conf "$copy/slurm.conf" 2>&1)
	rc=$?
	set -e
	expect "vgpuctl check exit status" "$rc" 1
	[[ $out == *"are named 2 times"*"gres.conf line 1"*"gres.conf line 5"* && $out == *"n2: ok"* ]] ||
		fail "vgpuctl check on a doubled line said: $out"
	[[ $out == *"warning: devices are not fenced: cgroup.conf does not set ConstrainDevices=yes"* &&
		$out == *"warning: oci.conf starts containers without vgpu-oci-runtime"* && $out == *"2 warning(s)"* ]] ||
		fail "vgpuctl check without cgroup.conf, with oci.conf said: $out"
}

# vgpuctl status on the running cluster: two jobs on n2 (30 dcu shares, 50
# nvidia shares) and a held 10-share ascend job. With --node n2 the JSON
# shows the dcu device with 30 allocated and the first job's id, user and
# shares on it, its model (the lab's inventory) and a memory quota of 30 %
# of the model's memory; the nvidia device the second job's 50; the types
# those totals, and ascend at least 10 shares pending. The table names the
# jobs as id:user:shares, and --svg draws one cell per n2 device (8).
t_vgpuctl_status_shows_pool() {
	local vgpuctl=$VGPU_BINDIR/vgpuctl a b c out
	a=$(submit_dump -p share --mem=50 -w n2 --gres=vgpu:dcu:30 -- sleep 120)
	b=$(submit_dump -p share --mem=50 -w n2 --gres=vgpu:nvidia:50 -- sleep 120)
	c=$(submit --hold -p share --mem=50 --gres=vgpu:ascend:10 --wrap true)
	# shellcheck disable=SC2064  # the ids now: the trap runs after the locals are gone
	trap "scancel $a $b $c 2>/dev/null || true" EXIT
	wait_running "$a"
	wait_running "$b"
	out=$("$vgpuctl" status --conf "$LAB/etc/slurm.conf" --node n2 --json --svg "$RUN/status.svg" 2>&1) ||
		fail "vgpuctl status --json: $out"
	printf '%s\n' "$out" >"$RUN/status.json"
	python3 - "$RUN/status.json" "$a" "$b" <<'PY' || fail "vgpuctl status --json: $(cat "$RUN/status.check")"
import json, sys
doc = json.load(open(sys.argv[1])); a, b = int(sys.argv[2]), int(sys.argv[3])
problems = []
def check(what, ok):
    if not ok: problems.append(what)
check("version 1", doc.get("version") == 1)
nodes = doc["nodes"]
check("one node, n2: %s" % [n["name"] for n in nodes], [n["name"] for n in nodes] == ["n2"])
devs = nodes[0]["devices"] if nodes else []
check("8 devices on n2: %d" % len(devs), len(devs) == 8)
used = [(d["type"], d["allocated"], [(j["job_id"], j["user"], j["shares"]) for j in d["jobs"]]) for d in devs if d["allocated"]]
check("dcu device with job %d's 30 shares: %s" % (a, used), ("dcu", 30, [(a, "root", 30)]) in used)
check("nvidia device with job %d's 50 shares: %s" % (b, used), ("nvidia", 50, [(b, "root", 50)]) in used)
dcu = [d for d in devs if d["type"] == "dcu" and d["allocated"] == 30]
check("dcu model hygon-k100 and a quota of 30 %% of its memory: %s" % dcu,
      dcu and dcu[0]["model"] == "hygon-k100" and dcu[0]["memory_bytes"] > 0
      and dcu[0]["memory_quota_bytes"] == dcu[0]["memory_bytes"] * 30 // 100)
types = {t["type"]: t for t in doc["types"]}
check("type totals on n2: %s" % types, types.get("dcu", {}).get("allocated") == 30
      and types.get("dcu", {}).get("shares") == 400 and types.get("nvidia", {}).get("allocated") == 50)
check("ascend pending >= 10: %s" % types.get("ascend"), types.get("ascend", {}).get("pending", 0) >= 10)
open(sys.argv[1].replace("status.json", "status.check"), "w").write("; ".join(problems))
sys.exit(1 if problems else 0)
PY
	[ "$(grep -o 'class="device"' "$RUN/status.svg" | wc -l)" = 8 ] || fail "status.svg has $(grep -o 'class="device"' "$RUN/status.svg" | wc -l) device cells, expected 8"
	out=$("$vgpuctl" status --conf "$LAB/etc/slurm.conf" 2>&1) || fail "vgpuctl status: $out"
	[[ $out == *"$a:root:30"* && $out == *"$b:root:50"* && $out == *"n1 "* ]] || fail "vgpuctl status table: $out"
	log "vgpuctl_status_shows_pool: $(grep -c . <<<"$out") table lines"
}

# vgpuctl discover on each lab node (its inventory, as vgpu.conf names it)
# writes the node's gres.conf lines and Gres= exactly as cluster-up wrote
# them by hand; through the vendor libraries (the stub NVML, DCMI and ROCm
# SMI, and a vgpu.conf without Inventory=) it finds what they report, warns
# of the device files this host lacks and of MIG mode that HardwareSlicing
# does not expect.
t_vgpuctl_discover_matches_lab() {
	local vgpuctl=$VGPU_BINDIR/vgpuctl n out want dir=$RUN/discover rc
	for n in "${NODES[@]}"; do
		out=$("$vgpuctl" discover --conf "$LAB/etc/slurm.conf" --node "$n" 2>"$RUN/discover.err") ||
			fail "vgpuctl discover on $n: $(cat "$RUN/discover.err")"
		want=$(grep "^NodeName=$n " "$LAB/etc/gres.conf")
		expect "gres.conf lines of $n" "$(grep '^NodeName=' <<<"$out")" "$want"
		want=$(sed -n "s/^NodeName=$n .*\(Gres=[^ ]*\).*/\1/p" "$LAB/etc/slurm.conf")
		expect "Gres= of $n" "$(grep '^Gres=' <<<"$out")" "$want"
	done
	rm -rf "$dir"
	mkdir -p "$dir"
	printf 'SharesPerDevice=100\nChipCatalogDir=%s\n' "$VGPU_CHIPS_DIR" >"$dir/vgpu.conf"
	set +e
	out=$(LD_LIBRARY_PATH=$LAB/stubs VGPU_STUB_NVML_DEVICES="NVIDIA A100-SXM4-80GB,0,85899345920,0000:1b:00.0;NVIDIA A100-SXM4-80GB,1,85899345920,0000:1c:00.0" \
		VGPU_STUB_NVML_MIG_STATE=$dir/mig "$vgpuctl" discover --conf "$dir/slurm.conf" --node gpu01 2>"$dir/err")
	rc=$?
	set -e
	expect "discover's exit status with warnings" "$rc" 1
	expect "gres.conf line from NVML" "$(grep '^NodeName=' <<<"$out")" "NodeName=gpu01 Name=vgpu Type=nvidia File=/dev/nvidia[0-1]"
	expect "Gres= from NVML" "$(grep '^Gres=' <<<"$out")" "Gres=vgpu:nvidia:200"
	grep -q "nvidia-a100-80g 0.*MIG mode is on" "$dir/err" || fail "no MIG warning: $(cat "$dir/err")"
	if [ ! -e /dev/nvidia1 ]; then
		grep -q "/dev/nvidia1 does not exist" "$dir/err" || fail "no warning of the missing /dev/nvidia1: $(cat "$dir/err")"
	fi
	log "vgpuctl_discover_matches_lab: $(grep -c . "$dir/err") warning(s) through the stub NVML"
}

# Resumes each node Slurm holds drained (which nodes Slurm drains after an
# INVAL differs between releases) and succeeds once all are usable.
resume_drained_nodes() {
	resume_drained >/dev/null
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

# node_vgpu_alloc NODE: the vgpu part of the node's AllocTRES, e.g.
# "gres/vgpu=30,gres/vgpu:dcu=30" ("" when nothing is allocated).
node_vgpu_alloc() {
	scontrol show node "$1" | grep -o 'AllocTRES=[^ ]*' | cut -d= -f2- | tr ',' '\n' |
		grep '^gres/vgpu' | paste -sd, -
}

# Untyped jobs (TypePreference puts them on n2's dcu devices) across a
# slurmctld restart, a re-registration of n2 and a reconfigure: Slurm's
# per-type counts are right again once n2 registers (Slurm alone sets them
# to one job's count, type_counts.h), nothing underflows, everything is
# given back when the jobs end, and a job may then take every dcu share.
t_untyped_jobs_survive_ctld_restart() {
	local a b c log=$LAB/log/slurmctld.log lines
	a=$(submit_dump -p share --mem=100 -w n2 --gres=vgpu:30 -- sleep 120)
	# shellcheck disable=SC2064
	trap "scancel $a \${b:-} \${c:-} 2>/dev/null || true" EXIT
	wait_running "$a"
	b=$(submit_dump -p share --mem=100 -w n2 --gres=vgpu:20 -- sleep 120)
	wait_running "$b"
	expect "n2 AllocTRES before the restart" "$(node_vgpu_alloc n2)" "gres/vgpu=50,gres/vgpu:dcu=50"
	lines=$(wc -l <"$log")
	restart_slurmctld
	# Right after the restart slurmctld does not know n2's devices; they are
	# known again once n2 answers its registration request.
	wait_for 30 "n2's counts after the slurmctld restart" sh -c \
		"scontrol show node n2 | grep -q 'AllocTRES=.*gres/vgpu=50,gres/vgpu:dcu=50'" ||
		fail "n2 AllocTRES after the slurmctld restart: $(node_vgpu_alloc n2), expected gres/vgpu=50,gres/vgpu:dcu=50"
	restart_slurmd n2
	wait_for 30 "all nodes usable" all_nodes_usable || fail "nodes not usable: $(node_states | tr '\n' ' ')"
	expect "n2 AllocTRES after n2 registered again" "$(node_vgpu_alloc n2)" "gres/vgpu=50,gres/vgpu:dcu=50"
	scontrol reconfigure
	wait_for 30 "n2's counts after a reconfigure" sh -c \
		"scontrol show node n2 | grep -q 'AllocTRES=.*gres/vgpu=50,gres/vgpu:dcu=50'" ||
		fail "n2 AllocTRES after scontrol reconfigure: $(node_vgpu_alloc n2), expected gres/vgpu=50,gres/vgpu:dcu=50"
	scancel "$a" "$b"
	wait_for 60 "the jobs to end" sh -c "[ -z \"\$(squeue -h -j $a,$b 2>/dev/null)\" ]" ||
		fail "jobs $a $b still listed: $(squeue -h -j "$a,$b" -o '%i %T' | tr '\n' ' ')"
	wait_for 30 "n2's vgpu to be free" sh -c "! scontrol show node n2 | grep -q 'AllocTRES=.*gres/vgpu'" ||
		fail "after the jobs ended, n2 still has $(node_vgpu_alloc n2) allocated"
	c=$(submit_dump -p share --mem=100 -w n2 --gres=vgpu:dcu:400 -- true)
	wait_job "$c"
	local underflows
	underflows=$(tail -n +"$((lines + 1))" "$log" | grep -c 'underflow' || true)
	expect "'underflow' lines in slurmctld.log since the restart" "$underflows" 0
}

# Jobs that share cores (partition share, OverSubscribe=FORCE) go where
# the fewest jobs hold the cores, as under cons_tres, among the nodes of
# the type the policy chose: 8 one-CPU nvidia:10 jobs released at once
# (one scheduling pass) on n2 and n3 (2 CPUs each) run 4 and 4. Ranking by
# devices alone put them on the best-ranked node once every core was held
# (6 and 2 here; 35 of 300 on one node of 128 in bench/scheduling, whose
# slurmd then timed out batch launches).
t_shared_core_jobs_spread() {
	local i ids=() per_node
	wait_for 30 "the queue to empty" sh -c "[ -z \"\$(squeue -h)\" ]" || fail "jobs of other tests left: $(squeue -h | head -3)"
	# shellcheck disable=SC2064
	trap "scancel -u root 2>/dev/null || true" EXIT
	for ((i = 0; i < 8; i++)); do ids+=("$(submit -H -p share -n1 --mem=100 --gres=vgpu:nvidia:10 --wrap 'sleep 60')"); done
	release_held "${ids[@]}"
	wait_for 60 "8 jobs running" sh -c "[ \$(squeue -h -t R -j $(IFS=,; echo "${ids[*]}") | wc -l) -eq 8 ]" ||
		fail "not all 8 jobs run: $(squeue -h -j "$(IFS=,; echo "${ids[*]}")" -o '%i %T %r' | tr '\n' ' ')"
	per_node=$(squeue -h -t R -j "$(IFS=,; echo "${ids[*]}")" -o %N | sort | uniq -c | awk '{ printf "%s%s:%s", (NR > 1 ? " " : ""), $2, $1 }')
	log "8 nvidia:10 jobs sharing cores: $per_node"
	expect "jobs per node" "$per_node" "n2:4 n3:4"
	scancel "${ids[@]}"
}
