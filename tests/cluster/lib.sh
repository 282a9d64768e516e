# Shared helpers of the real-Slurm test cluster (sourced by cluster-up,
# cluster-down and run-tests; bash only, root only).
#
# The cluster is "mode (b)" of doc slurm-test-cluster.md: one slurmctld, one
# slurmdbd, one MariaDB, one munged and three slurmd (n1..n3) that all listen
# on 127.0.0.1 with different ports.  Everything it writes lives under $LAB.
# shellcheck shell=bash
# shellcheck disable=SC2034  # settings used by the scripts that source this

# Not under a mktemp dir in /tmp: the slurm user (slurmctld, slurmdbd) and the
# munge/mysql users must be able to traverse every parent directory.
LAB=${LAB:-/var/lib/slurm-vgpu-lab}
export LAB

# Slurm client commands and daemons all find their config through this.
export SLURM_CONF=$LAB/etc/slurm.conf
# Error messages (bash's "No such device or address", ...) are parsed.
export LC_ALL=C

# n1..nN, N = VGPU_LAB_NODES (default 3; bench/scheduling runs 128): node
# nK has the devices of n1, n2 or n3 (its shape, NODE_SHAPE) and listens on
# port 17000+K.
NODES=()
declare -A NODE_PORT=() NODE_SHAPE=()
for ((_k = 1; _k <= ${VGPU_LAB_NODES:-3}; _k++)); do
	NODES+=("n$_k")
	NODE_PORT[n$_k]=$((17000 + _k))
	NODE_SHAPE[n$_k]=n$(((_k - 1) % 3 + 1))
done
unset _k
# Which cgroup plugin the nodes run (VGPU_LAB_CGROUP): v1 (default:
# cgroup/v1, devices controller) or v2 (cgroup/v2 on the cgroup2 mount,
# devices fenced by eBPF; cgroup-v2-lab.md). With v2 on Slurm 26.05 and
# later, VGPU_LAB_CGROUP_ID_PATHS=yes names job cgroups job_<id> instead of
# by SLUID (cgroup.conf CgroupJobIdPaths).
LAB_CGROUP=${VGPU_LAB_CGROUP:-v1}
case $LAB_CGROUP in v1 | v2) ;; *) echo "VGPU_LAB_CGROUP=$LAB_CGROUP: v1 or v2" >&2; exit 2 ;; esac
LAB_CGROUP_ID_PATHS=${VGPU_LAB_CGROUP_ID_PATHS:-no}
# The cgroup2 mount ("" when there is none).
CGROUP2_MOUNT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CTLD_PORT=6817
DBD_PORT=6819
# Not 3306: a MariaDB of the host may already use it.
MYSQL_PORT=13306
MUNGE_SOCKET=$LAB/munge/munge.socket
MYSQL_SOCKET=$LAB/mysql/mysqld.sock

# The Slurm the cluster runs: Debian's packages, or, with VGPU_SLURM_PREFIX,
# a release built from source into that prefix (scripts/build-slurm), whose
# commands then come first on PATH.
SLURM_PREFIX=${VGPU_SLURM_PREFIX:-}
if [ -n "$SLURM_PREFIX" ]; then
	SLURM_SBIN=$SLURM_PREFIX/sbin
	SLURM_PLUGIN_DIR=$SLURM_PREFIX/lib/slurm
	case ":$PATH:" in
	*":$SLURM_PREFIX/bin:"*) ;;
	*) PATH=$SLURM_PREFIX/bin:$SLURM_PREFIX/sbin:$PATH ;;
	esac
	export PATH
else
	SLURM_SBIN=/usr/sbin
	SLURM_PLUGIN_DIR=/usr/lib/x86_64-linux-gnu/slurm-wlm
fi
# slurm_release: the lab Slurm's release, "22.05" .. "26.05".
slurm_release() { "$SLURM_SBIN/slurmd" -V | sed -n 's/^slurm[-a-z]* \([0-9]*\.[0-9]*\).*/\1/p'; }

# Where the slurm-vgpu under test keeps its parts. VGPU_PREFIX is a `make
# install` prefix (plugins and libvgpu.so in lib/slurm-vgpu, kept usage in
# var/lib/slurm-vgpu) or /usr, where the packages (debian/,
# slurm-vgpu.spec) put them: the plugins in Slurm's PluginDir, libvgpu.so
# in LIBDIR/slurm-vgpu, kept usage in /var/lib/slurm-vgpu.
#   VGPU_PLUGIN_SRC    the directory holding gres_vgpu.so ("": none)
#   VGPU_IN_SLURM_DIR  1 when that is a Slurm PluginDir (nothing to add)
#   VGPU_LIBVGPU VGPU_BINDIR VGPU_SBINDIR VGPU_CHIPS_DIR VGPU_EXAMPLES
#   VGPU_STATE_DIR
vgpu_layout() {
	local p=${VGPU_PREFIX:-} d
	VGPU_PLUGIN_SRC= VGPU_IN_SLURM_DIR=0 VGPU_LIBVGPU=
	VGPU_BINDIR=$p/bin VGPU_SBINDIR=$p/sbin
	VGPU_CHIPS_DIR=$p/share/slurm-vgpu/chips.d
	VGPU_EXAMPLES=$p/share/doc/slurm-vgpu/examples
	VGPU_STATE_DIR=$p/var/lib/slurm-vgpu
	[ "$p" != /usr ] || VGPU_STATE_DIR=/var/lib/slurm-vgpu
	[ -n "$p" ] || return 0
	for d in "$p/lib/slurm-vgpu" "$p"/lib/*/slurm-wlm "$p/lib64/slurm" "$p/lib/slurm"; do
		[ -f "$d/gres_vgpu.so" ] || continue
		VGPU_PLUGIN_SRC=$d
		[[ $d == */slurm-vgpu ]] || VGPU_IN_SLURM_DIR=1
		break
	done
	for d in "$p/lib/slurm-vgpu" "$p"/lib/*/slurm-vgpu "$p/lib64/slurm-vgpu"; do
		[ -f "$d/libvgpu.so" ] || continue
		VGPU_LIBVGPU=$d/libvgpu.so
		break
	done
}
vgpu_layout

# Nodes whose slurmd (and so every prolog and job process it starts) sees
# $LAB/etc/ld.so.preload as /etc/ld.so.preload, through a mount namespace of
# its own: the system-wide injection mode of libvgpu.so, confined to them.
# The other nodes use the task prolog's LD_PRELOAD.
PRELOAD_NODES=(n2)

# ---------------------------------------------------------------- logging

# Seconds (float) since the epoch; bash 5's EPOCHREALTIME avoids a fork.
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }

T0=${T0:-$(now)}
export T0

# elapsed [START] -> seconds since START (default: script start), 2 decimals.
elapsed() { awk -v a="${1:-$T0}" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# log MSG...: "[t  1.23] MSG" on stderr, so stdout stays parseable.
log() { printf '[t %6s] %s\n' "$(elapsed "$T0")" "$*" >&2; }

die() { log "ERROR: $*"; exit 1; }

require_root() { [ "$(id -u)" = 0 ] || die "must run as root"; }

# ---------------------------------------------------------------- waiting

# wait_for TIMEOUT_S DESCRIPTION CMD... : run CMD every 0.1 s until it
# succeeds; fail (return 1, with a log line) after TIMEOUT_S seconds.
wait_for() {
	local timeout=$1 what=$2
	shift 2
	local start
	start=$(now)
	while :; do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		if awk -v s="$start" -v n="$(now)" -v t="$timeout" 'BEGIN { exit !(n - s > t) }'; then
			log "timeout after ${timeout}s waiting for: $what"
			return 1
		fi
		sleep 0.1
	done
}

# tcp_open HOST PORT: is something accepting connections there?
tcp_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# ---------------------------------------------------------------- processes

# pid_is PID COMM: PID is alive and its /proc/PID/comm is COMM.  Guards every
# kill: a pid file left behind by a crash may name a recycled pid.
# A zombie counts as gone: daemons are children of PID 1, which here may
# reap them only seconds later.
pid_is() {
	local pid=$1 comm=$2 actual stat
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	read -r actual 2>/dev/null <"/proc/$pid/comm" || return 1
	[ "$actual" = "$comm" ] || return 1
	read -r stat 2>/dev/null <"/proc/$pid/stat" || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

# release_held ID...: releases held jobs. `scontrol release` sends one RPC
# per job, and on a loaded host (CI builds the next Slurm release beside
# the suite) some time out while slurmctld writes its state: what it said
# is logged and the jobs still held are released again; fails when some
# stay held after 5 tries.
release_held() {
	local try out held=("$@")
	for ((try = 1; try <= 5; try++)); do
		out=$(scontrol release "${held[@]}" 2>&1) && return 0
		log "scontrol release (try $try of ${#held[@]} jobs): $(head -c 400 <<<"$out" | tr '\n' ' ')"
		mapfile -t held < <(squeue -h -r -t PD -j "$(IFS=,; echo "${held[*]}")" -o '%i %r' 2>/dev/null | awk '$2 ~ /^JobHeld/ { print $1 }')
		[ ${#held[@]} -gt 0 ] || return 0
		sleep 1
	done
	fail "${#held[@]} jobs still held after 5 tries of scontrol release (${held[*]:0:5}): $(head -c 300 <<<"$out" | tr '\n' ' ')"
}

# pidfile_pid FILE: the pid written in FILE (empty if none). Its first
# line only: slurmctld 23.11+ rewrites its pid file in place after a
# reconfigure (update_pidfile: rewind, no truncation), so a pid shorter
# than the last one (pid_max 32768 wraps often in the lab) leaves the old
# pid's tail on a second line: "5597\n4\n".
pidfile_pid() {
	local line=
	if [ -n "$1" ] && [ -r "$1" ]; then read -r line <"$1" 2>/dev/null || true; fi
	printf '%s' "${line//[^0-9]/}"
}

# lab_pids COMM: pids of processes named COMM that belong to this lab, that is
# whose command line or environment mentions $LAB/ (every daemon is started
# with SLURM_CONF=$LAB/... in its environment or a $LAB path argument), in
# this cgroup namespace: a lab run by tests/cluster/lab-host beside this
# one has its own, and its daemons' command lines may name files under
# this $LAB (scripts/test builds every Slurm release there).
# This finds our daemons even when their pid file is gone or stale.
lab_pids() {
	local comm=$1 d pid ns
	local c
	ns=$(readlink /proc/self/ns/cgroup)
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		# read, not $(cat): no fork per process
		c=
		read -r c 2>/dev/null <"$d/comm" || continue
		[ "$c" = "$comm" ] || continue
		pid_is "$pid" "$comm" || continue
		[ "$(readlink "$d/ns/cgroup" 2>/dev/null)" = "$ns" ] || continue
		if tr '\0' '\n' 2>/dev/null <"$d/cmdline" | grep -qF "$LAB/" ||
			tr '\0' '\n' 2>/dev/null <"$d/environ" | grep -qF "SLURM_CONF=$LAB/"; then
			echo "$pid"
		fi
	done
}

# stop_pid PID COMM [TIMEOUT_S]: SIGTERM, wait, then SIGKILL; only if PID is
# still COMM.  Returns 0 once it is gone.
stop_pid() {
	local pid=$1 comm=$2 timeout=${3:-10}
	pid_is "$pid" "$comm" || return 0
	kill -TERM "$pid" 2>/dev/null || true
	if ! wait_for "$timeout" "$comm ($pid) to exit" eval "! pid_is $pid $comm"; then
		log "sending SIGKILL to $comm ($pid)"
		kill -KILL "$pid" 2>/dev/null || true
		wait_for 5 "$comm ($pid) to die" eval "! pid_is $pid $comm" || return 1
	fi
	return 0
}

# stop_daemon COMM PIDFILE [TIMEOUT_S]: stop the lab's COMM daemons, the one
# in PIDFILE (may be "") and any other found by lab_pids; remove PIDFILE.
stop_daemon() {
	local comm=$1 pidfile=$2 timeout=${3:-10} pid pids
	pids="$(pidfile_pid "$pidfile") $(lab_pids "$comm")"
	# shellcheck disable=SC2086  # split the pid list
	for pid in $(printf '%s\n' $pids | sort -u); do
		if pid_is "$pid" "$comm"; then
			log "stopping $comm (pid $pid)"
			stop_pid "$pid" "$comm" "$timeout" || log "could not stop $comm ($pid)"
		fi
	done
	[ -z "$pidfile" ] || rm -f "$pidfile"
}

# kill9_daemon COMM PIDFILE: SIGKILL the lab's COMM daemons (crash simulation).
kill9_daemon() {
	local comm=$1 pidfile=$2 pid
	# shellcheck disable=SC2046  # split the pid list
	for pid in $(printf '%s\n' "$(pidfile_pid "$pidfile")" $(lab_pids "$comm") | sort -u); do
		if pid_is "$pid" "$comm"; then kill -KILL "$pid" 2>/dev/null || true; fi
	done
}

# daemon_running COMM PIDFILE: the pid file names a live COMM.
daemon_running() { pid_is "$(pidfile_pid "$2")" "$1"; }

# ---------------------------------------------------------------- accounting

mysql_cmd() { mariadb --no-defaults -S "$MYSQL_SOCKET" -u root "$@"; }

# launch_mariadb: start mariadbd on the lab datadir; wait until it answers.
# Returns 1 when it dies or does not answer within 60 s (InnoDB crash
# recovery after a kill -9 is included in that time).
launch_mariadb() {
	rm -f "$MYSQL_SOCKET" "$LAB/mysql/mysqld.pid"
	setsid /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$LAB/mysql/data" \
		--socket="$MYSQL_SOCKET" --pid-file="$LAB/mysql/mysqld.pid" \
		--bind-address=127.0.0.1 --port="$MYSQL_PORT" --skip-name-resolve \
		--innodb-buffer-pool-size=256M --innodb-lock-wait-timeout=900 \
		--log-error="$LAB/mysql/mariadb.err" </dev/null >/dev/null 2>&1 &
	local pid=$! start
	start=$(now)
	while ! mysql_cmd -e 'SELECT 1' >/dev/null 2>&1; do
		if ! kill -0 "$pid" 2>/dev/null; then
			log "mariadbd exited: $(tail -3 "$LAB/mysql/mariadb.err" 2>/dev/null | tr '\n' ' ')"
			return 1
		fi
		if [ "$(elapsed "$start" | cut -d. -f1)" -ge 60 ]; then
			log "mariadbd does not answer after 60 s"
			return 1
		fi
		sleep 0.1
	done
}

# launch_slurmdbd: start slurmdbd; 1 when it does not listen within 30 s.
launch_slurmdbd() {
	"$SLURM_SBIN/slurmdbd"
	wait_for 30 "slurmdbd on port $DBD_PORT" tcp_open 127.0.0.1 "$DBD_PORT"
}

# ---------------------------------------------------------------- cgroups

# The multiple-slurmd build of Slurm prefixes its cgroup trees with
# /slurm_<nodename> (cgroup v1).
lab_cgroup_dirs() {
	local c d
	# Every slurm_nK, not only those of NODES: a larger lab may have run.
	for c in /sys/fs/cgroup/*/; do
		for d in "${c}"slurm_n[0-9]*; do
			[ -d "$d" ] && echo "$d"
		done
	done
	# cgroup/v2: system.slice/<node>_slurmstepd.scope (slurmd itself, its
	# steps and jobs).
	if [ -n "$CGROUP2_MOUNT" ]; then
		for d in "$CGROUP2_MOUNT"/system.slice/n[0-9]*_slurmstepd.scope; do
			[ -d "$d" ] && echo "$d"
		done
	fi
	return 0
}

# kill_cgroup_procs: SIGKILL every process left in the lab's job cgroups
# (jobs and slurmstepd of a slurmd that was killed; they would otherwise keep
# the cgroups busy and the job's devices allocated).
kill_cgroup_procs() {
	local dir f pid
	for dir in $(lab_cgroup_dirs); do
		while IFS= read -r f; do
			while IFS= read -r pid; do
				if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
			done <"$f"
		done < <(find "$dir" -name cgroup.procs 2>/dev/null)
	done
}

# remove_cgroup_trees: rmdir the (now empty) slurm_<node> trees, deepest first.
remove_cgroup_trees() {
	local dir
	for dir in $(lab_cgroup_dirs); do
		find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
}

# ---------------------------------------------------------------- slurm helpers

# node_states: "n1 idle" lines.
node_states() { sinfo -h -N -o '%N %t' 2>/dev/null | sort -u; }

# all_nodes_usable: every lab node is idle/mix/alloc (not down/drain/unk).
all_nodes_usable() {
	local out n
	out=$(node_states) || return 1
	for n in "${NODES[@]}"; do
		grep -Eq "^$n (idle|mix|alloc)\$" <<<"$out" || return 1
	done
}

# resume_drained: resumes every node Slurm holds drained, as an admin
# would; prints each with its reason. (Resuming one that is not drained is
# an error, "Invalid node state specified".)
resume_drained() {
	local n state reason
	while read -r n state; do
		[[ $state == drain* || $state == drng* ]] || continue
		reason=$(sinfo -h -n "$n" -o %E)
		scontrol update nodename="$n" state=resume 2>/dev/null || true
		echo "$n drained ($reason)"
	done < <(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u) # one line per partition
}

# start_slurmctld_again: starts slurmctld after it died, with the lab's
# state, and waits until it answers. Prints nothing, or why it needed -i:
# 26.05 refuses to start when a state file it expects is missing (killed
# before it first saved it), and an admin would then start it with -i.
# 1 when it does not answer even then. (A clean restart never needs -i:
# restart_slurmctld does not use this.)
# -i only once the first one has exited: a second slurmctld started beside
# a slow first one (a loaded host) kills it or, before it wrote its pid
# file, runs beside it, truncates the pid file and leaves the lab with no
# slurmctld the tests can name.
start_slurmctld_again() {
	"$SLURM_SBIN/slurmctld"
	wait_for 60 "slurmctld to answer or exit" slurmctld_answers_or_exited || return 1
	slurmctld_answers && return 0
	local why
	why=$(grep ' fatal: ' "$LAB/log/slurmctld.log" | tail -1)
	"$SLURM_SBIN/slurmctld" -i
	wait_for 60 "slurmctld -i" slurmctld_answers || return 1
	echo "it would not start (${why#*] }) until started with -i"
}
slurmctld_answers() { scontrol ping 2>/dev/null | grep -q UP; }
# True when slurmctld answers, or when no slurmctld of the lab has run for
# a second (the daemon forks twice on its way into the background).
slurmctld_answers_or_exited() {
	slurmctld_answers && return 0
	[ -z "$(lab_pids slurmctld)" ] || return 1
	sleep 1
	[ -z "$(lab_pids slurmctld)" ] && ! slurmctld_answers
}

# crash_slurmctld: kill -9 slurmctld and start it again; prints what it
# did. 1 when it does not answer again.
crash_slurmctld() {
	local how
	kill9_daemon slurmctld "$LAB/run/slurmctld.pid"
	sleep 0.5
	how=$(start_slurmctld_again) || return 1
	if [ -n "$how" ]; then
		echo "killed slurmctld (-9); $how"
	else
		echo "killed slurmctld (-9) and started it"
	fi
}

# ---------------------------------------------------------------- configuration

# Devices of the simulated nodes: "node model gres_type file major:minor".
# The major 240 has no driver, so open() of an allowed node fails with ENXIO
# and of a node the devices cgroup denies with EPERM (doc section 5).  The
# devices controller works on numbers, so every file has its own minor.
device_table() {
	local i n shape base
	for n in "${NODES[@]}"; do
		shape=${NODE_SHAPE[$n]}
		# n1-n3: minors 0-31; nK: 100*K + the same.
		base=0
		[ "${n#n}" -le 3 ] || base=$((100 * ${n#n}))
		case $shape in
		n1)
			for i in 0 1 2 3 4 5 6 7; do
				echo "$n ascend-910b ascend $LAB/dev/$n/davinci$i 240:$((base + i))"
			done
			;;
		n2)
			for i in 0 1 2 3; do
				echo "$n nvidia-h100 nvidia $LAB/dev/$n/nvidia$i 240:$((base + 10 + i))"
			done
			for i in 0 1 2 3; do
				echo "$n hygon-k100 dcu $LAB/dev/$n/dri/renderD$((128 + i)) 240:$((base + 20 + i))"
			done
			;;
		n3)
			for i in 0 1; do
				echo "$n nvidia-a100-80g nvidia $LAB/dev/$n/nvidia$i 240:$((base + 30 + i))"
			done
			;;
		esac
	done
}

# node_gres NODE [NAME]: the slurm.conf Gres= of NODE, NAME (default vgpu)
# counted in shares of 100 per device; NAME=gpu: whole devices.
node_gres() {
	local unit=100
	[ "${2:-vgpu}" = gpu ] && unit=1
	case ${NODE_SHAPE[$1]} in
	n1) echo "${2:-vgpu}:ascend:$((8 * unit))" ;;
	n2) echo "${2:-vgpu}:nvidia:$((4 * unit)),${2:-vgpu}:dcu:$((4 * unit))" ;;
	n3) echo "${2:-vgpu}:nvidia:$((2 * unit))" ;;
	esac
}

# node_device_count NODE: how many devices NODE has.
node_device_count() {
	case ${NODE_SHAPE[$1]} in
	n1 | n2) echo 8 ;;
	n3) echo 2 ;;
	esac
}

# node_gres_conf NODE NAME [count]: NODE's gres.conf lines for GRES NAME,
# with its device files, or (count) as counts of 100 per device.
node_gres_conf() {
	local n=$1 name=$2 d=$LAB/dev/$1
	if [ "${3:-}" = count ]; then
		case ${NODE_SHAPE[$n]} in
		n1) echo "NodeName=$n Name=$name Type=ascend Count=800" ;;
		n2) printf 'NodeName=%s Name=%s Type=nvidia Count=400\nNodeName=%s Name=%s Type=dcu Count=400\n' "$n" "$name" "$n" "$name" ;;
		n3) echo "NodeName=$n Name=$name Type=nvidia Count=200" ;;
		esac
		return
	fi
	case ${NODE_SHAPE[$n]} in
	n1) echo "NodeName=$n Name=$name Type=ascend File=$d/davinci[0-7]" ;;
	n2) printf 'NodeName=%s Name=%s Type=nvidia File=%s/nvidia[0-3]\nNodeName=%s Name=%s Type=dcu File=%s/dri/renderD[128-131]\n' \
		"$n" "$name" "$d" "$n" "$name" "$d" ;;
	n3) echo "NodeName=$n Name=$name Type=nvidia File=$d/nvidia[0-1]" ;;
	esac
}

# make_device FILE MAJOR:MINOR: a character device node with that number
# (re-created when an old one has another number).
make_device() {
	local file=$1 num=$2 major minor
	major=${num%:*} minor=${num#*:}
	if [ -c "$file" ] && [ "$(stat -c '%t:%T' "$file")" = "$(printf '%x:%x' "$major" "$minor")" ]; then
		return 0
	fi
	mkdir -p "$(dirname "$file")"
	rm -f "$file"
	mknod -m 0666 "$file" c "$major" "$minor"
}

# The run directory libvgpu.so and vgpu-prolog use (compiled in: the
# configure default), and where each lab node's copy of it lives: every
# slurmd runs in a private mount namespace with $NODE_RUN/NODE bound over
# /run/slurm-vgpu, as if each node were its own machine, so that one job
# can span nodes. From this host, a node's run directory is $NODE_RUN/NODE.
VGPU_RUN=/run/slurm-vgpu
NODE_RUN=$LAB/node-run

# start_slurmd_node NODE: that node's slurmd, in a private mount namespace
# where $NODE_RUN/NODE is /run/slurm-vgpu and, on a PRELOAD_NODES node,
# $LAB/etc/ld.so.preload (written by cluster-up when the plugin is
# installed) is /etc/ld.so.preload.
start_slurmd_node() {
	local n=$1 binds
	mkdir -p "$VGPU_RUN" "$NODE_RUN/$n"
	chmod 755 "$NODE_RUN" "$NODE_RUN/$n"
	binds="mount --bind '$NODE_RUN/$n' '$VGPU_RUN'"
	if [[ " ${PRELOAD_NODES[*]} " == *" $n "* ]] && [ -s "$LAB/etc/ld.so.preload" ]; then
		# The bind needs a file to cover; an empty one changes nothing.
		[ -e /etc/ld.so.preload ] || { : >/etc/ld.so.preload && touch "$LAB/.made-ld.so.preload"; }
		binds="$binds && mount --bind '$LAB/etc/ld.so.preload' /etc/ld.so.preload"
	fi
	local preload=
	if [ "$LAB_CGROUP" = v2 ]; then
		# 22.05 makes the scope but not system.slice above it.
		mkdir -p "$CGROUP2_MOUNT/system.slice"
		# A hybrid host: slurmd sees it unified (tests/stubs/unified_host.c).
		[ "$(head -c 1 /proc/self/cgroup)" = 0 ] || preload="LD_PRELOAD=$LAB/stubs/libunified_host.so"
	fi
	unshare --mount --propagation private sh -c "$binds && exec env $preload '$SLURM_SBIN/slurmd' -N '$n'"
}

# lab_uuid NODE INDEX: the simulated device's UUID, NVIDIA-style (the stub
# CUDA driver reports it back as cuDeviceGetUuid's 16 bytes).
lab_uuid() { printf 'GPU-00000000-0000-0000-%04d-%012d' "${1#n}" "$2"; }
# lab_uuid_to VAR NODE INDEX: the same into VAR, without a subshell.
lab_uuid_to() { printf -v "$1" 'GPU-00000000-0000-0000-%04d-%012d' "${2#n}" "$3"; }

# write_inventory FILE "model file index [cpus]" ... : the plugin's simulated
# inventory (format: src/devices/discovery.h, MakeInventoryBackend); cpus:
# the machine CPU ids local to the device.
write_inventory() {
	local out=$1 first=1 model file index cpus bus=0 node uuid
	node=${out##*inventory-}
	node=${node%.json}
	shift
	{
		echo '{"devices": ['
		for line in "$@"; do
			read -r model file index cpus <<<"$line"
			bus=$((bus + 1))
			lab_uuid_to uuid "$node" "$index"
			[ $first = 1 ] || echo ','
			first=0
			printf '  {"model": "%s", "index": %d, "file": "%s", "uuid": "%s", "pci_bus_id": "0000:%02x:00.0"%s}' \
				"$model" "$index" "$file" "$uuid" "$((0xc0 + bus))" "${cpus:+, \"cpus\": \"$cpus\"}"
		done
		echo
		echo ']}'
	} >"$out"
}

# vgpu_plugins_at: the directory Slurm loads our plugins from ("": no
# plugin): the lab's copy (VGPU_PLUGIN_DIR, added to PluginDir), or Slurm's
# own PluginDir where a package put them.
vgpu_plugins_at() {
	if [ -n "${VGPU_PLUGIN_DIR:-}" ]; then
		echo "$VGPU_PLUGIN_DIR"
	elif [ "${PLUGIN_MODE:-0}" = 1 ] && [ "$VGPU_IN_SLURM_DIR" = 1 ]; then
		echo "$VGPU_PLUGIN_SRC"
	fi
}

# write_slurm_conf DIR ACCT NODE_LINES: slurm.conf (+ cgroup.conf) for the lab.
#   ACCT=1: the cluster's own: accounting through slurmdbd and the
#   Prolog/Epilog hooks; 0: neither (throw-away slurmd -G dirs).
#   VGPU_PLUGIN_DIR (global, may be empty) is appended to PluginDir;
#   LAB_GRES_TYPES (global, default vgpu) is GresTypes.
# Daemon file paths live in DIR/.. so a throw-away dir holds its own.
write_slurm_conf() {
	local dir=$1 acct=$2 nodes=$3 base at
	base=$(dirname "$dir")
	at=$(vgpu_plugins_at)
	{
		cat <<-CONF
		# Generated by tests/cluster (slurm-vgpu test cluster); do not edit.
		ClusterName=lab
		SlurmctldHost=localhost
		SlurmUser=slurm
		AuthType=auth/munge
		AuthInfo=socket=$MUNGE_SOCKET
		CredType=cred/munge
		$(comm_params NoInAddrAny,NoCtldInAddrAny)
		SlurmctldPort=$CTLD_PORT
		StateSaveLocation=$base/state
		SlurmdSpoolDir=$base/spool/%n
		SlurmctldPidFile=$base/run/slurmctld.pid
		SlurmdPidFile=$base/run/slurmd-%n.pid
		SlurmctldLogFile=$base/log/slurmctld.log
		SlurmdLogFile=$base/log/slurmd-%n.log
		SlurmctldDebug=info
		SlurmdDebug=info
		PluginDir=$SLURM_PLUGIN_DIR${VGPU_PLUGIN_DIR:+:$VGPU_PLUGIN_DIR}
		ProctrackType=proctrack/cgroup
		TaskPlugin=task/cgroup,task/affinity
		SelectType=${VGPU_SELECT:-$([ -f "${at:-/nonexistent}/select_cons_tres_pool.so" ] && echo select/cons_tres_pool || echo select/cons_tres)}
		SelectTypeParameters=CR_Core_Memory
		# Without it a job gets all of the node's memory and jobs serialize.
		DefMemPerCPU=500
		SchedulerType=sched/backfill
		# Schedule right after each submission and retry often: tests poll.
		SchedulerParameters=batch_sched_delay=0,sched_interval=2,bf_interval=2
		MpiDefault=none
		MailProg=/bin/true
		ReturnToService=2
		# scancel: SIGKILL 2 s after SIGTERM (default 30 s).
		KillWait=2
		GresTypes=${LAB_GRES_TYPES:-vgpu}
		JobAcctGatherType=jobacct_gather/linux
		CONF
		if [ "$acct" = 1 ]; then
			cat <<-CONF
			AccountingStorageType=accounting_storage/slurmdbd
			AccountingStorageHost=localhost
			AccountingStoragePort=$DBD_PORT
			# Messages to slurmdbd take their munge socket from here, not AuthInfo.
			AccountingStoragePass=socket=$MUNGE_SOCKET
			AccountingStorageTRES=gres/vgpu,gres/vgpu:ascend,gres/vgpu:nvidia,gres/vgpu:dcu
			# Record the environment the plugin gives Prolog and Epilog. With
			# PrologFlags=Alloc slurmctld builds that environment (the plugin's
			# epilog_build_env), as the vgpu prolog will need.
			$([ -f "${at:-/nonexistent}/job_submit_vgpu.so" ] && echo JobSubmitPlugins=vgpu)
			Prolog=$LAB/bin/hook
			Epilog=$LAB/bin/hook
			# Contain: an extern step per job on each node, into which
			# pam_slurm_adopt moves ssh sessions (t_adopted_session_held).
			PrologFlags=Alloc,Contain
			$([ -x "${VGPU_SBIN:-/nonexistent}/vgpu-taskprolog" ] && echo "TaskProlog=$VGPU_SBIN/vgpu-taskprolog")
			CONF
		fi
		cat <<-CONF
		NodeName=DEFAULT CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=4000 State=UNKNOWN
		$nodes
		PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
		# Jobs share cores here, so that many vgpu jobs can run on one
		# 2-CPU test node at once (device packing tests).
		PartitionName=share Nodes=ALL OverSubscribe=FORCE:16 MaxTime=INFINITE State=UP
		CONF
	} >"$dir/slurm.conf"
	# Slurm reads plugstack.conf next to slurm.conf; DIR is moved to $LAB/etc.
	if [ "$acct" = 1 ] && [ -f "${at:-/nonexistent}/spank_vgpu.so" ]; then
		echo "required $at/spank_vgpu.so vgpu_conf=$LAB/etc/vgpu.conf" >"$dir/plugstack.conf"
	fi
	if [ "$LAB_CGROUP" = v2 ]; then
		# On a hybrid host cpu, cpuset and memory stay with the v1
		# hierarchies: only devices can be constrained (cgroup-v2-lab.md).
		cat >"$dir/cgroup.conf" <<-CONF
		CgroupPlugin=cgroup/v2
		CgroupMountpoint=$CGROUP2_MOUNT
		IgnoreSystemd=yes
		ConstrainDevices=yes
		ConstrainCores=no
		ConstrainRAMSpace=no
		ConstrainSwapSpace=no
		CONF
		[ "$(slurm_release)" \< 26.05 ] || echo "CgroupJobIdPaths=$LAB_CGROUP_ID_PATHS" >>"$dir/cgroup.conf"
		return 0
	fi
	cat >"$dir/cgroup.conf" <<-CONF
	CgroupPlugin=cgroup/v1
	CgroupMountpoint=/sys/fs/cgroup
	ConstrainDevices=yes
	ConstrainCores=yes
	ConstrainRAMSpace=yes
	CONF
}

# comm_params VALUE: "CommunicationParameters=VALUE" when the host name
# resolves to a loopback address: NoInAddrAny binds the daemons to that
# address instead of 0.0.0.0.  Elsewhere it would bind them to an address the
# nodes' NodeAddr=127.0.0.1 does not reach, so they stay on 0.0.0.0.
comm_params() {
	local addr
	addr=$(getent ahostsv4 "$(hostname)" 2>/dev/null | awk 'NR == 1 { print $1 }')
	if [[ $addr == 127.* ]]; then
		echo "# Bind to $addr (the host name's address), not 0.0.0.0."
		echo "CommunicationParameters=$1"
	else
		echo "# $(hostname) resolves to '${addr:-nothing}', not loopback: daemons bind 0.0.0.0."
	fi
}

# node_line NODE GRES: the slurm.conf line of one simulated node. n1 has two
# sockets of one core, since its devices are local to CPU 0 or CPU 1
# (t_local_devices), and Slurm 24.11 on refuses a device whose Cores= covers
# part of a socket. Features name the node's chip models, as vgpuctl
# discover prints them: slurmctld learns from them which devices
# HardwareSlicing slices (t_mig_at_capacity).
node_line() {
	local layout= features
	[ "${NODE_SHAPE[$1]}" = n1 ] && layout=" SocketsPerBoard=2 CoresPerSocket=1"
	features=$(device_table | awk -v n="$1" '$1 == n { print $2 }' | sort -u | paste -sd,)
	echo "NodeName=$1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${NODE_PORT[$1]}$layout Features=$features Gres=$2"
}

# write_vgpu_conf DIR CATALOG_DIR INVENTORY_PATTERN [SHARES]
# (SweepInterval=$VGPU_LAB_SWEEP_INTERVAL when that is set.)
write_vgpu_conf() {
	cat >"$1/vgpu.conf" <<-CONF
	SharesPerDevice=${4:-100}
	ChipCatalogDir=$2
	Inventory=$3
	CONF
	[ -z "${VGPU_LAB_SWEEP_INTERVAL:-}" ] || echo "SweepInterval=$VGPU_LAB_SWEEP_INTERVAL" >>"$1/vgpu.conf"
}

# catalog_get MODEL KEY: a top-level number/string of a catalog file.
catalog_get() {
	local file=$CATALOG_DIR/$1.json
	[ -r "$file" ] || { echo "catalog file $file missing" >&2; return 1; }
	sed -n "s/^ *\"$2\": *\"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\} *\$/\1/p" "$file" | head -1
}
