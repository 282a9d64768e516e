# The lifecycle soak (sourced by run-tests): random vgpu jobs of every type
# and size, random scancel, and every few seconds one disruption (a slurmd
# restart, a slurmctld restart, a slurmctld kill -9 and start, a
# reconfigure), while a checker samples the pool's invariants each second
# (soak_check.py). VGPU_SOAK_SECONDS sets how long jobs are submitted
# (default 60; `make soak` runs 900), VGPU_SOAK_SEED the random seed (printed,
# so that a run can be repeated). It prints what it did and what held.
# shellcheck shell=bash

SOAK_TYPES=(ascend nvidia dcu "")
SOAK_SHARES=(5 10 20 30 50 70 100 200)
SOAK_EVENTS=(slurmd_restart slurmctld_restart slurmctld_kill9 reconfigure)

# soak_disrupt EVENT: does it; prints what it did.
soak_disrupt() {
	local n
	case $1 in
	slurmd_restart)
		n=${NODES[RANDOM % ${#NODES[@]}]}
		restart_slurmd "$n"
		echo "restarted slurmd $n"
		;;
	slurmctld_restart)
		restart_slurmctld
		echo "restarted slurmctld"
		;;
	slurmctld_kill9)
		crash_slurmctld || fail "slurmctld did not come back after kill -9"
		;;
	reconfigure)
		scontrol reconfigure
		echo "scontrol reconfigure"
		;;
	esac
}

# soak_settle: one round of an admin's care (drained nodes resumed into
# the soak log and counted, held jobs released); true once no job is left
# in the queue.
soak_settle() {
	local out id
	out=$(resume_drained)
	if [ -n "$out" ]; then
		echo "[settling] $out" >>"$RUN/soak.log"
		echo "$(($(cat "$RUN/soak.drains" 2>/dev/null || echo 0) + $(grep -c . <<<"$out")))" >"$RUN/soak.drains"
	fi
	for id in $(squeue -h -t PENDING -o '%i %r' 2>/dev/null | awk '/held/ { print $1 }'); do
		scontrol release "$id" 2>/dev/null && echo "[settling] released held job $id" >>"$RUN/soak.log"
	done
	[ -z "$(squeue -h -t PENDING,RUNNING,COMPLETING,CONFIGURING,SUSPENDED 2>/dev/null)" ]
}

t_lifecycle_soak() {
	local seconds=${VGPU_SOAK_SECONDS:-60} seed=${VGPU_SOAK_SEED:-$((RANDOM * 32768 + RANDOM))}
	local start now next_event ctld_since ids=() id type shares t out violations=0 samples=0
	local submitted=0 refused=0 cancelled=0 jobs_file=$RUN/soak.jobs nodes_file=$RUN/soak.nodes
	local -A events=()
	RANDOM=$seed
	log "lifecycle_soak: seed $seed, ${seconds}s of jobs"
	: >"$RUN/soak.log"
	echo 0 >"$RUN/soak.drains"
	# shellcheck disable=SC2064
	trap "scancel --state=PENDING,RUNNING -u root 2>/dev/null || true; resume_drained_nodes >/dev/null 2>&1 || true" EXIT
	start=$(now)
	next_event=$(awk -v s="$start" 'BEGIN { printf "%.3f", s + 8 }')
	ctld_since=-100
	while awk -v s="$start" -v n="$(now)" -v d="$seconds" 'BEGIN { exit !(n - s < d) }'; do
		# About one job in two seconds, of 1-6 s: the lab's six CPUs keep up.
		local k burst=$((RANDOM % 5 < 3 ? 1 : 0))
		for ((k = 0; k < burst; k++)); do
			type=${SOAK_TYPES[RANDOM % ${#SOAK_TYPES[@]}]}
			shares=${SOAK_SHARES[RANDOM % ${#SOAK_SHARES[@]}]}
			t=$((RANDOM % 6 + 1))
			if id=$(sbatch --parsable -o /dev/null -e /dev/null --mem=50 --gres="vgpu:${type:+$type:}$shares" --wrap "sleep $t" 2>>"$RUN/soak.log"); then
				ids+=("$id")
				submitted=$((submitted + 1))
			else
				refused=$((refused + 1))
			fi
		done
		if [ $((RANDOM % 10)) = 0 ] && [ ${#ids[@]} -gt 0 ]; then
			scancel "${ids[RANDOM % ${#ids[@]}]}" 2>/dev/null && cancelled=$((cancelled + 1))
		fi
		now=$(now)
		if awk -v n="$now" -v e="$next_event" 'BEGIN { exit !(n >= e) }'; then
			local ev=${SOAK_EVENTS[RANDOM % ${#SOAK_EVENTS[@]}]}
			echo "[$(elapsed "$start")] $(soak_disrupt "$ev")" >>"$RUN/soak.log"
			events[$ev]=$((${events[$ev]:-0} + 1))
			[[ $ev == slurmctld_* ]] && ctld_since=$(now)
			next_event=$(awk -v n="$(now)" -v r=$((RANDOM % 8)) 'BEGIN { printf "%.3f", n + 8 + r }')
		fi
		soak_settle >/dev/null || true
		if scontrol -d -o show job >"$jobs_file" 2>/dev/null && scontrol -o show node >"$nodes_file" 2>/dev/null; then
			local skip=
			# Right after a slurmctld start the type counts wait for the
			# nodes to register (type_counts.h): not checked for 15 s.
			awk -v n="$(now)" -v c="$ctld_since" 'BEGIN { exit !(n - c < 15) }' && skip=n1,n2,n3
			out=$(python3 "$here/soak_check.py" "$jobs_file" "$nodes_file" "$skip")
			samples=$((samples + 1))
			if [ -n "$out" ]; then
				violations=$((violations + $(grep -c . <<<"$out")))
				echo "[$(elapsed "$start")] VIOLATION $out" >>"$RUN/soak.log"
				cp "$jobs_file" "$RUN/soak.violation.jobs"
			fi
		fi
		sleep 1
	done
	log "lifecycle_soak: submitting stopped; waiting for the jobs to end"
	# As an admin would: drained nodes resumed, jobs Slurm requeued held
	# (a launch failed across a restart) released.
	# A job whose end slurmctld lost in a kill -9 stays RUNNING (Slurm's;
	# doc/admin-guide.md): after 60 s what is left is cancelled, as an admin
	# would, and counted.
	local stuck=""
	wait_for 60 "every soak job to end" soak_settle || {
		stuck=$(squeue -h -o '%i %T %r' | tr '\n' ';')
		scancel -u root 2>/dev/null || true
		wait_for 30 "the cancelled jobs to end" soak_settle || true
	}
	# Each node's next prolog sweeps what jobs Slurm lost left (their
	# epilog never came): one small job per node.
	local sweep=()
	sweep+=("$(sbatch --parsable -o /dev/null -w n1 --mem=50 --gres=vgpu:ascend:5 --wrap true)")
	sweep+=("$(sbatch --parsable -o /dev/null -w n2 --mem=50 --gres=vgpu:dcu:5 --wrap true)")
	sweep+=("$(sbatch --parsable -o /dev/null -w n3 --mem=50 --gres=vgpu:nvidia:5 --wrap true)")
	wait_for 60 "the sweeping jobs to end" soak_settle || fail "the sweeping jobs ${sweep[*]} did not end: $(squeue -h -o '%i %T %r' | tr '\n' ' ')"
	# Final states. sacct -D lists each run of a job: one line per job is
	# the rule; more are runs after a requeue. A job Slurm lost across a
	# kill -9 (submitted or ended just before, its state not yet saved) has
	# no line or no final state: counted apart, as Slurm's (see the note of
	# restart_after_crash).
	local final lost=0 twice=0 states left="" last
	local final_re='^(COMPLETED|CANCELLED|FAILED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|DEADLINE|BOOT_FAIL)'
	sleep 5 # sacct lags the ends by a second or two
	final=$(sacct -X -n -P -D -j "$(
		IFS=,
		echo "${ids[*]:-1}"
	)" -o JobID,State 2>/dev/null)
	states=$(cut -d'|' -f2 <<<"$final" | awk 'NF { print $1 }' | sort | uniq -c | awk '{ printf "%s %s, ", $2, $1 }')
	for id in "${ids[@]}"; do
		last=$(grep "^$id|" <<<"$final" | tail -1 | cut -d'|' -f2)
		if [ -z "$last" ] || ! grep -Eq "$final_re" <<<"$last"; then
			lost=$((lost + 1))
		elif [ "$(grep -c "^$id|" <<<"$final")" -gt 1 ]; then
			twice=$((twice + 1))
		fi
	done
	# The epilogs remove the run directory of every job that ended.
	wait_for 30 "run directories of ended jobs to go" sh -c "
		for d in $NODE_RUN/*/job_*; do
			[ -e \"\$d\" ] || continue
			j=\${d##*/job_}; j=\${j%.slices}
			sacct -X -n -P -j \$j -o State 2>/dev/null | tail -1 | grep -Eq '$final_re' && exit 1
		done; exit 0" || left=$(ls -d "$NODE_RUN"/*/job_* 2>/dev/null | tr '\n' ' ')
	log "lifecycle_soak: seed $seed: submitted $submitted (refused at submit $refused), scancel $cancelled," \
		"disruptions: $(for e in "${!events[@]}"; do printf '%s %s, ' "$e" "${events[$e]}"; done)" \
		"drained nodes resumed $(cat "$RUN/soak.drains"), cancelled after the end as stuck: ${stuck:-none}; final states: ${states:-none}lost or left unfinished by Slurm $lost, run again after a requeue $twice;" \
		"$samples samples, $violations violations (log: $RUN/soak.log)"
	[ "$violations" = 0 ] || fail "$violations invariant violations, first: $(grep -m1 VIOLATION "$RUN/soak.log")"
	[ -z "$left" ] || fail "run directories of ended jobs left: $left"
	[ "$submitted" -gt 0 ] || fail "no job was submitted: $(tail -3 "$RUN/soak.log" | tr '\n' ' ')"
}
