# shellcheck shell=bash
# The sweep of what ended jobs left in a node's run directory when their
# epilog never ran (SweepSchedule, src/prolog/ended_jobs.h), with the
# default SweepInterval=60: a node asks slurmctld at most once a minute,
# about files at least that old, and at once after slurmd started. (The
# rest of the suite runs with SweepInterval=0, so that the crash tests'
# sweeps come with the next job: run-tests.)
# Sourced by run-tests.

# plant_leftover NODE ID AGE: job ID's files on NODE, as an epilog that
# never ran leaves them, modified AGE ago (touch -d). slurmctld does not
# know ID: a sweep that asks removes them.
plant_leftover() {
	local dir=$NODE_RUN/$1/job_$2
	mkdir -p "$dir"
	: >"$dir/limits"
	touch -d "$3 ago" "$dir/limits" "$dir"
}

# job_sees NODE ID...: a small job on NODE that prints, after its prolog
# and before its epilog, "kept" or "gone" for each job ID's files there.
job_sees() {
	local node=$1 id check=""
	shift
	for id; do
		check+="[ -d $NODE_RUN/$node/job_$id ] && echo kept || echo gone; "
	done
	id=$(submit -w "$node" --gres=vgpu:ascend:5 --wrap "$check")
	wait_job "$id"
	wait_clean "$id"
	tr '\n' ' ' <"$RUN/$id.out"
}

# up_for NODE: seconds since NODE's slurmd started.
up_for() { ps -o etimes= -p "$(pidfile_pid "$LAB/run/slurmd-$1.pid")" | tr -d ' '; }

# With SweepInterval=20 (the mechanism, not the minute, is tested; 60 would
# mean waits of a minute): asked just now, a prolog leaves even old files
# alone; asked 30 s ago, it removes the old ones and keeps young ones; the
# first prolog after slurmd started removes young ones too. Each job
# reports what its prolog left (the epilog asks again by then).
t_sweep_asks_once_per_interval() {
	local stamp=$NODE_RUN/n1/.sweep-asked old=3999001 young=3999002 up
	trap 'restore_slicing; rm -rf "$NODE_RUN/n1/job_3999001" "$NODE_RUN/n1/job_3999002"' EXIT
	cp "$LAB/etc/vgpu.conf" "$RUN/vgpu.conf.saved"
	sed -i '/^SweepInterval=/d' "$LAB/etc/vgpu.conf"
	echo "SweepInterval=20" >>"$LAB/etc/vgpu.conf"
	# Rate-limited, not a first question since slurmd started: that needs
	# a slurmd up for longer than the stamps set below are old.
	up=$(up_for n1)
	[ "$up" -gt 35 ] || sleep $((36 - up))
	touch "$stamp"
	plant_leftover n1 "$old" '5 minutes'
	expect "what a prolog just after a question left" "$(job_sees n1 "$old")" "kept "
	touch -d '30 seconds ago' "$stamp"
	plant_leftover n1 "$young" '1 second'
	expect "what a prolog 30 s after the last question left (old, young)" "$(job_sees n1 "$old" "$young")" "gone kept "
	# slurmd started again: its first sweep asks about every job. (The
	# stamp is old, so that only the restart makes young files count.)
	restart_slurmd n1
	touch -d '10 minutes ago' "$stamp"
	plant_leftover n1 "$young" '1 second'
	expect "what the first prolog after a slurmd restart left (young)" "$(job_sees n1 "$young")" "gone "
	log "sweep_asks_once_per_interval: slurmd up ${up}s before; rate-limited, old files only, every file after a restart"
}
