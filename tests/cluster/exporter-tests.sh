# shellcheck shell=bash
# vgpu-exporter on the lab cluster, run as the systemd unit runs it: an
# unprivileged user with CAP_DAC_READ_SEARCH only (the jobs' usage regions
# are their users' and mode 0600). Its metrics while a job runs on n3 and
# after it ended, and its /status page.
# Sourced by run-tests.

# metric FILE NAME{LABELS}: the value of the sample with exactly that name
# and those labels ("" when there is none).
metric() { awk -v k="$2" '$1 == k { print $2; exit }' "$1"; }

# exporter_fetch PORT PATH OUT: the page at 127.0.0.1:PORT/PATH into OUT.
exporter_fetch() {
	python3 -c 'import sys, urllib.request; open(sys.argv[2], "wb").write(urllib.request.urlopen(sys.argv[1], timeout=20).read())' \
		"http://127.0.0.1:$1$2" "$3" 2>>"$RUN/log"
}

# submit_holding_job: a 20-share nvidia job on n3 that holds 1 GiB, has a
# 30 GiB allocation refused (its quota is 16 GiB), runs 1 s of kernels and
# then holds until cancelled; prints its id.
submit_holding_job() {
	submit -w n3 --gres=vgpu:nvidia:20 --wrap "$LAB/bin/cudajob init alloc $GIB alloc $((30 * GIB)) work 1 1000 kernel hold"
}

# wait_holding ID: until the job above holds, its files in n3's run
# directory as this host sees it.
wait_holding() {
	wait_for "$JOB_TIMEOUT" "job $1 to hold its memory" grep -q '^hold' "$RUN/$1.out" ||
		fail "job $1 did not get to hold: state $(job_state "$1"), output $(tr '\n' '|' <"$RUN/$1.out" 2>/dev/null)"
	[ -f "$NODE_RUN/n3/job_$1/limits" ] ||
		fail "job $1 holds but has no files under $NODE_RUN/n3: n3's slurmd sees another $VGPU_RUN (its bind of $NODE_RUN/n3 is gone)"
}

# start_exporter NODE: vgpu-exporter on NODE's run directory, as nobody with
# CAP_DAC_READ_SEARCH only, on a free loopback port, collecting every
# second; sets EXPORTER_PID and EXPORTER_PORT. Log: $RUN/exporter.log.
start_exporter() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=+dac_read_search --ambient-caps=+dac_read_search \
		"$VGPU_SBINDIR/vgpu-exporter" --listen 127.0.0.1:0 --conf "$LAB/etc/slurm.conf" --run-dir "$NODE_RUN/$1" \
		--node-name "$1" --interval 1 2>"$RUN/exporter.log" &
	EXPORTER_PID=$!
	wait_for 20 "vgpu-exporter to listen" grep -q "listening on" "$RUN/exporter.log" ||
		fail "vgpu-exporter did not start: $(cat "$RUN/exporter.log")"
	EXPORTER_PORT=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$RUN/exporter.log")
}

t_exporter_serves_metrics() {
	local exporter=$VGPU_SBINDIR/vgpu-exporter id pid port out m dev job n3 busy
	[ -x "$exporter" ] ||
		fail "$exporter is not installed: configure found no prometheus-cpp or civetweb (scripts/install-deps installs prometheus-cpp-dev and libcivetweb-dev)"
	out=$("$exporter" --listen 127.0.0.1:0 2>&1) && fail "vgpu-exporter ran as root without --allow-root"
	[[ $out == *"refusing to run as root"* ]] || fail "vgpu-exporter as root said: $out"

	id=$(submit_holding_job)
	start_exporter n3
	pid=$EXPORTER_PID port=$EXPORTER_PORT
	# shellcheck disable=SC2064  # the ids now: the trap runs after the locals are gone
	trap "kill $pid 2>/dev/null; scancel $id 2>/dev/null || true" EXIT
	wait_holding "$id"
	expect "job output" "$(tr '\n' '|' <"$RUN/$id.out" | sed 's/work [^|]*/work/')" "init 0|alloc 0|alloc 2|work|hold|"

	sleep 1.1 # past the collection interval of the exporter's first answers
	m=$RUN/metrics.running
	exporter_fetch "$port" /metrics "$m" || fail "GET /metrics failed: $(tail -3 "$RUN/exporter.log")"
	# The device label is the device's index on the node (the limits file's node=).
	dev=$(sed -n 's/^device 0 .* node=\([0-9]*\).*/\1/p' "$NODE_RUN/n3/job_$id/limits")
	job="{node=\"n3\",jobid=\"$id\",user=\"root\",device=\"${dev:-0}\",vendor=\"nvidia\"}"
	expect "slurm_up" "$(metric "$m" slurm_vgpu_exporter_slurm_up)" 1
	expect "usage read errors" "$(metric "$m" slurm_vgpu_exporter_usage_read_errors)" 0
	expect "job shares $job" "$(metric "$m" "slurm_vgpu_job_device_shares$job")" 20
	expect "job memory used" "$(metric "$m" "slurm_vgpu_job_device_memory_used_bytes$job")" "$GIB"
	expect "job memory quota" "$(metric "$m" "slurm_vgpu_job_device_memory_quota_bytes$job")" \
		$(($(catalog_get nvidia-a100-80g memory_bytes) * 20 / 100))
	expect "job refusals" "$(metric "$m" "slurm_vgpu_job_oom_refusals_total$job")" 1
	expect "n3 refusals" "$(metric "$m" 'slurm_vgpu_node_oom_refusals_total{node="n3"}')" 1
	busy=$(metric "$m" 'slurm_vgpu_node_device_busy_seconds_total{node="n3"}')
	awk -v b="$busy" 'BEGIN { exit !(b > 0 && b <= 1) }' || fail "n3 device time '$busy' s, expected in (0, 1] (1 s of kernels paced to 20 %)"
	# The pool part: n3's device with the job's 20 shares, the type totals.
	n3=$(awk '$1 ~ /^slurm_vgpu_device_allocated_shares\{node="n3",/ { s += $2 } END { print s + 0 }' "$m")
	expect "n3's allocated shares" "$n3" 20
	[ "$(metric "$m" 'slurm_vgpu_type_allocated_shares{type="nvidia"}')" -ge 20 ] ||
		fail "nvidia allocated shares: $(grep 'type_allocated_shares' "$m")"

	exporter_fetch "$port" /status "$RUN/status.html" || fail "GET /status failed"
	grep -q '<tr data-type="nvidia">' "$RUN/status.html" || fail "/status has no nvidia row: $(head -c 600 "$RUN/status.html")"
	grep -q '<svg' "$RUN/status.html" || fail "/status has no map"

	# After the job: its series are gone, the node's counters keep its part.
	scancel "$id"
	wait_clean "$id"
	sleep 1.1
	m=$RUN/metrics.ended
	exporter_fetch "$port" /metrics "$m" || fail "GET /metrics after the job failed"
	[ -z "$(metric "$m" "slurm_vgpu_job_device_shares$job")" ] || fail "job $id still has series after it ended"
	expect "n3 refusals after the job" "$(metric "$m" 'slurm_vgpu_node_oom_refusals_total{node="n3"}')" 1
	expect "n3 device time after the job" "$(metric "$m" 'slurm_vgpu_node_device_busy_seconds_total{node="n3"}')" "$busy"
	expect "n3 memory used after the job" "$(metric "$m" 'slurm_vgpu_node_device_memory_used_bytes{node="n3"}')" 0
	log "exporter_serves_metrics: $(grep -c '^slurm_vgpu' "$RUN/metrics.running") samples, collection $(metric "$m" slurm_vgpu_exporter_collect_seconds) s"
}

# A real Prometheus (Debian's) scrapes the exporter every second with the
# shipped alert rules loaded: its API shows the job's series while it runs
# (the Slurm job id as jobid; job stays the scrape job's), every query of
# the shipped Grafana dashboard has data, the rules evaluate; after the job
# its series go stale and n3's counter keeps the refusal.
t_prometheus_scrapes_exporter() {
	local prom=/usr/bin/prometheus q=$here/prom_query.py examples=$VGPU_EXAMPLES
	local id pid ppid port url dir=$RUN/prometheus out
	[ -x "$prom" ] || fail "$prom is not installed (scripts/install-deps installs Debian's prometheus)"
	[ -x "$VGPU_SBINDIR/vgpu-exporter" ] || fail "vgpu-exporter is not installed"
	id=$(submit_holding_job)
	start_exporter n3
	pid=$EXPORTER_PID
	rm -rf "$dir"
	mkdir -p "$dir"
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	url=http://127.0.0.1:$port
	cat >"$dir/prometheus.yml" <<-EOF
	global:
	  scrape_interval: 1s
	  evaluation_interval: 1s
	rule_files: ["$examples/prometheus/vgpu-rules.yml"]
	scrape_configs:
	  - job_name: vgpu
	    static_configs: [{targets: ["127.0.0.1:$EXPORTER_PORT"]}]
	EOF
	"$prom" --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" --web.listen-address="127.0.0.1:$port" \
		>"$dir/log" 2>&1 &
	ppid=$!
	# shellcheck disable=SC2064  # the ids now: the trap runs after the locals are gone
	trap "kill $ppid $pid 2>/dev/null; scancel $id 2>/dev/null || true" EXIT
	wait_for 60 "prometheus to be ready" python3 -c "import urllib.request; urllib.request.urlopen('$url/-/ready', timeout=5)" ||
		fail "prometheus not ready: $(tail -5 "$dir/log")"
	wait_holding "$id"
	wait_for 30 "prometheus to have job $id" sh -c "[ \"\$('$q' value '$url' 'slurm_vgpu_job_device_shares{jobid=\"$id\"}')\" = 20 ]" ||
		fail "prometheus has no slurm_vgpu_job_device_shares of job $id: $("$q" value "$url" "slurm_vgpu_job_device_shares")"
	expect "up" "$("$q" value "$url" 'up{job="vgpu"}')" 1
	out=$("$q" labels "$url" "slurm_vgpu_job_oom_refusals_total{jobid=\"$id\"}")
	[[ $out == *'"job": "vgpu"'* && $out == *"\"jobid\": \"$id\""* && $out != *exported_job* ]] ||
		fail "labels of the job's refusal counter: $out"
	expect "refusals" "$("$q" value "$url" "slurm_vgpu_job_oom_refusals_total{jobid=\"$id\"}")" 1
	expect "n3 memory used" "$("$q" value "$url" 'slurm_vgpu_node_device_memory_used_bytes{node="n3"}')" "$GIB"
	# Two samples at least in every range the dashboard asks about.
	sleep 2
	out=$("$q" dashboard "$url" "$examples/grafana/slurm-vgpu.json") || fail "dashboard queries: $out"
	[ -z "$out" ] || fail "dashboard queries without data: $(tr '\n' ';' <<<"$out")"
	wait_for 20 "the alert rules to evaluate" sh -c "'$q' rules '$url' | grep -qx '4 ok'" ||
		fail "alert rules: $("$q" rules "$url" | tr '\n' ';')"

	scancel "$id"
	wait_clean "$id"
	wait_for 30 "job $id's series to go stale" sh -c "[ -z \"\$('$q' value '$url' 'slurm_vgpu_job_device_shares{jobid=\"$id\"}')\" ]" ||
		fail "prometheus still has job $id's series after it ended"
	expect "n3 refusals after the job" "$("$q" value "$url" 'slurm_vgpu_node_oom_refusals_total{node="n3"}')" 1
	log "prometheus_scrapes_exporter: $("$q" value "$url" 'count({__name__=~"slurm_vgpu_.*"})') series"
}

# The /status page as Debian's headless Chromium loads it from the exporter
# (the DOM after parsing): the per-type table with a dcu job's 30 shares
# allocated, n1 drained by an admin with a vgpu reason in the list of nodes
# out of the pool, and the SVG map with every device and the job's cell.
t_status_page_in_chromium() {
	local chromium id pid dir=$RUN/chromium out n devices=0
	for n in "${NODES[@]}"; do devices=$((devices + $(node_device_count "$n"))); done
	chromium=$(command -v chromium || true)
	[ -n "$chromium" ] || fail "chromium is not installed (scripts/install-deps installs Debian's chromium)"
	[ -x "$VGPU_SBINDIR/vgpu-exporter" ] || fail "vgpu-exporter is not installed"
	id=$(submit_dump -p share --mem=50 -w n2 --gres=vgpu:dcu:30 -- sleep 120)
	# shellcheck disable=SC2064  # the ids now: the trap runs after the locals are gone
	trap "scancel $id 2>/dev/null; scontrol update nodename=n1 state=resume 2>/dev/null || true" EXIT
	scontrol update nodename=n1 state=drain reason="vgpu: chromium test"
	wait_running "$id"
	start_exporter n2
	pid=$EXPORTER_PID
	# shellcheck disable=SC2064
	trap "kill $pid 2>/dev/null; scancel $id 2>/dev/null; scontrol update nodename=n1 state=resume 2>/dev/null || true" EXIT
	rm -rf "$dir"
	mkdir -p "$dir"
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$dir/profile" \
		--dump-dom "http://127.0.0.1:$EXPORTER_PORT/status" >"$dir/dom.html" 2>"$dir/log" ||
		fail "chromium could not load /status: $(grep -v dbus "$dir/log" | tail -3)"
	out=$(python3 - "$dir/dom.html" "$devices" <<'PY'
import html.parser, sys
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.row, self.cell, self.out, self.in_out = {}, None, None, {}, None
        self.devices, self.allocated = 0, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "data-type" in a:
            self.row = a["data-type"]; self.rows[self.row] = []
        elif tag == "td" and self.row is not None:
            self.cell = ""
        elif tag == "li" and "data-node" in a:
            self.in_out = a["data-node"]; self.out[self.in_out] = ""
        if a.get("class") == "device":
            self.devices += 1
            self.allocated.append(a.get("data-allocated"))
    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.rows[self.row].append(self.cell.strip()); self.cell = None
        elif tag == "tr":
            self.row = None
        elif tag == "li":
            self.in_out = None
    def handle_data(self, data):
        if self.cell is not None: self.cell += data
        if self.in_out is not None: self.out[self.in_out] += data
p = Page()
p.feed(open(sys.argv[1]).read())
want = int(sys.argv[2])
problems = []
dcu = p.rows.get("dcu", [])
if dcu[:4] != ["dcu", "400", "30", "370"]:
    problems.append("dcu row %s, expected dcu 400 30 370" % dcu)
if "drain" not in p.out.get("n1", "") or "vgpu: chromium test" not in p.out.get("n1", ""):
    problems.append("nodes out of the pool: %s" % p.out)
if p.devices != want:
    problems.append("%d device cells in the map, expected %d" % (p.devices, want))
if "30" not in p.allocated:
    problems.append("no device cell with 30 allocated: %s" % p.allocated)
print("; ".join(problems))
PY
)
	[ -z "$out" ] || fail "/status in chromium: $out"
	log "status_page_in_chromium: $(wc -c <"$dir/dom.html") bytes of DOM"
}
