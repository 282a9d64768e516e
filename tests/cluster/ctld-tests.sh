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

# Requests that cannot mean what they say are refused with what to ask
# instead, not with Slurm's generic answers (the lab's largest node has 8
# ascend devices; n2 has nvidia and dcu).
t_submit_refuses_bad_requests() {
	local msg ask
	for ask in vgpu:-5 vgpu:1.5 vgpu:ascend:-5; do
		msg=$(refused --gres=$ask)
		# Since 26.05 sbatch itself refuses a negative typed count.
		[[ ($msg == *"is not a count"* || $msg == *"Invalid Trackable RESource"*) &&
			$msg != *"no node has vgpu type"* ]] || fail "sbatch --gres=$ask said '$msg'"
	done
	msg=$(refused --gres=vgpu:ascend:99999)
	[[ $msg == *"the most is 800 shares (8 devices of 100)"* && $msg != *99900* ]] ||
		fail "sbatch --gres=vgpu:ascend:99999 said '$msg'"
	msg=$(refused --gres=vgpu:ascend:10,vgpu:nvidia:10)
	[[ $msg == *"heterogeneous job"* ]] || fail "sbatch --gres=vgpu:ascend:10,vgpu:nvidia:10 said '$msg'"
	msg=$(refused --gres=vgpu:10,vgpu:20)
	[[ $msg == *"twice"* && $msg == *"vgpu:30"* ]] || fail "sbatch --gres=vgpu:10,vgpu:20 said '$msg'"
}

# job_submit/vgpu reads vgpu.conf again when it changes: a new
# SharesPerDevice counts from the next submission, whether or not Slurm
# re-inits the plugin on `scontrol reconfigure` (here slurmctld is not even
# told; the nodes, which would need a reconfigure, never see the change).
t_submit_follows_shares_per_device() {
	local conf=$LAB/etc/vgpu.conf msg id
	cp "$conf" "$RUN/vgpu.conf.saved"
	# shellcheck disable=SC2064
	trap "cp '$RUN/vgpu.conf.saved' '$conf'" EXIT
	sed -i 's/^SharesPerDevice=.*/SharesPerDevice=50/' "$conf"
	msg=$(refused --gres=vgpu:ascend:75)
	[[ $msg == *"more than one device (50 shares)"* ]] || fail "at SharesPerDevice=50, sbatch --gres=vgpu:ascend:75 said '$msg'"
	cp "$RUN/vgpu.conf.saved" "$conf"
	id=$(submit_dump --gres=vgpu:ascend:75)
	wait_job "$id"
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
	# gres:vgpu until 23.11, gres/vgpu since 24.11.
	grep -Eq "TresPerNode=gres[:/]vgpu:ascend:200" "$RUN/$id.show" ||
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

# idx_devices ID: "device:count" per device of the job's IDX bits, sorted.
idx_devices() {
	expand_idx "$(job_idx "$1")" | awk -v s="$S" '{ c[int($1 / s)]++ } END { for (d in c) print d ":" c[d] }' | sort -n
}

# Ten 30-share jobs on the 8-device n1, all running at once (partition
# "share" lets them share its 2 cores): each sits on exactly one device,
# and no device holds more than 100 shares.
t_pack_30_share_jobs() {
	local ids=() id d n
	declare -A used=()
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		ids+=("$(submit_dump -p share --mem=100 -w n1 --gres=vgpu:ascend:30 -- sleep 60)")
	done
	# shellcheck disable=SC2064
	trap "scancel ${ids[*]} 2>/dev/null || true" EXIT
	for id in "${ids[@]}"; do wait_running "$id"; done
	for id in "${ids[@]}"; do
		wait_for 15 "job $id to record itself" test -s "$RUN/$id.show" || fail "job $id: no $RUN/$id.show"
		mapfile -t d < <(idx_devices "$id")
		[ "${#d[@]}" = 1 ] || fail "job $id (IDX:$(job_idx "$id")) spans devices: ${d[*]}"
		used[${d[0]%%:*}]=$(( ${used[${d[0]%%:*}]:-0} + ${d[0]##*:} ))
		expect "job $id VGPU_DEVICES" "$(env_of "$id" VGPU_DEVICES)" "${d[0]%%:*}"
	done
	for n in "${!used[@]}"; do
		[ "${used[$n]}" -le "$S" ] || fail "device $n of n1 holds ${used[$n]} shares"
	done
	log "pack_30_share_jobs: shares per n1 device: $(for n in "${!used[@]}"; do printf '%s=%s ' "$n" "${used[$n]}"; done)"
	scancel "${ids[@]}"
}

# The issue's scenario on n2's four dcu devices (4-7; no core affinity, so
# the tightest fit alone decides): device 4 full, 5-7 with 60 shares free
# each (180 free bits).  A 100-share job, which cons_tres alone would start
# on 100 of those bits across two devices, stays pending; a 60-share job
# submitted after it (lower priority) starts at once on one of them: the
# will-run answer for the 100-share job waits for a device to free, so
# backfill reserves nothing for it now.
t_fragmented_node() {
	local ids=() i f t1 t2 big small
	# shellcheck disable=SC2064
	trap 'scancel ${ids[*]} ${big:-} ${small:-} 2>/dev/null || true' EXIT
	dcu_job() { submit_dump -p share --mem=100 -w n2 --gres="vgpu:dcu:$1" -- sleep 120; }
	ids+=("$(dcu_job 100)"); wait_running "${ids[-1]}"
	# Best-fit would put three 40-share jobs on one device: 60-share fillers
	# make each device the tightest only until its 40 is there.
	ids+=("$(dcu_job 40)"); wait_running "${ids[-1]}"
	t1=$(dcu_job 60); ids+=("$t1"); wait_running "$t1"
	ids+=("$(dcu_job 40)"); wait_running "${ids[-1]}"
	t2=$(dcu_job 60); ids+=("$t2"); wait_running "$t2"
	ids+=("$(dcu_job 40)"); wait_running "${ids[-1]}"
	scancel "$t1" "$t2"
	wait_for 15 "the fillers to end" sh -c "[ -z \"\$(squeue -h -j $t1,$t2 2>/dev/null)\" ]" || true
	f=$(for i in "${ids[@]}"; do [ "$i" = "$t1" ] || [ "$i" = "$t2" ] || idx_devices "$i"; done | sort -n | tr '\n' ' ')
	expect "n2 dcu devices held" "$f" "4:100 5:40 6:40 7:40 "
	big=$(submit_dump -p share --mem=100 -w n2 --gres=vgpu:dcu:100 -- sleep 1)
	sleep 3
	small=$(submit_dump -p share --mem=100 -w n2 --gres=vgpu:dcu:60 -- sleep 60)
	wait_running "$small"
	[[ $(idx_devices "$small") =~ ^[567]:60$ ]] || fail "60-share job $small on $(idx_devices "$small" | tr '\n' ' '), not 60 shares of device 5, 6 or 7"
	# Several scheduling passes (sched_interval=2, bf_interval=2 here).
	sleep 4
	expect "100-share job $big state (60+60+60 free)" "$(job_state "$big")" PENDING
	scancel "${ids[@]}" "$big" "$small"
	wait_for 30 "n2's jobs to end" sh -c "[ -z \"\$(squeue -h -w n2 2>/dev/null)\" ]" || true
}

# The only node of a type drained, as for maintenance: jobs of that type
# (in "debug" and in the core-sharing "share") wait, slurmctld schedules
# the others, and once the node is resumed they run. (slurmctld died here
# once: pool found no node and answered node index 4294967295.)
t_type_on_drained_node_waits() {
	local a b other
	# shellcheck disable=SC2064
	trap 'scontrol update nodename=n1 state=resume 2>/dev/null || true; scancel ${a:-} ${b:-} 2>/dev/null || true' EXIT
	scontrol update nodename=n1 state=drain reason="vgpu test: maintenance"
	a=$(submit --mem=50 --gres=vgpu:ascend:10 --wrap true)
	b=$(submit -p share --mem=50 --gres=vgpu:ascend:20 --wrap true)
	other=$(submit --mem=50 --gres=vgpu:nvidia:10 --wrap true)
	wait_job "$other"
	sleep 3  # a scheduling pass or two more (sched_interval=2)
	scontrol ping 2>/dev/null | grep -q UP || fail "slurmctld does not answer with n1 drained"
	expect "ascend jobs $a $b while n1 is drained" "$(job_state "$a") $(job_state "$b")" "PENDING PENDING"
	scontrol update nodename=n1 state=resume
	wait_job "$a"
	wait_job "$b"
}

# job_idx_of ID: the job's IDX bits now, from slurmctld.
job_idx_of() { scontrol -d show job "$1" | idx_of_show; }

# restart_slurmctld / restart_slurmd NODE: stop the daemon and start it
# again with the lab's state (cluster-up would cancel leftover jobs). slurmd
# logs its "CPUs=..." line once slurmctld has taken its registration, which
# is when slurmctld rebuilds the node's device topology (Slurm 22.05).
restart_slurmctld() {
	stop_daemon slurmctld "$LAB/run/slurmctld.pid" 30
	"$SLURM_SBIN/slurmctld"
	wait_for 30 "slurmctld" sh -c 'scontrol ping 2>/dev/null | grep -q UP' || fail "slurmctld did not come back"
}
restart_slurmd() {
	local log=$LAB/log/slurmd-$1.log before
	before=$(grep -c 'CPUs=' "$log" || true)
	# This node's slurmd only (stop_daemon would stop every slurmd of the lab).
	stop_pid "$(pidfile_pid "$LAB/run/slurmd-$1.pid")" slurmd 30 || fail "slurmd $1 does not stop"
	start_slurmd_node "$1"
	wait_for 30 "slurmd $1 to register" sh -c "[ \$(grep -c 'CPUs=' '$log') -gt $before ]" ||
		fail "slurmd $1 did not register again"
}

# The lab's own check that slurmctld lives (run-tests' dead_daemons, after
# every test) reads its pid file. slurmctld 23.11+ hands over to a new
# process on `scontrol reconfigure` and rewrites the pid file in place
# without truncating it, so a new pid shorter than the old leaves the old
# one's tail behind ("704\n2\n" after 31292). Read as one number that named
# no process, and the check reported a live slurmctld dead.
# Here slurmctld gets a 5-digit pid, then a reconfigure a 3-digit one.
t_lab_names_slurmctld_after_reconfigure() {
	local before after shaped=yes
	# Where /proc/sys is read-only (a container) the pids are what they
	# are: the check still runs, and the log says so.
	echo 31000 2>/dev/null >/proc/sys/kernel/ns_last_pid || shaped=no
	restart_slurmctld
	before=$(pidfile_pid "$LAB/run/slurmctld.pid")
	echo 700 2>/dev/null >/proc/sys/kernel/ns_last_pid || shaped=no
	scontrol reconfigure
	wait_for 30 "slurmctld after reconfigure" sh -c 'scontrol ping 2>/dev/null | grep -q UP' || fail "slurmctld does not answer after reconfigure"
	sleep 1
	after=$(pidfile_pid "$LAB/run/slurmctld.pid")
	daemon_running slurmctld "$LAB/run/slurmctld.pid" ||
		fail "pid file names no live slurmctld after reconfigure: pid $before before, '$after' read now, file $(od -An -c "$LAB/run/slurmctld.pid" | tr -s ' '), lab slurmctld processes: $(lab_pids slurmctld | tr '\n' ' ')"
	log "lab_names_slurmctld_after_reconfigure: slurmctld pid $before, after reconfigure $after (pid counter set: $shaped)"
}

# Restarts keep the devices: with two jobs running on n3 (40 shares on device
# 0, 70 on device 1), slurmctld and then n3's slurmd are stopped and started
# again (all three slurmd, so that every node re-registers). The running
# jobs keep their bits, and new jobs land on free shares of one device: a
# 10-share job submitted while slurmctld does not know n3's devices yet (it
# waits for n3 to register, then takes device 1, the tighter), a 60-share
# job on device 0, then a 20-share job on device 1.
t_restarts_keep_devices() {
	local a b c d e ia ib all
	a=$(submit_dump -p share --mem=100 -w n3 --gres=vgpu:nvidia:40 -- sleep 120)
	# shellcheck disable=SC2064
	trap "scancel $a \${b:-} \${c:-} \${d:-} \${e:-} 2>/dev/null || true" EXIT
	wait_running "$a"
	b=$(submit_dump -p share --mem=100 -w n3 --gres=vgpu:nvidia:70 -- sleep 120)
	wait_running "$b"
	ia=$(job_idx_of "$a")
	ib=$(job_idx_of "$b")
	restart_slurmctld
	expect "job $a state after slurmctld restart" "$(job_state "$a")" RUNNING
	expect "job $a bits after slurmctld restart" "$(job_idx_of "$a")" "$ia"
	expect "job $b bits after slurmctld restart" "$(job_idx_of "$b")" "$ib"
	e=$(submit_dump -p share --mem=100 -w n3 --gres=vgpu:nvidia:10 -- sleep 120)
	# Every slurmd re-registers (Slurm would wait for its next ping), n3 last.
	restart_slurmd n1
	restart_slurmd n2
	restart_slurmd n3
	wait_for 30 "all nodes usable" all_nodes_usable || fail "nodes not usable: $(node_states | tr '\n' ' ')"
	expect "job $b state after slurmd restart" "$(job_state "$b")" RUNNING
	expect "job $b bits after slurmd restart" "$(job_idx_of "$b")" "$ib"
	wait_running "$e"
	expect "10-share job $e devices (submitted before n3 registered)" "$(idx_devices "$e" | tr '\n' ' ')" "1:10 "
	c=$(submit_dump -p share --mem=100 -w n3 --gres=vgpu:nvidia:60 -- sleep 120)
	wait_running "$c"
	expect "60-share job $c devices after the restarts" "$(idx_devices "$c" | tr '\n' ' ')" "0:60 "
	d=$(submit_dump -p share --mem=100 -w n3 --gres=vgpu:nvidia:20 -- sleep 5)
	wait_running "$d"
	expect "20-share job $d devices after the restarts" "$(idx_devices "$d" | tr '\n' ' ')" "1:20 "
	# No share is held twice.
	all=$(for id in "$a" "$b" "$c" "$d" "$e"; do expand_idx "$(job_idx_of "$id")"; done | sort -n)
	[ -z "$(uniq -d <<<"$all")" ] || fail "shares held twice: $(uniq -d <<<"$all" | head -3 | tr '\n' ' ')"
	scancel "$a" "$b" "$c" "$d" "$e"
	# Leave the cluster quiet for the tests after this one.
	wait_for 60 "the jobs to end" sh -c "[ -z \"\$(squeue -h -j $a,$b,$c,$d,$e 2>/dev/null)\" ]" || true
	wait_for 30 "all nodes usable" all_nodes_usable || true
}

# slurm_series: the lab Slurm's release as a number, 2205 for 22.05.x.
slurm_series() {
	"$SLURM_SBIN/slurmd" -V | awk '{ split($2, v, "."); printf "%d%02d\n", v[1], v[2] }'
}

# Cores= that covers part of a socket: n3 (one socket of two cores) gets
# devices local to CPU 0 and CPU 1, as on a node whose sockets hold two NUMA
# nodes each. Slurm 24.11 on drains such a node when it registers (GRES
# Cores= must match socket boundaries), so gres/vgpu widens each device's
# cores to its socket there and logs it once, naming the fix that keeps NUMA
# binding; 22.05 and 23.11 keep the NUMA node's cores. Either way n3 stays
# usable and runs a vgpu job. The inventory is put back afterwards.
# (Without the widening, 24.11.5 sets n3 INVAL: "gres/vgpu GRES core
# specification 0 for node n3 doesn't match socket boundaries".)
t_socket_aligned_cores() {
	local inv saved lines=() idx=0 node model file expected got id log=$LAB/log/slurmd-n3.log from
	inv=$(sed -n 's/^Inventory=//p' "$LAB/etc/vgpu.conf")
	inv=${inv//%n/n3}
	saved=$RUN/n3-inventory.saved
	cp "$inv" "$saved"
	# shellcheck disable=SC2064
	trap "cp '$saved' '$inv'; restart_slurmctld; restart_slurmd n3; wait_for 30 'all nodes usable' all_nodes_usable || true" EXIT
	while read -r node model _ file _; do
		[ "$node" = n3 ] || continue
		lines+=("$model $file $idx $idx")
		idx=$((idx + 1))
	done < <(device_table)
	write_inventory "$RUN/inventory-n3.json" "${lines[@]}"
	cp "$RUN/inventory-n3.json" "$inv"
	from=$(($(wc -l <"$log") + 1))
	# slurmctld checks a node's GRES Cores= only when the node's GRES
	# configuration is new to it (gres.c, _node_config_validate returns early
	# on an unchanged re-registration): restart it first.
	restart_slurmctld
	restart_slurmd n3
	wait_for 30 "n3 usable" all_nodes_usable ||
		fail "n3 not usable with NUMA-local devices: $(node_states | tr '\n' ' '); $(scontrol show node n3 | grep -o 'Reason=.*')"
	if [ "$(slurm_series)" -ge 2411 ]; then expected="Cores=0-1 Cores=0-1 "; else expected="Cores=0 Cores=1 "; fi
	got=$(slurmd -f "$LAB/etc/slurm.conf" -G -N n3 2>&1 | grep -o 'Name=vgpu.*File=[^ ]*nvidia[01] .*Cores=[0-9,-]*' | grep -o 'Cores=[0-9,-]*' | tr '\n' ' ')
	expect "n3 devices' Cores= on Slurm $(slurm_series) (slurmd -G)" "$got" "$expected"
	if [ "$(slurm_series)" -ge 2411 ]; then
		tail -n "+$from" "$log" | grep -q 'gres/vgpu: Slurm .* widened to whole sockets .*numa_node_as_socket' ||
			fail "slurmd n3 did not log the widening: $(tail -n "+$from" "$log" | grep 'gres/vgpu' | tail -2 | tr '\n' ' ')"
	fi
	id=$(submit_dump -w n3 --gres=vgpu:nvidia:30)
	wait_job "$id"
	check_vgpu_env "$id" nvidia 30
}
